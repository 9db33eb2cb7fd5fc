"""FedALS Thm 4.1: true one-round gap, the bound and its "sole iid term" vs the number of clients.

Ridge on the unit sphere (d = 5, n = 40, lambda = 0.1, kappa = 11), iid (zeta = 0) and
non-iid (zeta = 1); log-log axes with 1/K and 1/K^2 reference lines and the fitted slope.
"""

from __future__ import annotations

import sys

import matplotlib.pyplot as plt
import numpy as np

from figures._common import run_figure
from flbounds.stats import slope_from_means
from flbounds.theory.data_models import RidgeModel
from flbounds.theory.generalization import one_round_draws, summarize_bound

#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("fedals.thm41.bound", "fedals.d1")

DIM, N_SAMPLES, LAM = 5, 40, 0.1


def compute(profile: str = "quick", seed: int = 0) -> dict:
    rng = np.random.default_rng([seed, 1])
    Ks = [1, 2, 4, 8, 16] if profile == "quick" else [1, 2, 4, 8, 16, 32, 64]
    n_draws = 600 if profile == "quick" else 4000
    base = rng.standard_normal(DIM)
    out = {"K": np.array(Ks)}
    for zeta in (0.0, 1.0):
        rows = []
        for K in Ks:
            model = RidgeModel(base + zeta * rng.standard_normal((K, DIM)), 1.0, LAM)
            w = np.full(K, 1.0 / K)
            s = summarize_bound(one_round_draws(model, w, N_SAMPLES, n_draws, rng), w,
                                model.mu, model.L, rng)
            rows.append([s.gap, s.gap_se, s.bound, s.first_term])
        out[f"zeta{zeta:g}"] = np.array(rows)
    return out


def plot(data: dict):
    K = data["K"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.0), sharey=True, layout="constrained")
    titles = (r"iid ($\zeta = 0$)", r"non-iid ($\zeta = 1$)")
    for ax, key, title in zip(axes, ("zeta0", "zeta1"), titles, strict=True):
        gap, se, bound, first = data[key].T
        ax.errorbar(K, gap, yerr=2 * se, fmt="o-", label=r"true gap $E\,\Delta$ ($\pm 2$ SE)")
        ax.plot(K, bound, "s-", label="Thm 4.1 bound")
        ax.plot(K, first, "^--", label=r"first term $\kappa G / K^2$ ('sole iid term')")
        ax.plot(K, gap[0] / K, ":", color="gray", label=r"$1/K$ reference")
        ax.plot(K, gap[0] / K ** 2, "-.", color="gray", label=r"$1/K^2$ reference")
        sel = K >= 2
        slope = slope_from_means(K[sel], gap[sel], np.random.default_rng(0))[0]
        ax.set_title(f"{title}: fitted slope of gap {slope:.2f}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(r"number of clients $K$")
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("generalization error")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    fig.suptitle(r"FedALS Thm 4.1 on ridge/sphere ($d = 5$, $n = 40$, $\lambda = 0.1$, "
                 r"$\kappa = 11$)")
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    print(*main(), sep="\n")
