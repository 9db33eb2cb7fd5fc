r"""Assumption 5.1 of [003] (convergence of the applied federated optimization): declared as a
result because the paper states a consequence of it ("hence :math:`V_T(i)\le O(\log T)`"),
which ``kvib.assumption5_1.variation_log`` checks; as a hypothesis of Theorems 5.1, 5.2 and
D.1 it is the predicate :func:`verify.kvib.conditions.assumption_5_1`.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.sampling.online import (
    Assumption51Feedback,
)

from .conditions import assumption_5_1


@hypothesis("A5.1", "feedback pi_t(i) in [0, G] with |pi_t(i) - pi_*(i)| <= O(1/sqrt t)")
def a5_1(*, feedback, n_rounds):
    return assumption_5_1(feedback, n_rounds)


ASSUMPTION5_1 = result(
    "kvib.assumption5_1", ref="Assumption 5.1", kind="assumption",
    title="convergence of the applied federated optimization",
    parts={"convergence": ("|pi_t(i) - pi_*(i)| <= O(1/sqrt t) for every client",
                           "an assumption: the predicate A5.1 of Theorems 5.1, 5.2 and D.1"),
           "variation": "hence V_T(i) = sum_t (pi_t(i) - pi_*(i))^2 <= O(log T)"},
    hypotheses=(a5_1,))


@claim("kvib.assumption5_1.variation_log", ref="Assumption 5.1 (V_T = O(log T))",
       kind="statement", expected="holds",
       result=ASSUMPTION5_1, parts=("variation",),
       statement="For pi_t = pi_* + c/sqrt(t), V_T(i)/log T stays within a factor 2 over "
                 "T in [1e2, 1e5].", quick=dict(n_clients=50), full=dict(n_clients=500))
def variation_log(*, rng, n_clients):
    """V10 second part: V_T = c^2 H_T and H_T/log T decreases from 1.13 to 1.05. Measured: the
    max/min ratio of V_T/log T over the grid (<= 2)."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    ts = np.array([100, 1000, 10000, 100000])
    vals = np.array([fb.variation(int(t)).sum() / np.log(t) for t in ts])
    return Evidence(instance=dict(feedback=fb, n_rounds=int(ts[-1])),
                    measured=vals.max() / vals.min(), theoretical=2.0, relation="<=",
                    tolerance=Tolerance.exact("closed-form sums"), details={"ratios": vals})
