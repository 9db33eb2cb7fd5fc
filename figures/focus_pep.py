r"""FOCUS: printed rate, exact worst case (PEP) and Monte Carlo contraction against the step.

Instance of ``verify/focus/thm1.py``: N = 4 quadratic clients in d = 3 (1-strongly convex,
2-smooth), Bernoulli p = (.3, .5, .7, .9), tau = 3, proof initialisation, x_0 = (3, 3, 3).
Steps: multiples of Theorem 1(a)'s printed step (1x is the largest step the theorem allows;
beyond it the printed rate is only a reference). Curves, as contraction gaps 1 - rho per
round (larger is faster): the printed 1 - eta mu N/2; the PEP worst case of the proof's
Lyapunov function over every L-smooth mu-strongly convex client and state
(``flbounds.pep.focus_rate``); the per-round factor of the Monte Carlo mean of
||x_r - x*||^2 fitted over [1e-6, 1e-1] of its start. A correct FOCUS sits above the PEP gap.
"""

from __future__ import annotations

import sys

import numpy as np

from figures._common import contraction_gaps, run_figure
from flbounds.participation import Bernoulli
from flbounds.pep import focus_rate
from flbounds.problems import random_quadratics
from flbounds.stats import linear_rate_fit
from verify.focus.instances import focus_squared_errors, thm1a_step_printed
from verify.focus.pep_conditions import thm1a_lyapunov_weight

NAME = "focus_pep"
CLAIMS = ("focus.thm1a.tightness", "focus.thm1a.mc_below_worst_case")
PROFILES = {"quick": dict(multiples=(1.0, 2.0, 4.0), n_runs=8),
            "full": dict(multiples=(0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0), n_runs=40)}
P = np.array([0.3, 0.5, 0.7, 0.9])
TAU = 3
X0 = np.full(3, 3.0)


def compute(profile="quick", seed=0):
    cfg = PROFILES[profile]
    rng = np.random.default_rng(seed)
    problem = random_quadratics(rng, 4, 3, mu=1.0, L=2.0)
    proc = Bernoulli(P)
    mu, L, n = float(problem.client_mu.min()), problem.L, problem.n_clients
    top = thm1a_step_printed(mu, L, n, TAU, float(proc.aggregation_weights().min()))
    steps = top * np.array(cfg["multiples"])
    printed, worst, measured = (np.empty(steps.size) for _ in range(3))
    for k, step in enumerate(steps):
        printed[k] = 1 - step * mu * n / 2
        worst[k] = focus_rate(mu, L, P, TAU, step,
                              consensus_weight=thm1a_lyapunov_weight(mu, L, len(P), step)).worst
        n_rounds = int(np.ceil(16 / (step * n * mu)))
        errs = focus_squared_errors(problem, proc, rng, n_runs=cfg["n_runs"],
                                    n_rounds=n_rounds, step=step, local_steps=TAU, x0=X0)
        measured[k] = linear_rate_fit(errs.mean(axis=0), window=(1e-6, 1e-1)).rate
    return {"steps": steps, "admissible_step": np.array(top), "printed": printed,
            "pep_worst": worst, "mc_rate": measured}


def plot(data):
    top = float(data["admissible_step"])
    fig = contraction_gaps(
        data, printed=r"printed (Thm 1(a)): $1-\rho = \eta\mu N/2$",
        mc="Monte Carlo (Thm 1 instance)",
        xlabel=rf"step $\eta$ as a multiple of Theorem 1(a)'s largest, {top:.3g} (grey line)",
        title=r"FOCUS, $N = 4$, $\tau = 3$, $p = (0.3, 0.5, 0.7, 0.9)$, $\mu = 1$, $L = 2$",
        vline=top)
    ax = fig.axes[0]
    # ticks at the steps drawn, named by their multiple of the theorem's step
    ax.set_xticks(data["steps"], [f"{s / top:g}×" for s in data["steps"]])
    ax.set_xticks([], minor=True)
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
