r"""Attack surfaces of Theorem 1(a)-(b) of FOCUS: the statement's step bound against the proof's
(110), and one FOCUS round against the printed contractions over the whole hypothesis domain.

The one-round points are judged by Theorem 1(a)'s own predicates (``instance=``).
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import Box, Integers, attack_surface

from ..classes import (
    CLASS_SPACE,
    EXACT_CLASSES,
    class_round,
    class_sizes,
    expand,
    expect_batched,
    fixed_classes,
)
from ..instances import thm1a_step_printed
from ..one_round import ROUNDING
from ..pep_conditions import thm1a_lyapunov_weight, thm1b_consensus_weight
from . import eq110_step, thm1a, thm1b, thm1b_conditions, thm1b_repaired


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
# claims), N from 4 to 16 in four classes of identical clients (the exact expectation sums
# over the per-class counts, :mod:`..classes`), both readings of q (empty rounds counted 0,
# or conditioned on a non-empty round).

THM1_P = (0.3, 0.5, 0.7, 0.9)


def _fixed_thm1():
    """The claims' instance (p = (.3, .5, .7, .9), tau = 3, one client per class, the
    theorem's largest step), the rare-participation corner (every p_i = 0.01, tau = 10) and
    N = 16 (four classes of four)."""
    return [fixed_classes(THM1_P, 3), fixed_classes((0.01,) * 4, 10),
            fixed_classes(THM1_P, 3, sizes=(4, 4, 4, 4))]


def _step_1a(problem, tau, q_min):
    return thm1a_step_printed(float(problem.client_mu.min()), problem.L, problem.n_clients,
                              tau, q_min)


def _step_1b(problem, tau, q_min):
    return min(thm1b_conditions(problem.mu, problem.L, problem.n_clients, tau,
                                q_min).values())


def _instance_1a(**inst) -> dict:
    """The values Theorem 1(a)'s hypotheses read at one point of the attack space."""
    problem, _, _, q, step, _ = class_round(inst, _step_1a)
    return dict(q=q, problem=problem, L=problem.L, mu=float(problem.client_mu.min()),
                tau=inst["tau"], step=step)


def _instance_1b(**inst) -> dict:
    """The values Theorem 1(b)'s hypotheses read (beta = the PL constant of F)."""
    problem, _, _, q, step, _ = class_round(inst, _step_1b)
    return dict(q=q, problem=problem, L=problem.L, beta=problem.mu, tau=inst["tau"], step=step)


def _p(inst) -> np.ndarray:
    """Every client's participation probability at a point."""
    return expand(inst["p"], class_sizes(inst))


def _psi(problem, state, weight):
    r"""The proof's Lyapunov function :math:`\|x - x^*\|^2 + c\sum_i\|x - z_i\|^2` of a state,
    or of every state of a :class:`~..instances.RoundOutcomes` (an array)."""
    if np.ndim(state.x) == 2:
        return (np.sum((state.x - problem.x_star) ** 2, axis=1)
                + weight * np.sum((state.x[:, None, :] - state.models) ** 2, axis=(1, 2)))
    return float(np.sum((state.x - problem.x_star) ** 2)
                 + weight * np.sum((state.x - state.models) ** 2))


def _phi(problem, state, weight):
    r""":math:`F(x) - F^* + c\sum_i\|x - z_i\|^2` (Theorem 1(b)'s proof, E.6), of a state or
    of every state of a :class:`~..instances.RoundOutcomes`."""
    hess = problem.A.mean(axis=0)
    if np.ndim(state.x) == 2:
        e = state.x - problem.x_star
        return (0.5 * np.einsum("mp,pq,mq->m", e, hess, e)
                + weight * np.sum((state.x[:, None, :] - state.models) ** 2, axis=(1, 2)))
    e = state.x - problem.x_star
    return float(0.5 * e @ hess @ e + weight * np.sum((state.x - state.models) ** 2))


@attack_surface("focus.thm1a.mc_below_bound", space=CLASS_SPACE, fixed=_fixed_thm1,
                instance=_instance_1a, tolerance=ROUNDING, tolerance_why=EXACT_CLASSES,
                # convergence record (budget 5000, seeds 0/1): best 0.99999997/0.99999999;
                # within 1e-3 of it by evaluation 4/21, so a budget >= 42 finds it
                budget={"quick": 200, "full": 200},
                note="one round from a reachable state over Theorem 1(a)'s hypothesis domain "
                     "(N = 4..16 in four classes, p_i >= 0.01, tau <= 10, step <= the printed "
                     "bound, both readings of q); Psi with the proof's weight c = 1 - 8 eta "
                     "L^2 N/mu")
