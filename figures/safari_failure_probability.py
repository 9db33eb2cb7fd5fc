r"""SAFARI Theorem 1: failure probability of FL vs n, and its geometric fall with server data.

Left: :math:`P[R_P(\mathcal L(\mathcal F(S)), f_2) > (1-\omega)/8]` for ERM (ties to
:math:`f_1`) against the per-client sample size n, exact (binomial CDF, lines) and Monte Carlo with
99% Clopper-Pearson bars, without server data and with :math:`n_T` server samples; the
paper's lower bound 1/20 is drawn. Right: the same probability against :math:`n_T` (log
scale) with the reference slope :math:`\log(1-4\epsilon)`. (Spec ``000_safari.md`` V1.)
"""

from __future__ import annotations

import sys

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator
from scipy import stats

from figures._common import run_figure
from flbounds.stats import clopper_pearson
from flbounds.theory.impossibility import draw_plan, failure_indicators, two_point_distribution

NAME = "safari_failure_probability"
#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("safari.thm1",)
M, m = 10, 5


def compute(profile: str = "quick", seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    n_reps = 20000 if profile == "quick" else 200000
    ns = np.array([1, 2, 3, 5, 10, 30, 100, 300, 1000])
    server_sizes = np.arange(0, 21, 2) if profile == "quick" else np.arange(0, 31, 2)
    _, _, p_x2 = two_point_distribution(M, m)
    data = {"n": ns, "n_T": server_sizes, "p_x2": p_x2}
    for n_t in (0, 4, 12):
        k = np.array([failure_indicators(draw_plan(rng, M, m, int(n), n_reps=n_reps,
                                                   n_server=n_t), "erm", "f2", M, m)[0].sum()
                      for n in ns])
        lo, hi = np.array([clopper_pearson(int(kk), n_reps) for kk in k]).T
        exact = stats.binom.cdf((M - m) * ns, M * ns, p_x2) * (1 - p_x2) ** n_t
        data.update({f"mc_{n_t}": k / n_reps, f"lo_{n_t}": lo, f"hi_{n_t}": hi,
                     f"exact_{n_t}": exact})
    k = np.array([failure_indicators(draw_plan(rng, M, m, 10, n_reps=n_reps, n_server=int(t)),
                                     "erm", "f2", M, m)[0].sum() for t in server_sizes])
    data["vs_nT"] = k / n_reps
    data["slope"] = np.polyfit(server_sizes, np.log(np.maximum(k, 1) / n_reps), 1)[0]
    return data


def plot(data: dict):
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4.2))
    for n_t, color in ((0, "C0"), (4, "C1"), (12, "C2")):
        y = data[f"mc_{n_t}"]
        ax.errorbar(data["n"], y, yerr=[y - data[f"lo_{n_t}"], data[f"hi_{n_t}"] - y], fmt="o",
                    color=color, label=fr"Monte Carlo, $n_T={n_t}$")
        ax.plot(data["n"], data[f"exact_{n_t}"], color=color, linewidth=1)
    ax.plot([], [], color="grey", linewidth=1, label="exact (binomial CDF)")
    ax.axhline(1 / 20, color="k", linestyle="--",
               label=r"Thm 1: $P \geq 1/20$ (no server data)")
    ax.set_xscale("log")
    ax.set_xlabel("samples per client $n$")
    ax.set_ylabel(r"$P[R_P > (1-\omega)/8]$  (ERM, target $f_2$)")
    ax.set_title(fr"FL fails for every $n$ ($M={M}, m={m}$)")
    ax.legend(loc="center right")
    x = data["n_T"]
    bx.semilogy(x, data["vs_nT"], "o", label="Monte Carlo ($n=10$)")
    ref = data["vs_nT"][0] * (1 - data["p_x2"]) ** x
    slope = np.log(1 - data["p_x2"])
    bx.semilogy(x, ref, "k--",
                label=fr"$(1-4\epsilon)^{{n_T}}$: slope $\ln(1-4\epsilon)={slope:.3f}$")
    bx.xaxis.set_major_locator(MaxNLocator(integer=True))
    bx.set_xlabel("server samples $n_T$")
    bx.set_ylabel(r"$P[R_P > (1-\omega)/8]$")
    bx.set_title(f"SA-FL: geometric fall in $n_T$ (fitted slope {float(data['slope']):.3f})")
    bx.legend()
    fig.tight_layout()
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
