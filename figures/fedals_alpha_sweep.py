"""FedALS on the label-skew MLP task: test accuracy and generalization gap vs alpha.

5 clients (2 classes each, or iid), ReLU MLP 20-64-64-10, tau = 5, plain SGD; mean +- 2 SE
over seeds (quick: 3 seeds x 600 steps; full: 20 seeds x 3000 steps).
"""

from __future__ import annotations

import sys

import matplotlib.pyplot as plt
import numpy as np

from figures._common import run_figure
from verify.fedals.mlp_task import alpha_sweep

#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("fedals.v9", "fedals.table3")

ALPHAS = [1, 5, 10, 25, 100]


def compute(profile: str = "quick", seed: int = 0) -> dict:
    rng = np.random.default_rng([seed, 3])
    size = dict(n_seeds=3, n_steps=600, n_test=1000) if profile == "quick" else \
        dict(n_seeds=20, n_steps=3000, n_test=5000)
    out = {"alpha": np.array(ALPHAS)}
    for split in ("noniid", "iid"):
        res = alpha_sweep(rng, split=split, alphas=ALPHAS, **size)
        out[f"{split}_acc"] = np.array([res[a].test_acc for a in ALPHAS])
        out[f"{split}_gap"] = np.array([res[a].gap for a in ALPHAS])
    return out


def _mean_err(x):
    return x.mean(axis=1), 2 * x.std(axis=1, ddof=1) / np.sqrt(x.shape[1])


SPLITS = {"noniid": "label skew (2 classes per client)", "iid": "iid"}


def plot(data: dict):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    a = data["alpha"]
    # the two splits a little apart on the log axis, so their error bars do not hide each other
    for (split, name), style, shift in zip(SPLITS.items(), ("o-", "s--"), (0.96, 1.04),
                                           strict=True):
        for ax, key in zip(axes, ("acc", "gap"), strict=True):
            m, e = _mean_err(data[f"{split}_{key}"])
            ax.errorbar(a * shift, m, yerr=e, fmt=style, capsize=3, label=name)
    axes[0].set_ylabel("test accuracy of the averaged model")
    axes[1].set_ylabel("gap = test loss − train loss")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xticks(a, [str(v) for v in a])
        ax.set_xlabel(r"$\alpha = \tau_\phi / \tau_h$")
        ax.grid(alpha=0.3)
    axes[0].legend(loc="lower left")
    fig.suptitle(f"FedALS on the MLP task, 5 clients, $\\tau_h = 5$ (mean ± 2 SE over "
                 f"{data['noniid_acc'].shape[1]} seeds)")
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    print(*main(), sep="\n")
