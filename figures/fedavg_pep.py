r"""FedAvg, identical clients: printed rate, exact worst case (PEP), Monte Carlo contraction.

N = 4 identical quadratic clients in d = 3 (spectrum in [1, 2], common minimizer), 3 of 4
clients per round uniformly without replacement (never an empty round), tau = 3. Steps:
fractions of Theorem 3's largest step min{1/(3L), 1/(4(tau-1)L)}. Curves, as contraction gaps
1 - rho per round: (1 - eta mu/2)^tau, the rate FOCUS eq. (66) gives with
delta_q = sigma_G = 0 (Cor. 3's setting); the PEP worst case over every L-smooth mu-strongly
convex client function (``flbounds.pep.fedavg_rate(..., homogeneous=True)``); the per-round
factor of the Monte Carlo mean of ||x_r - x*||^2.
"""

from __future__ import annotations

import sys

import numpy as np

from figures._common import contraction_gaps, run_figure
from flbounds.algorithms import fedavg
from flbounds.participation import UniformWithoutReplacement
from flbounds.pep import fedavg_rate
from flbounds.problems import Quadratic, random_quadratics
from flbounds.stats import linear_rate_fit

NAME = "fedavg_pep"
CLAIMS = ("focus.cor3.rate_tightness",)
PROFILES = {"quick": dict(fractions=(0.1, 0.3, 1.0), n_runs=4),
            "full": dict(fractions=(0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0), n_runs=20)}
TAU = 3


def compute(profile="quick", seed=0):
    cfg = PROFILES[profile]
    rng = np.random.default_rng(seed)
    one = random_quadratics(rng, 1, 3, mu=1.0, L=2.0)
    problem = Quadratic(np.repeat(one.A, 4, axis=0), np.zeros((4, 3)))
    proc = UniformWithoutReplacement(4, 3)
    mu, L = 1.0, 2.0
    top = min(1 / (3 * L), 1 / (4 * (TAU - 1) * L))
    steps = top * np.array(cfg["fractions"])
    printed, worst, measured = (np.empty(steps.size) for _ in range(3))
    x0 = np.full(3, 3.0)
    for k, step in enumerate(steps):
        printed[k] = (1 - step * mu / 2) ** TAU
        worst[k] = fedavg_rate(mu, L, 4, TAU, step, proc, homogeneous=True).worst
        n_rounds = int(np.ceil(12 / (step * mu * TAU)))
        errs = np.array([np.sum(fedavg(problem, proc.plan(child, n_rounds), step=step,
                                       local_steps=TAU, x0=x0).x ** 2, axis=1)
                         for child in rng.spawn(cfg["n_runs"])])
        measured[k] = linear_rate_fit(errs.mean(axis=0), window=(1e-8, 1e-1)).rate
    return {"steps": steps, "admissible_step": np.array(top), "printed": printed,
            "pep_worst": worst, "mc_rate": measured}


def plot(data):
    return contraction_gaps(
        data, printed=r"(66): $1-(1-\eta\mu/2)^\tau$", mc="Monte Carlo (one quadratic)",
        xlabel=r"step $\eta$ (right end: Theorem 3's largest step)",
        title=r"FedAvg, identical clients, $N = 4$, 3 per round, $\tau = 3$")


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
