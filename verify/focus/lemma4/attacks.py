r"""Attack surfaces of Lemma 4 of FOCUS: the statement on one round (the search that found
the rare-participation counterexample), the proof step (103) -> (104), the reachable
rare-participation family and the corrected constant.

Each point is judged by Lemma 4's own predicates (``instance=``): a point whose step exceeds
the lemma's bound, or whose participation leaves a client out, is rejected by the hypotheses
the claims are judged by.
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import SPD, Box, Integers, attack_surface
from flbounds.participation import Bernoulli

from ..instances import lemma4_step
from ..one_round import (
    EXACT,
    ROUND_SPACE,
    ROUNDING,
    D,
    N,
    _expect_all,
    attack_round,
    fixed_round,
    round_instance,
)
from . import lemma4_rhs
from .corrected import corrected_constant, near_worst_instance, printed_constant
from .counterexample import lemma4_instance, lemma4_sides


def _attack_step(mu, L, tau, q_min):
    """Lemma 4's bound min{q^{3/2}/(8L sqrt N), q^{3/2}/(8L(tau-1))} (step_frac multiplies it)."""
    return lemma4_step(L, N, tau, q_min)


@attack_surface("focus.lemma4.consensus",
                space={**ROUND_SPACE, "p": Box(0.3, 1.0, shape=N)}, fixed=fixed_round,
                instance=lambda **inst: round_instance(inst, _attack_step),
                tolerance=ROUNDING, tolerance_why=EXACT, budget={"quick": 200},
                note="step = step_frac x Lemma 4's bound min{q^1.5/(8L sqrt N), "
                     "q^1.5/(8L(tau-1))}; p >= 0.3 as the claim's instances (rare "
                     "participation breaks the lemma: focus.lemma4.rare_participation)")
def lemma4(**inst):
    """E||1 x_{r+1} - X_{(r+1)tau}||^2 over Lemma 4's right side (eq. (97))."""
    return _lemma4_ratio(inst, printed_constant)


def _lemma4_ratio(inst, constant):
    """Left over right side of eq. (97) with gradient constant ``constant(q_min, N)``."""
    lhs, rhs = lemma4_round_sides(inst, constant)
    return lhs / rhs


def lemma4_round_sides(inst, constant):
    """(LHS, RHS) of eq. (97) on one round instance of the Lemma 4 attack spaces: exact
    expectation over the 2^N sets, the library's FOCUS round, Lemma 4's step x step_frac."""
    problem, masks, probs, q_min, step, st = attack_round(inst, _attack_step)
    tau = inst["tau"]
    lhs, grad = _expect_all(problem, st, masks, probs, step, tau,
                            (lambda s: s.consensus_error(),
                             lambda s: float(np.sum(problem.gradient(s.x) ** 2))))
    rhs = lemma4_rhs(q_min=q_min, n=N, step=step, consensus=st.consensus_error(), grad=grad,
                     constant=constant(q_min, N))
    return lhs, rhs


@attack_surface("focus.lemma4.proof_step_104", space={"q": Box(0.01, 1.0)},
                instance=lambda *, q: dict(lemma4_instance(1, q), q_grid=np.array([q])),
                tolerance=1e-12, tolerance_why="relative rounding of two closed forms",
                fixed=[{"q": q} for q in np.linspace(0.01, 1.0, 100)])
def step_104(*, q):
    """(103)'s constant 8/(q(1 - q^2/4)) over (104)'s 16/(3q)."""
    return (8 / (q * (1 - q**2 / 4))) / (16 / (3 * q))


@attack_surface("focus.lemma4.rare_participation",
                space={"n_clients": Integers(4, 10), "p": Box(0.005, 0.3, log=True),
                       "empty_rounds": Integers(0, 200)},
                tolerance=ROUNDING, tolerance_why=EXACT, budget={"quick": 100, "full": 2000},
                fixed=[{"n_clients": 4, "p": 0.02, "empty_rounds": 80}],
                instance=lambda n_clients, p, empty_rounds: lemma4_instance(n_clients, p),
                note="identical clients x^2/2, tau = 1, Lemma 4's largest step, the state "
                     "after a full round and k empty rounds")
def lemma4_rare(*, n_clients, p, empty_rounds):
    """Eq. (97)'s left side over its right side on the reachable one-dimensional family (one
    round per number of participants: the clients are identical)."""
    lhs, rhs, _, _ = lemma4_sides(n_clients, p, empty_rounds, by_count=True)
    return lhs / rhs


def _fixed_corrected():
    """The consensus claim's instance and rare_participation's witness embedded in d = 3
    (identity Hessians, b = 0, p = 0.02, tau = 1, models at e_1, server 80 empty rounds away)."""
    q_min = float(Bernoulli(np.full(N, 0.02)).aggregation_weights().min())
    drift = N * 80 * lemma4_step(1.0, N, 1, q_min)
    witness = {**{f"A{i}": np.eye(D) for i in range(N)}, "b": np.zeros((N, D)),
               "p": np.full(N, 0.02), "tau": 1, "step_frac": 1.0,
               "offset": np.eye(D)[0] * (1 - drift), "offset_scale": 1.0,
               "spread": np.tile(np.eye(D)[0], (N, 1)), "spread_scale": drift}
    return [*fixed_round(), witness, near_worst_instance()]


@attack_surface("focus.lemma4.corrected",
                space={**ROUND_SPACE, **{f"A{i}": SPD(D, 0.1, 2.0) for i in range(N)},
                       "p": Box(0.01, 1.0, shape=N, log=True), "tau": Integers(1, 10)},
                fixed=_fixed_corrected, tolerance=ROUNDING, tolerance_why=EXACT,
                instance=lambda **inst: round_instance(inst, _attack_step),
                budget={"quick": 200, "full": 2000},
                note="step = step_frac x Lemma 4's bound; the lemma's whole domain: p_i >= "
                     "0.01, tau <= 10, spectra free in [0.1, 2] (isotropic clients, as the "
                     "witness, included)")
def lemma4_corrected(**inst):
    """E||1 x_{r+1} - X_{(r+1)tau}||^2 over the corrected right side (constant x (N + 1))."""
    return _lemma4_ratio(inst, corrected_constant)