def thm1a_one_round(**inst):
    """E[Psi_{r+1} | state] over (1 - eta mu N/2) Psi_r: the contraction Thm 1(a) rests on."""
    problem, masks, probs, _, step, state = class_round(inst, _step_1a)
    mu, n = float(problem.client_mu.min()), problem.n_clients
    weight = thm1a_lyapunov_weight(mu, problem.L, n, step)
    (after,) = expect_batched(problem, state, masks, probs, step, inst["tau"],
                              [lambda s: _psi(problem, s, weight)])
    rate = thm1a(mu=mu, L=problem.L, p=_p(inst), tau=inst["tau"], step=step)
    return after / (rate * _psi(problem, state, weight))


@attack_surface("focus.thm1b.printed_rate", space=CLASS_SPACE, fixed=_fixed_thm1,
                instance=_instance_1b, tolerance=ROUNDING, tolerance_why=EXACT_CLASSES,
                # convergence record (budget 5000, seeds 0/1): best 0.99999999/0.99999998;
                # within 1e-3 of it by evaluation 5/11, so a budget >= 22 finds it
                budget={"quick": 200, "full": 200},
                note="one round from a reachable state over Theorem 1(b)'s hypothesis domain "
                     "(quadratics, PL with beta = lambda_min of the mean Hessian; N = 4..16 in "
                     "four classes, p_i >= 0.01, tau <= 10, step <= the printed bound and the "
                     "proof's 1/(4LN), 1/(2(tau-1)LN), both readings of q); Phi with the "
                     "proof's weight c = 1 - 4 eta L^2")
def thm1b_one_round(**inst):
    """E[Phi_{r+1} | state] over (1 - eta beta N) Phi_r: the contraction Thm 1(b) rests on."""
    problem, masks, probs, _, step, state = class_round(inst, _step_1b)
    weight = thm1b_consensus_weight(problem.L, step)
    (after,) = expect_batched(problem, state, masks, probs, step, inst["tau"],
                              [lambda s: _phi(problem, s, weight)])
    rate = thm1b(beta=problem.mu, L=problem.L, p=_p(inst), tau=inst["tau"], step=step)
    return after / (rate * _phi(problem, state, weight))


def _step_repaired(problem, tau, q_min):
    """Theorem 1(b)'s printed step with the repaired proof's extra eta <= 3 q_min/(128 N)."""
    return min(_step_1b(problem, tau, q_min), 3 * q_min / (128 * problem.n_clients))


def _instance_repaired(**inst) -> dict:
    """The values Theorem 1(b)'s hypotheses read at the repaired step."""
    problem, _, _, q, step, _ = class_round(inst, _step_repaired)
    return dict(q=q, problem=problem, L=problem.L, beta=problem.mu, tau=inst["tau"], step=step)


@attack_surface("focus.thm1b.repaired_rate", space=CLASS_SPACE, fixed=_fixed_thm1,
                instance=_instance_repaired, tolerance=ROUNDING, tolerance_why=EXACT_CLASSES,
                # convergence record (budget 5000, seeds 0/1): best 0.99999997/0.99999998;
                # within 1e-3 of it by evaluation 5/15, so a budget >= 30 finds it
                budget={"quick": 200, "full": 200},
                note="as focus.thm1b.printed_rate, at the repaired step (the printed bound and "
                     "eta <= 3 q_min/(128 N)) against the repaired rate 1 - eta beta N/4")
def thm1b_repaired_round(**inst):
    """E[Phi_{r+1} | state] over (1 - eta beta N/4) Phi_r: the repaired proof's contraction."""
    problem, masks, probs, _, step, state = class_round(inst, _step_repaired)
    weight = thm1b_consensus_weight(problem.L, step)
    (after,) = expect_batched(problem, state, masks, probs, step, inst["tau"],
                              [lambda s: _phi(problem, s, weight)])
    rate = thm1b_repaired(beta=problem.mu, L=problem.L, p=_p(inst), tau=inst["tau"], step=step)
    return after / (rate * _phi(problem, state, weight))
