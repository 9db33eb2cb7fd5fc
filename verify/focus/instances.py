r"""Shared pieces of the FOCUS claims and figures: the theorems' step-size conditions, Monte
Carlo runs of FOCUS, and one round of :func:`flbounds.algorithms.focus` from a given state with
the client models exposed (for the one-step lemma checks).

Conventions: ``q`` is the exact aggregation weight :math:`E[1\{i\in S\}/|S|]` (0 for the empty
set), as in FOCUS's Assumption 1; ``q_min`` its minimum. :math:`1/(\tau - 1) = \infty` when
:math:`\tau = 1`.
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms import FocusState, focus, sg_focus

from .thm1 import (
    thm1a_conditions,
    thm1a_proof_conditions,
    thm1b_conditions,
    thm1c_conditions,
)


def _inv(x):
    return np.inf if x == 0 else 1.0 / x


def thm1a_step_printed(mu, L, n, tau, q_min):
    """Theorem 1(a) as printed: min{3 mu/(27 N L^2), 1/(3L(tau-1)), q^{3/2}/(8 L sqrt N)}."""
    return min(thm1a_conditions(mu, L, n, tau, q_min).values())


def thm1a_step_proof(mu, L, n, tau, q_min):
    """The conservative proof-consistent condition of spec section 7.8 (with (110) as
    re-derived: q_min/(3N(8L^2/mu + mu/2)), and Lemmas 3-4's own conditions)."""
    return min(thm1a_proof_conditions(mu, L, n, tau, q_min).values())


def thm1b_step(beta, L, n, tau, q_min):
    """Theorem 1(b) printed condition plus the proof's 1/(4LN) and 1/(2(tau-1)LN)."""
    return min(thm1b_conditions(beta, L, n, tau, q_min).values())


def thm1c_step(L, n, tau, q_min):
    """Theorem 1(c): min{1/(2L(tau-1)), q^{3/2}/(8L sqrt N), q/(16 L sqrt(2N)), 1/(4LN)}."""
    return min(thm1c_conditions(L, n, tau, q_min).values())


def thm4_step(mu, L, n, tau, q_min):
    """Theorem 4 (SG-FOCUS, strongly convex)."""
    return min(2 * q_min / (3 * n * (16 * L**2 / mu + mu / 2)),
               q_min**1.5 / (4 * L * np.sqrt(6 * n)),
               _inv(8 * np.sqrt(2) * L * (tau - 1) / q_min**1.5),
               _inv(128 * (tau - 1) ** 2 * L**2 * n / mu))


def thm5_step(beta, L, n, tau, q_min):
    """Theorem 5 (SG-FOCUS, PL) plus the proof's 3q/(32N), 1/(4LN), 1/(2(tau-1)LN)."""
    return min(q_min / (3 * beta * n * (4 - q_min)), q_min / (16 * L**2),
               q_min**1.5 / (4 * L * np.sqrt(6 * n)),
               _inv(8 * np.sqrt(2) * L * (tau - 1) / q_min**1.5),
               3 * q_min / (32 * n), 1 / (4 * L * n), _inv(2 * (tau - 1) * L * n))


def lemma3_step(mu, L, tau):
    """Lemma 3 and the conditions its proof uses: 1/(3L(tau-1)), 1/(2L sqrt(tau-1)), 1/(3 mu)."""
    return min(_inv(3 * L * (tau - 1)), _inv(2 * L * np.sqrt(tau - 1)), 1 / (3 * mu))


def lemma4_step(L, n, tau, q_min):
    """Lemma 4: min{q^{3/2}/(8L sqrt N), q^{3/2}/(8L(tau-1))}."""
    return min(q_min**1.5 / (8 * L * np.sqrt(n)), _inv(8 * L * (tau - 1) / q_min**1.5))


def focus_squared_errors(problem, process, rng, *, n_runs, n_rounds, step, local_steps,
                         x0, init="gradient"):
    """Squared errors ||x_r - x*||^2, shape (n_runs, n_rounds + 1), of independent runs."""
    out = np.empty((n_runs, n_rounds + 1))
    for k, child in enumerate(rng.spawn(n_runs)):
        plan = process.plan(child, n_rounds)
        xs = focus(problem, plan, step=step, local_steps=local_steps, x0=x0, init=init).x
        out[k] = np.sum((xs - problem.x_star) ** 2, axis=1)
    return out


class RoundState:
    """FOCUS state between rounds with the client models kept: server model ``x`` (after its
    step, i.e. :math:`\\bar x_{r\\tau+1}`), server model before the step ``x_prev``
    (:math:`\\bar x_{r\\tau}`), tracker ``y``, stored gradients ``g`` and client models
    ``models`` (:math:`x_{r\\tau,i}`, where ``g`` was evaluated)."""

    def __init__(self, x, x_prev, y, g, models):
        self.x, self.x_prev, self.y, self.g, self.models = x, x_prev, y, g, models

    def consensus_error(self):
        r""":math:`\|\mathbb 1\bar x_{r\tau+1} - \mathbf x_{r\tau}\|_F^2` over all N + 1 rows."""
        return float(np.sum((self.x - self.x_prev) ** 2) + np.sum((self.x - self.models) ** 2))


def consistent_state(problem, models, x_prev, step):
    """A reachable state: stored gradients at the client models, y = sum g, x = x_prev - eta y."""
    g = problem.client_gradients(models)
    y = g.sum(axis=0)
    return RoundState(x_prev - step * y, x_prev, y, g, models)


def focus_round(problem, state, mask, step, local_steps, noise=None):
    """One FOCUS round from ``state`` with participation ``mask``: the library's
    :func:`~flbounds.algorithms.focus` (or :func:`~flbounds.algorithms.sg_focus` with
    ``noise`` of shape (N, local_steps, d)) resumed from the state; returns the next
    state."""
    start = FocusState(state.x, state.y, state.g, state.models)
    plan = np.asarray(mask, dtype=bool)[None]
    if noise is None:
        trace = focus(problem, plan, step=step, local_steps=local_steps, start=start)
    else:
        trace = sg_focus(problem, plan, np.asarray(noise)[None], step=step,
                         local_steps=local_steps, start=start)
    return RoundState(trace.x[1], state.x, trace.y[1], trace.g, trace.models)
