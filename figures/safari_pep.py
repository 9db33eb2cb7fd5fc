r"""SAFARI, identical clients: Theorem 5's printed factor, exact worst case (PEP), Monte Carlo.

N = 4 identical quadratic clients in d = 3 (spectrum in [1, 2], minimizer 0), 2 sampled per
round, no gradient noise (sigma = sigma_s = sigma_G = 0, so delta_bar = 0), q = 0.5, K = 3,
eta_c = 4 L eta_s/(K(L + mu)) as Theorem 5 couples the steps. Steps: eta_s over the range where
the per-round q-condition (proof's linear form, printed constants) admits a state other than
x*; above it the theorem is vacuous on this class (``safari.thm5.tightness``). Curves, as
contraction gaps 1 - rho per round: the printed eta_bar = 2 eta_s L mu/(L + mu); the PEP
worst case over every L-smooth mu-strongly convex F meeting the q-condition
(``flbounds.pep.safari_rate``, the coupled steps and the q-condition as its state constraint
from ``verify.safari.pep_conditions``); the per-round factor of the Monte Carlo mean of
||x_r - x*||^2 (``flbounds.algorithms.safari``).
"""

from __future__ import annotations

import sys

import numpy as np

from figures._common import contraction_gaps, run_figure
from flbounds.algorithms.safari import safari, safari_plan
from flbounds.ledger import bounds
from flbounds.pep import safari_rate
from flbounds.problems import Quadratic, random_quadratics
from flbounds.stats import linear_rate_fit
from verify.safari.pep_conditions import thm5_state_constraint, thm5_steps

NAME = "safari_pep"
CLAIMS = ("safari.thm5.tightness",)
PROFILES = {"quick": dict(steps=(0.002, 0.006, 0.02), n_runs=4),
            "full": dict(steps=(0.001, 0.002, 0.004, 0.006, 0.01, 0.015, 0.02), n_runs=20)}
Q, K, N_CLIENTS, N_SAMPLED = 0.5, 3, 4, 2


def _mc_rate(problem, rng, step, n_runs):
    eta_c, eta_bar = thm5_steps(1.0, 2.0, K, step)
    n_rounds = int(np.ceil(12 / eta_bar))
    errs = []
    for child in rng.spawn(n_runs):
        plan = safari_plan(child, n_rounds=n_rounds, q=Q, eligible=np.arange(N_CLIENTS),
                           n_sampled=N_SAMPLED, local_steps=K, dim=3, client_noise_std=0.0,
                           server_noise_std=0.0)
        x = safari(problem, plan, step_client=eta_c, step_server=step, x0=np.full(3, 3.0)).x
        errs.append(np.sum(x**2, axis=1))
    return linear_rate_fit(np.mean(errs, axis=0), window=(1e-8, 1e-1)).rate


def compute(profile="quick", seed=0):
    cfg = PROFILES[profile]
    rng = np.random.default_rng(seed)
    one = random_quadratics(rng, 1, 3, mu=1.0, L=2.0)
    problem = Quadratic(np.repeat(one.A, N_CLIENTS, axis=0), np.zeros((N_CLIENTS, 3)))
    steps = np.array(cfg["steps"])
    printed, worst, measured = (np.empty(steps.size) for _ in range(3))
    for k, step in enumerate(steps):
        thm5 = bounds.get("safari.thm5").evaluate(  # R = 1, ||x_0 - x*||^2 = 1, no noise
            mu=1.0, L=2.0, local_steps=K, n_sampled=1, q=Q, R=1, dist0=1.0, sigma2=0.0,
            sigma_s2=0.0, sigma_G2=0.0, step=step).value
        eta_c, _ = thm5_steps(1.0, 2.0, K, step)
        res = safari_rate(1.0, 2.0, Q, K, eta_c, step, printed=thm5,
                          state_constraint=thm5_state_constraint(1.0, 2.0, Q, K, step))
        printed[k], worst[k] = res.printed, res.worst
        measured[k] = _mc_rate(problem, rng, step, cfg["n_runs"])
    return {"steps": steps, "printed": printed, "pep_worst": worst, "mc_rate": measured,
            "q": np.array(Q), "local_steps": np.array(K)}


def plot(data):
    fig = contraction_gaps(
        data, printed=r"Theorem 5 (printed): $1-\rho = \bar\eta = 2\eta_s L\mu/(L+\mu)$",
        mc="Monte Carlo (one quadratic)", xlabel=r"server step $\eta_s$",
        title=r"SAFARI, identical clients, $N = 4$, $m = 2$, $q = 0.5$, $K = 3$, $\mu = 1$, "
              r"$L = 2$")
    ax = fig.axes[0]
    ax.set_xticks(data["steps"], [f"{s:g}" for s in data["steps"]])   # the steps drawn
    ax.set_xticks([], minor=True)
    ax.legend(loc="upper left")          # above the curves' start, clear of the lines
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
