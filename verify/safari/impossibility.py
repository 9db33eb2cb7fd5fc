r"""Theorem 1 of SAFARI ([000]): the exact probability of the indistinguishability event.

On :math:`\mathcal S = \{\hat s < (1-\omega)Mn\}` the training set is :math:`mn` copies of
:math:`x_1`, so no learner can tell :math:`f_1` from :math:`f_2`. The proof bounds the
complement with Chernoff; here it is computed exactly from the binomial CDF.
"""

from __future__ import annotations

import math

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.theory.impossibility import (
    impossibility_chernoff_bound,
    impossibility_event_probability,
)

# (M, m, n) grid of spec V1: M = 10 with m in {1, 5, 9}, and (M, m) = (2, 1).
GRID_QUICK = [(2, 1, 1), (10, 1, 1), (10, 5, 1), (10, 9, 1), (10, 1, 10), (10, 5, 10),
              (10, 9, 10), (10, 9, 100)]
GRID_FULL = [(M, m, n) for (M, m) in [(2, 1), (10, 1), (10, 5), (10, 9)]
             for n in (1, 10, 100, 1000)]


@claim("safari.thm1.chernoff_step", ref="Thm 1, App. A (Chernoff step)", kind="proof-step",
       expected="holds",
       statement="P[s_hat >= (1-omega)Mn] <= exp(-(1-omega)Mn/6) <= e^(-1/6) <= 17/20 on the "
                 "(M, m, n) grid, with s_hat ~ Bin(Mn, (1-omega)/2).",
       quick=dict(grid=GRID_QUICK), full=dict(grid=GRID_FULL))
def chernoff_step(*, rng, grid):
    """Both sides are exact (binomial CDF, closed-form exponential); checked with tolerance 0.

    The chain's last links need (1 - omega)Mn = (M - m)n >= 1, true for every grid point.
    """
    exact, bound = [], []
    for M, m, n in grid:
        exact.append(1.0 - impossibility_event_probability(M, m, n))
        bound.append(min(impossibility_chernoff_bound(M, m, n), math.exp(-1 / 6), 17 / 20))
    return Evidence(measured=exact, theoretical=bound, relation="<=",
                    tolerance=Tolerance.exact("binomial CDF vs closed form, no sampling"),
                    details={"grid": grid})


@claim("safari.thm1.event_probability", ref="Thm 1, App. A", kind="proof-step",
       expected="holds",
       statement="The indistinguishability event has P[S in calS] > 3/20 for every (M, m, n).",
       quick=dict(grid=GRID_QUICK), full=dict(grid=GRID_FULL))
def event_probability(*, rng, grid):
    """Exact binomial CDF against the proof's 3/20; no tolerance is needed."""
    probs = [impossibility_event_probability(M, m, n) for M, m, n in grid]
    return Evidence(measured=probs, theoretical=[3 / 20] * len(probs), relation=">=",
                    tolerance=Tolerance.exact("binomial CDF, no sampling"),
                    details={"grid": grid, "min": min(probs)})
