"""FedALS Example 1 / Fig. 1 on the MLP: per-layer consensus distance under FedAvg, tau = 50.

Consensus distance sum_k w_k ||theta_k - theta_bar||^2 of each layer (weights + bias) just
before each averaging, per parameter, averaged over time; one point per seed.
"""

from __future__ import annotations

import sys

import matplotlib.pyplot as plt
import numpy as np

from figures._common import run_figure
from verify.fedals import mlp
from verify.fedals.mlp_task import SIZES, make_plan, make_task, run_fedals

#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("fedals.example1",)


def compute(profile: str = "quick", seed: int = 0) -> dict:
    rng = np.random.default_rng([seed, 4])
    n_seeds, n_steps = (3, 600) if profile == "quick" else (20, 3000)
    out = {}
    for split in ("noniid", "iid"):
        task = make_task(rng, n_seeds, 5, 100, 100, split)
        theta0 = np.repeat(mlp.init_params(rng, n_seeds, SIZES)[:, None, :], 5, axis=1)
        plan = make_plan(rng, n_steps, n_seeds, 5, 100, 16)
        r = run_fedals(task, theta0, plan, step=0.05, local_steps=50, alpha=1, n_steps=n_steps,
                       record_consensus=True)
        out[split] = np.array(r.consensus)          # (layers, seeds)
    return out


SPLITS = {"noniid": "label skew (2 classes per client)", "iid": "iid"}


def plot(data: dict):
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    depth = np.arange(1, data["noniid"].shape[0] + 1)
    for (split, name), style, color in zip(SPLITS.items(), ("o-", "s--"), ("C0", "C1"),
                                           strict=True):
        vals = data[split]
        ax.plot(depth, np.median(vals, axis=1), style, color=color,
                label=f"{name}: median over seeds")
        for j in range(vals.shape[1]):
            ax.plot(depth, vals[:, j], ".", alpha=0.35, color=color,
                    label="one seed" if j == 0 else None)
    ax.set_yscale("log")
    ax.set_xticks(depth, [r"layer 1 ($\phi$)", r"layer 2 ($\phi$)", r"layer 3 ($h$)"])
    ax.set_xlabel("layer of the MLP 20-64-64-10 (weights and bias)")
    ax.set_ylabel("consensus distance per parameter")
    ax.set_title(rf"FedAvg, $\tau = 50$: consensus distance by depth ({vals.shape[1]} seeds)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    print(*main(), sep="\n")
