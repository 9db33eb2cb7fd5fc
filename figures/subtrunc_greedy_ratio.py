"""Greedy/OPT ratios on SubTrunc's W and UnionFL's h_t against the 1 - 1/e line."""

from __future__ import annotations

import sys

import numpy as np

from figures._common import plt, run_figure
from verify.subtrunc.sec3c.greedy_h import unionfl_ratio_sample
from verify.subtrunc.sec3c.greedy_w import greedy_ratio_sample

NAME = "subtrunc_greedy_ratio"
#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("subtrunc.greedy", "subtrunc.sec3c")


def compute(profile: str = "quick", seed: int = 0) -> dict:
    n = 500 if profile == "quick" else 3000
    rng = np.random.default_rng([seed, 4004])
    phantom, divfl, bound = greedy_ratio_sample(rng, n)
    forced, _ = unionfl_ratio_sample(rng, n // 2)
    early, _ = unionfl_ratio_sample(rng, n // 2, forced=False)
    return {"w_phantom": phantom, "w_divfl": divfl, "nwf_bound": bound,
            "unionfl_forced": forced, "unionfl_stop_early": early}


def plot(data: dict):
    fig, (ax_w, ax_h) = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    bins = np.linspace(0.0, 1.0, 41)
    ax_w.hist(data["w_phantom"], bins=bins, alpha=0.7,
              label="phantom offset $C_i=\\max_j d_{ij}$")
    ax_w.hist(data["w_divfl"], bins=bins, alpha=0.5,
              label="DivFL offset $2\\max_j\\sum_i d_{ij}$")
    ax_w.axvline(1 - np.exp(-1), color="k", ls="--", label="$1-1/e$")
    ax_w.set(xlabel="greedy $W(S)$ / OPT", ylabel="instances", yscale="log",
             title=f"SubTrunc $W$ (min {data['w_phantom'].min():.3f})")
    ax_w.legend(loc="upper left")
    low = min(0.0, float(np.min(data["unionfl_forced"])))
    bins_h = np.linspace(low, 1.0, 41)
    ax_h.hist(data["unionfl_forced"], bins=bins_h, alpha=0.7,
              label="greedy, $|S|=\\kappa$ (Alg. 1)")
    ax_h.hist(data["unionfl_stop_early"], bins=bins_h, alpha=0.5,
              label="greedy, stop at gain $\\leq 0$")
    ax_h.axvline(1 - np.exp(-1), color="k", ls="--", label="$1-1/e$")
    ax_h.set(xlabel="greedy $h_t(S)$ / OPT", ylabel="instances", yscale="log",
             title=f"UnionFL $h_t$ (min {data['unionfl_forced'].min():.3f})")
    ax_h.legend(loc="upper left")
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
