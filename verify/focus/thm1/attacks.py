r"""Attack surfaces of Theorem 1(a)-(b) of FOCUS: the statement's step bound against the proof's
(110), and one FOCUS round against the printed contractions over the whole hypothesis domain.

The one-round points are judged by Theorem 1(a)'s own predicates (``instance=``).
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import Box, Integers, attack_surface
from flbounds.participation import Bernoulli, subset_distribution
from flbounds.problems import Quadratic

from ..instances import consistent_state, thm1a_step_printed
from ..one_round import EXACT, ROUND_SPACE, ROUNDING, N, _expect, fixed_round
from ..pep_conditions import thm1a_lyapunov_weight, thm1b_consensus_weight
from . import eq110_step, thm1a, thm1b, thm1b_conditions


@attack_surface("focus.thm1a.step_condition_gap",
                space={"mu": Box(0.01, 1.0), "L_over_mu": Box(1.0, 100, log=True),
                       "n": Integers(1, 20), "tau": Integers(1, 10), "q_min": Box(1e-3, 1.0)},
                # not a hypothesis of the result: q_min <= 1/N is what sum_i q_i <= 1 leaves
                # possible (the search space is the constants, not a participation law)
                validator=lambda **i: i["q_min"] <= 1 / i["n"] or "q_min > 1/N",
                tolerance=1e-15, tolerance_why="a few ulp of the two step bounds",
                shrink=True,
                fixed=[{"mu": 1.0, "L_over_mu": 2.0, "n": 4, "tau": 3, "q_min": 0.1044}])
def step_gap(*, mu, L_over_mu, n, tau, q_min):
    """Theorem 1(a)'s printed step bound over the proof's requirement (110)."""
    L = mu * L_over_mu
    return thm1a_step_printed(mu, L, n, tau, q_min) / eq110_step(mu, L, n, q_min)


# ---- Theorems 1(a)-(b): one FOCUS round against the printed per-round contraction ----
#
# The proofs' Lyapunov functions contract by the printed rate in every round from every
# reachable state; the attack searches the whole hypothesis domain for a round that does not:
# Bernoulli p_i down to 0.01, tau up to 10, the step anywhere up to the theorem's largest
# (step_frac = 1 is the corner), Hessians with spectrum in [1, 2] (mu = 1, L = 2 as the
# claims), N = 4 (the exact expectation enumerates the 2^N participation sets).

THM1_P = np.array([0.3, 0.5, 0.7, 0.9])
THM1_TAU, THM1_MU, THM1_L = 3, 1.0, 2.0
THM1_SPACE = {**ROUND_SPACE, "p": Box(0.01, 1.0, shape=N, log=True), "tau": Integers(1, 10),
              "step_frac": Box(1e-3, 1.0, log=True)}


def _fixed_thm1():
    """The claims' instance (p = (.3, .5, .7, .9), tau = 3, the theorem's largest step) and
    the rare-participation corner (every p_i = 0.01, tau = 10)."""
    base = {k: v for k, v in fixed_round()[0].items()}
    return [{**base, "p": THM1_P, "tau": THM1_TAU, "step_frac": 1.0},
            {**base, "p": np.full(N, 0.01), "tau": 10, "step_frac": 1.0}]


def _point(inst, step_rule):
    """(problem, masks, probs, q, step, state) at one point, step = step_frac x the rule."""
    problem = Quadratic(np.stack([inst[f"A{i}"] for i in range(N)]), inst["b"])
    proc = Bernoulli(inst["p"])
    q = proc.aggregation_weights()
    masks, probs = subset_distribution(proc)
    step = inst["step_frac"] * step_rule(problem, inst["tau"], float(q.min()))
    x_prev = problem.x_star + inst["offset_scale"] * inst["offset"]
    models = x_prev + inst["spread_scale"] * inst["spread"]
    return problem, masks, probs, q, step, consistent_state(problem, models, x_prev, step)


def _step_1a(problem, tau, q_min):
    return thm1a_step_printed(float(problem.client_mu.min()), problem.L, N, tau, q_min)


def _step_1b(problem, tau, q_min):
    return min(thm1b_conditions(problem.mu, problem.L, N, tau, q_min).values())


def _instance_1a(**inst) -> dict:
    """The values Theorem 1(a)'s hypotheses read at one point of the attack space."""
    problem, _, _, q, step, _ = _point(inst, _step_1a)
    return dict(q=q, problem=problem, L=problem.L, mu=float(problem.client_mu.min()),
                tau=inst["tau"], step=step)


