r"""Lemma 4 of FOCUS (consensus lemma): the result, its parts, its hypotheses and its
printed bound; the claims in :mod:`.consensus` (the statement on random states and the proof
step (103) -> (104)), :mod:`.counterexample` (rare participation), :mod:`.corrected` (the
repaired constant) and the attacks in :mod:`.attacks`.

Statement (eq. (97)): under Assumptions 1 and 2 (as printed; strong convexity is not
assumed), with
:math:`\eta \le \min\{q_{\min}^{3/2}/(8L\sqrt N),\ q_{\min}^{3/2}/(8L(\tau-1))\}`,

.. math::
    E\|\mathbb 1 x_{r+1} - X_{(r+1)\tau}\|_F^2 \le (1 - q_{\min}/3)\|\mathbb 1 x_r -
    X_{r\tau}\|_F^2 + \frac{16\eta^2 N^2}{3 q_{\min}} E\|\nabla F(x_{r+1})\|^2 .

Instances carry ``q`` (the exact aggregation weights of the participation process),
``problem``, ``L``, ``tau`` and ``step``; the proof-step part carries ``q_grid``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import hypothesis, result

from ...predicates import at_most, inv, positive_probabilities
from ..assumptions import a1, a2


def step_limit(*, q, L, tau):
    """Lemma 4's largest step: min{q_min^{3/2}/(8L sqrt N), q_min^{3/2}/(8L(tau-1))}."""
    q = np.asarray(q, dtype=float)
    q_min, n = float(q.min()), q.size
    return min(q_min**1.5 / (8 * L * np.sqrt(n)), q_min**1.5 * inv(8 * L * (tau - 1)))


@hypothesis("step", "eta <= min{q^{3/2}/(8L sqrt N), q^{3/2}/(8L(tau-1))}")
def step_condition(*, step, q, L, tau):
    return at_most(step, step_limit(q=q, L=L, tau=tau))


@hypothesis("q", "q in (0, 1] (the range the proof step is used on)")
def q_range(*, q_grid):
    return positive_probabilities(q_grid)


LEMMA4 = result(
    "focus.lemma4", ref="Lemma 4", title="FOCUS consensus lemma",
    parts={"rate": "eq. (97): E consensus' <= (1 - q_min/3) consensus "
                   "+ 16 eta^2 N^2/(3 q_min) E||grad F(x_{r+1})||^2",
           "proof_104": "proof step (103) -> (104): 8/(q(1 - q^2/4)) <= 16/(3q)"},
    hypotheses=(a1.only("rate"), a2.only("rate"), step_condition.only("rate"),
                q_range.only("proof_104")))


def lemma4_rhs(*, q_min, n, step, consensus, grad, constant):
    """Right side of Lemma 4, eq. (97), with gradient constant ``constant`` (16/(3 q_min) as
    printed): (1 - q_min/3) consensus + constant eta^2 N^2 grad."""
    return (1 - q_min / 3) * consensus + constant * step**2 * n**2 * grad
