"""Client dissimilarity vs SubTrunc's lam and vs UnionFL's window, with 95% intervals."""

from __future__ import annotations

import sys

import numpy as np

from figures._common import plt, run_figure
from flbounds.selection import SelectionRule
from verify.subtrunc.fairness import DATASETS, WINDOWS, fl_runs, upper_ci

NAME = "subtrunc_dissimilarity"
#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("subtrunc.fl.dissimilarity_falls_with_lambda",
          "subtrunc.fl.dissimilarity_falls_with_window")
LAMS = (0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.95)


def _summary(rng, source, rules, n_seeds, n_rounds, metric):
    runs = fl_runs(rng, source, rules, n_seeds=n_seeds, n_rounds=n_rounds)
    vals = np.array([[r.metrics[metric] for r in row] for row in runs])
    stats = [upper_ci(v) for v in vals]
    return np.array([s[0] for s in stats]), np.array([s[2] for s in stats])


def compute(profile: str = "quick", seed: int = 0) -> dict:
    n_seeds, n_rounds = (4, 40) if profile == "quick" else (30, 100)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    data = {"lams": np.array(LAMS), "windows": np.array(WINDOWS)}
    for source in DATASETS:
        lam_rules = [SelectionRule("divfl")] + [SelectionRule("subtrunc", lam=v)
                                                for v in LAMS[1:]]
        win_rules = [SelectionRule("unionfl", window=w) for w in WINDOWS]
        for metric in ("std", "participation_gini"):
            for tag, rules in (("lam", lam_rules), ("window", win_rules)):
                mean, half = _summary(rng, source, rules, n_seeds, n_rounds, metric)
                data[f"{source}_{tag}_{metric}_mean"] = mean
                data[f"{source}_{tag}_{metric}_ci"] = half
    return data


def plot(data: dict):
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.4), constrained_layout=True)
    lam_labels = ["0\n(DivFL)"] + [f"{v:g}" for v in data["lams"][1:]]
    panels = (("lam_std", lam_labels, r"SubTrunc: dissimilarity vs $\lambda$",
               r"$\lambda$ (SubTrunc, $b=1.1$, $\phi=\ln(1+x)$)",
               "std over clients of accuracy (%)"),
              ("window_std", [f"{w:g}" for w in data["windows"]],
               "UnionFL: dissimilarity vs window", r"window $|u_t|$ (UnionFL, $\mu=1$)",
               "std over clients of accuracy (%)"),
              ("window_participation_gini", [f"{w:g}" for w in data["windows"]],
               "UnionFL: participation vs window", r"window $|u_t|$ (UnionFL, $\mu=1$)",
               "Gini of participation counts"))
    for ax, (key, labels, title, xlabel, ylabel) in zip(axes, panels, strict=True):
        pos = np.arange(len(labels))
        for k, (source, marker) in enumerate(zip(DATASETS, ("o", "s"), strict=True)):
            # the two data sets side by side at each setting, so their intervals do not hide
            # each other
            ax.errorbar(pos + 0.08 * (2 * k - 1), data[f"{source}_{key}_mean"],
                        yerr=data[f"{source}_{key}_ci"], marker=marker, capsize=3,
                        label=source)
        ax.set_xticks(pos, labels)
        ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
        ax.grid(alpha=0.3)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncol=len(DATASETS))
    fig.suptitle("Client dissimilarity and participation under SubTrunc and UnionFL: mean over "
                 "seeds with 95% t-intervals (paired data splits and plans)")
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
