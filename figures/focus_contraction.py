r"""Measured vs printed per-round contraction of FOCUS over (tau, p_min) (Thm 1(a)).

Instance: N = 4 quadratic clients in d = 3 (each 1-strongly convex, 2-smooth), Bernoulli
participation p = linspace(p_min, 0.9, 4), proof initialization, x_0 = (3, 3, 3). For every
(tau, p_min) the step is Theorem 1(a)'s printed bound
min{3mu/(27NL^2), 1/(3L(tau-1)), q_min^{3/2}/(8L sqrt N)} with the exact q_min. Measured: the
per-round factor rho of the Monte Carlo mean of ||x_r - x*||^2, fitted over the window
[1e-6, 1e-1] of its initial value (``flbounds.stats.linear_rate_fit``). Theoretical:
1 - eta mu N/2. The figure plots the contraction gaps 1 - rho (larger is faster); the bound
holds where the measured gap is above the theoretical one. Gradient descent on F with the same
server step, (1 - eta N mu_F)^2, is shown for reference. At the theorem's (tiny) step the
local steps barely move, so the factor does not depend on tau; the right panel repeats the
grid at 30 times the step (outside the theorem's condition, 1 - eta mu N/2 only as a
reference), where tau matters.
"""

from __future__ import annotations

import logging
import sys

import numpy as np

from figures._common import plt, run_figure
from flbounds.participation import Bernoulli
from flbounds.problems import random_quadratics
from flbounds.stats import linear_rate_fit
from verify.focus.instances import focus_squared_errors, thm1a_step_printed

PROFILES = {"quick": dict(taus=(1, 3, 10), p_mins=(0.1, 0.2, 0.4), n_runs=20),
            "full": dict(taus=(1, 2, 3, 5, 10), p_mins=(0.05, 0.1, 0.2, 0.4), n_runs=100)}
X0 = np.full(3, 3.0)
NAME = "focus_contraction"
#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("focus.thm1a",)
log = logging.getLogger(__name__)
MULTIPLIERS = (1, 30)


def compute(profile="quick", seed=0):
    cfg = PROFILES[profile]
    rng = np.random.default_rng(seed)
    problem = random_quadratics(rng, 4, 3, mu=1.0, L=2.0)
    mu, L, n = float(problem.client_mu.min()), problem.L, 4
    taus, p_mins = np.array(cfg["taus"]), np.array(cfg["p_mins"])
    shape = (len(MULTIPLIERS), p_mins.size, taus.size)
    measured, theoretical, gd, steps = (np.empty(shape) for _ in range(4))
    for m, mult in enumerate(MULTIPLIERS):
        for a, p_min in enumerate(p_mins):
            proc = Bernoulli(np.linspace(p_min, 0.9, n))
            q_min = float(proc.aggregation_weights().min())
            for b, tau in enumerate(taus):
                step = mult * thm1a_step_printed(mu, L, n, int(tau), q_min)
                n_rounds = int(min(2e5, np.ceil(14 / (step * n * mu))))
                errs = focus_squared_errors(problem, proc, rng, n_runs=cfg["n_runs"],
                                            n_rounds=n_rounds, step=step,
                                            local_steps=int(tau), x0=X0)
                fit = linear_rate_fit(errs.mean(axis=0), window=(1e-6, 1e-1))
                measured[m, a, b] = fit.rate
                theoretical[m, a, b] = 1 - step * mu * n / 2
                gd[m, a, b] = (1 - step * n * problem.mu) ** 2
                steps[m, a, b] = step
    data = {"taus": taus, "p_mins": p_mins, "multipliers": np.array(MULTIPLIERS),
            "measured": measured, "theoretical": theoretical, "gd": gd, "steps": steps}
    log_cells(data)
    return data


def plot(data):
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.6), layout="constrained")
    taus = data["taus"]
    for m, (ax, mult) in enumerate(zip(axes, data["multipliers"], strict=True)):
        printed = (r"printed $1-\rho = \eta\mu N/2$" if mult == 1
                   else r"$\eta\mu N/2$ (reference only)")
        for a, p_min in enumerate(data["p_mins"]):
            (line,) = ax.semilogy(taus, 1 - data["measured"][m, a], "o-",
                                  label=rf"measured, $p_{{\min}}={p_min:g}$")
            ax.semilogy(taus, 1 - data["theoretical"][m, a], "--", color=line.get_color(),
                        label=printed if a == 0 else None)
            ax.semilogy(taus, 1 - data["gd"][m, a], ":", color=line.get_color(),
                        label=r"GD on $F$: $1-(1-\eta N\mu_F)^2$" if a == 0 else None)
        ax.set_xlabel(r"local steps $\tau$")
        ax.set_ylabel(r"contraction gap $1 - \rho$ per round")
        where = (r"Theorem 1(a)'s step $\eta$" if mult == 1
                 else rf"${mult:d}\,\times$ Theorem 1(a)'s step (outside its condition)")
        ax.set_title(f"FOCUS at {where}")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    return fig


def log_cells(data) -> None:
    """One debug line per (multiplier, p_min, tau) cell: step, measured and theoretical rate."""
    for m, mult in enumerate(data["multipliers"]):
        for a, p_min in enumerate(data["p_mins"]):
            for b, tau in enumerate(data["taus"]):
                log.debug("x%d p_min=%g tau=%d step=%.3g measured=%.6f theory=%.6f gd=%.6f",
                          mult, p_min, tau, data["steps"][m, a, b], data["measured"][m, a, b],
                          data["theoretical"][m, a, b], data["gd"][m, a, b])


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
