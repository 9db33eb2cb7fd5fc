r"""K-Vib eq. (36), deterministic part: printed right side, PEP worst case, sampled states.

One FedAvg round of R = 3 full-batch local steps (eta_l = eta/R, eta_g = 1), identical
clients, full participation (Q = sigma = 0, gamma = 1), L = 1. Plotted against eta = R eta_l
eta_g: the ratio of eq. (36)'s left side (1 - 10 gamma eta^2)/16 ||grad f(x)||^2 to its descent
term 2 (f(x) - f(x+))/eta. The printed inequality says the ratio is at most 1; the PEP worst
case over every L-smooth f (``verify.kvib.pep_conditions.eq36_descent_rate``); the largest
ratio over sampled states of the L-smooth non-convex f(x) = -cos(x) (Monte Carlo over x
uniform on [-pi, pi]). Steps beyond 1/(8L) are outside the theorem (right of the grey line);
the left side turns negative at eta = 1/sqrt(10).
"""

from __future__ import annotations

import sys

import matplotlib.pyplot as plt
import numpy as np

from figures._common import run_figure
from verify.kvib.pep_conditions import eq36_descent_rate

NAME = "kvib_pep"
CLAIMS = ("kvib.thm4_1.descent_tightness",)
PROFILES = {"quick": dict(multiples=(0.25, 0.5, 1.0, 2.0), n_states=2000),
            "full": dict(multiples=(0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.4), n_states=20000)}
R_LOCAL, L_SMOOTH = 3, 1.0


def _sampled_ratio(rng, eta, n_states):
    x = rng.uniform(-np.pi, np.pi, n_states)
    z = x.copy()
    for _ in range(R_LOCAL):
        z = z - eta / R_LOCAL * np.sin(z)
    descent = 2 * (np.cos(z) - np.cos(x)) / eta  # f = -cos: f(x) - f(x+) = cos(x+) - cos(x)
    lhs = (1 - 10 * eta**2) / 16 * np.sin(x) ** 2
    keep = descent > 0
    return float(np.max(lhs[keep] / descent[keep]))


def compute(profile="quick", seed=0):
    cfg = PROFILES[profile]
    rng = np.random.default_rng(seed)
    steps = np.array(cfg["multiples"]) / (8 * L_SMOOTH)
    worst = np.array([eq36_descent_rate(L_SMOOTH, R_LOCAL, s).worst for s in steps])
    sampled = np.array([_sampled_ratio(rng, s, cfg["n_states"]) for s in steps])
    return {"steps": steps, "printed": np.ones_like(steps), "pep_worst": worst,
            "sampled_max": sampled, "admissible_step": np.array(1 / (8 * L_SMOOTH))}


def plot(data):
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    s = data["steps"]
    ax.semilogx(s, data["printed"], "--", label=r"eq. (36): ratio $\leq 1$")
    ax.semilogx(s, data["pep_worst"], "o-", label=r"PEP worst case (every $L$-smooth $f$)")
    ax.semilogx(s, data["sampled_max"], "s:", label=r"max over sampled $x$, $f = -\cos$")
    ax.axvline(float(data["admissible_step"]), color="grey", lw=0.8)
    ax.set_yscale("log")
    ax.set_xlabel(r"$\eta = R\eta_l\eta_g$ (grey: $1/(8L)$)")
    ax.set_ylabel("left side / descent term")
    ax.set_title(r"K-Vib eq. (36), one round, $R = 3$, $Q = \sigma = 0$")
    ax.legend()
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