def _instance_1b(**inst) -> dict:
    """The values Theorem 1(b)'s hypotheses read (beta = the PL constant of F)."""
    problem, _, _, q, step, _ = _point(inst, _step_1b)
    return dict(q=q, problem=problem, L=problem.L, beta=problem.mu, tau=inst["tau"], step=step)


def _psi(problem, state, weight) -> float:
    r"""The proof's Lyapunov function :math:`\|x - x^*\|^2 + c\sum_i\|x - z_i\|^2`."""
    return float(np.sum((state.x - problem.x_star) ** 2)
                 + weight * np.sum((state.x - state.models) ** 2))


def _phi(problem, state, weight) -> float:
    r""":math:`F(x) - F^* + c\sum_i\|x - z_i\|^2` (Theorem 1(b)'s proof, E.6)."""
    e = state.x - problem.x_star
    return float(0.5 * e @ problem.A.mean(axis=0) @ e
                 + weight * np.sum((state.x - state.models) ** 2))


@attack_surface("focus.thm1a.mc_below_bound", space=THM1_SPACE, fixed=_fixed_thm1,
                instance=_instance_1a, tolerance=ROUNDING, tolerance_why=EXACT,
                budget={"quick": 200},
                note="one round from a reachable state over Theorem 1(a)'s hypothesis domain "
                     "(p_i >= 0.01, tau <= 10, step <= the printed bound); Psi with the "
                     "proof's weight c = 1 - 8 eta L^2 N/mu")
def thm1a_one_round(**inst):
    """E[Psi_{r+1} | state] over (1 - eta mu N/2) Psi_r: the contraction Thm 1(a) rests on."""
    problem, masks, probs, q, step, state = _point(inst, _step_1a)
    mu = float(problem.client_mu.min())
    weight = thm1a_lyapunov_weight(mu, problem.L, N, step)
    after = _expect(problem, state, masks, probs, step, inst["tau"],
                    lambda s: _psi(problem, s, weight))
    rate = thm1a(mu=mu, L=problem.L, p=inst["p"], tau=inst["tau"], step=step)
    return after / (rate * _psi(problem, state, weight))


@attack_surface("focus.thm1b.printed_rate", space=THM1_SPACE, fixed=_fixed_thm1,
                instance=_instance_1b, tolerance=ROUNDING, tolerance_why=EXACT,
                budget={"quick": 200},
                note="one round from a reachable state over Theorem 1(b)'s hypothesis domain "
                     "(quadratics, PL with beta = lambda_min of the mean Hessian; p_i >= 0.01, "
                     "tau <= 10, step <= the printed bound and the proof's 1/(4LN), "
                     "1/(2(tau-1)LN)); Phi with the proof's weight c = 1 - 4 eta L^2")
def thm1b_one_round(**inst):
    """E[Phi_{r+1} | state] over (1 - eta beta N) Phi_r: the contraction Thm 1(b) rests on."""
    problem, masks, probs, q, step, state = _point(inst, _step_1b)
    weight = thm1b_consensus_weight(problem.L, step)
    after = _expect(problem, state, masks, probs, step, inst["tau"],
                    lambda s: _phi(problem, s, weight))
    rate = thm1b(beta=problem.mu, L=problem.L, p=inst["p"], tau=inst["tau"], step=step)
    return after / (rate * _phi(problem, state, weight))
