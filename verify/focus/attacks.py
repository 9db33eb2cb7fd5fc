r"""Attack surfaces of FOCUS whose claims sit in a module of their own (Lemma 5).

Lemma 5 (SG-FOCUS descent), corrected noise term :math:`2\eta^2N\sigma^2`: one round from a
state with exact stored gradients, exact expectation over the participation sets and the
noise (:mod:`verify.focus.lemma5_6`), over the lemma's hypothesis domain: Bernoulli p_i down
to 0.01, tau up to 10, the step anywhere up to the lemma's bound (1/mu at tau = 1, where the
printed condition is void), Hessians with spectrum in [1, 2]. N = 3 clients in d = 2 (the
exact noise expectation costs 2 tau |S| d + 1 rounds per participation set, so N = 16 is out
of reach here). Points are judged by Lemma 5's own predicates.
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import SPD, Box, Integers, attack_surface
from flbounds.participation import Bernoulli, subset_distribution
from flbounds.problems import Quadratic

from .assumptions import constants, noise
from .instances import consistent_state
from .lemma5_6 import ROUNDING, SIGMA, _expect, lemma5_rhs, lemma5_step

N5, D5 = 3, 2
LEMMA5_SPACE = {**{f"A{i}": SPD(D5, 1.0, 2.0, extreme=True) for i in range(N5)},
                "b": Box(-3, 3, shape=(N5, D5)), "p": Box(0.01, 1.0, shape=N5, log=True),
                "tau": Integers(1, 10), "step_frac": Box(1e-3, 1.0, log=True),
                "offset": Box(-1, 1, shape=D5), "offset_scale": Box(1e-3, 10, log=True),
                "spread": Box(-1, 1, shape=(N5, D5)), "spread_scale": Box(1e-3, 10, log=True)}


def _fixed_lemma5():
    """The claims' kind of instance (x* with zero consensus, where only the noise acts) at
    the step bound, and the rare-participation, tau = 10 corner."""
    base = {**{f"A{i}": np.diag([1.0, 2.0]) for i in range(N5)},
            "b": np.arange(N5 * D5, dtype=float).reshape(N5, D5) / 3 - 1,
            "offset": np.zeros(D5), "offset_scale": 1e-3, "spread": np.zeros((N5, D5)),
            "spread_scale": 1e-3, "step_frac": 1.0}
    return [{**base, "p": np.array([0.3, 0.6, 0.9]), "tau": 2},
            {**base, "p": np.full(N5, 0.01), "tau": 10}]


def _lemma5_point(inst):
    problem = Quadratic(np.stack([inst[f"A{i}"] for i in range(N5)]), inst["b"])
    mu, L = float(problem.client_mu.min()), problem.L
    step = inst["step_frac"] * lemma5_step(mu, L, N5, inst["tau"])
    x_prev = problem.x_star + inst["offset_scale"] * inst["offset"]
    models = x_prev + inst["spread_scale"] * inst["spread"]
    return problem, mu, L, step, consistent_state(problem, models, x_prev, step)


def _lemma5_instance(**inst) -> dict:
    problem, _, _, step, _ = _lemma5_point(inst)
    return constants(problem, Bernoulli(inst["p"]), tau=inst["tau"], step=float(step),
                     stored_noise=0.0, **noise(SIGMA, D5))


@attack_surface("focus.lemma5.sg_descent_corrected", space=LEMMA5_SPACE, fixed=_fixed_lemma5,
                instance=_lemma5_instance, tolerance=ROUNDING,
                tolerance_why="exact expectations over sets and noise; relative rounding of "
                              "sums of ~10^3 terms (the claim's tolerance)",
                budget={"quick": 60, "full": 600},
                note="N = 3, d = 2, exact stored gradients; p_i >= 0.01, tau <= 10, step up "
                     "to Lemma 5's bound (1/mu at tau = 1)")
def lemma5_corrected(**inst):
    """E||x_{r+1} - x*||^2 over Lemma 5's right side with the noise term 2 eta^2 N sigma^2."""
    problem, mu, L, step, state = _lemma5_point(inst)
    masks, probs = subset_distribution(Bernoulli(inst["p"]))
    lhs = _expect(problem, state, masks, probs, step, inst["tau"], SIGMA,
                  lambda s: float(np.sum((s.x - problem.x_star) ** 2)))
    rhs = lemma5_rhs(mu=mu, L=L, n=N5, step=step,
                     dist=float(np.sum((state.x - problem.x_star) ** 2)),
                     gap=problem.loss(state.x) - problem.F_star,
                     consensus=state.consensus_error(), sigma=SIGMA, noise_terms=float(N5))
    return lhs / rhs
