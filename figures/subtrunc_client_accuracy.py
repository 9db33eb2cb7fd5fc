"""Per-client test accuracy distributions under each selection rule (Table I setting)."""

from __future__ import annotations

import sys

import numpy as np

from figures._common import plt, run_figure
from flbounds.selection import SelectionRule
from verify.subtrunc.fairness import DATASETS, fl_runs

NAME = "subtrunc_client_accuracy"
#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("subtrunc.fl.subtrunc_below_divfl",
          "subtrunc.fl.subtrunc_below_random",
          "subtrunc.fl.maxmin_below_divfl")
RULES = (SelectionRule("random"), SelectionRule("divfl"), SelectionRule("subtrunc", lam=0.95),
         SelectionRule("unionfl", window=5), SelectionRule("poc"))
SHORT = ("Random", "DivFL", "SubTrunc", "UnionFL", "PoC")


def compute(profile: str = "quick", seed: int = 0) -> dict:
    n_seeds, n_rounds = (4, 40) if profile == "quick" else (30, 100)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    data = {}
    for source in DATASETS:
        runs = fl_runs(rng, source, RULES, n_seeds=n_seeds, n_rounds=n_rounds)
        data[f"{source}_accuracy"] = np.array([[r.accuracy for r in row] for row in runs])
    return data


def plot(data: dict):
    fig, axes = plt.subplots(1, len(DATASETS), figsize=(11, 4.4), sharey=True,
                             constrained_layout=True)
    for ax, source in zip(axes, DATASETS, strict=True):
        acc = data[f"{source}_accuracy"]  # (rules, seeds, clients)
        centred = acc - acc.mean(axis=2, keepdims=True)
        ax.boxplot([c.ravel() for c in centred], showfliers=True, whis=(5, 95))
        stds = centred.std(axis=2).mean(axis=1)
        ax.set_xticks(np.arange(1, len(SHORT) + 1),
                      [f"{name}\nstd {s:.2f}" for name, s in zip(SHORT, stds, strict=True)])
        ax.set_title(source)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel(r"accuracy $-$ run's mean (% points)")
    fig.suptitle("Per-client test accuracy minus the run's mean over clients\n"
                 "(box 25-75% with the median, "
                 f"whiskers 5-95%, {data[f'{DATASETS[0]}_accuracy'].shape[1]} seeds; "
                 "std: over clients, mean over seeds)")
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
