r"""Attack surfaces of Theorem 1's exact probabilities (SAFARI): the ratios call the library
functions the claims call (:mod:`flbounds.theory.impossibility`); a search point is an
instance of Theorem 1's hypotheses (:func:`verify.safari.thm1.grid_instances`), rejected by
the same predicates when m >= M."""

from __future__ import annotations

import math

from flbounds.falsify import Integers, attack_surface
from flbounds.theory.impossibility import (
    impossibility_chernoff_bound,
    impossibility_event_probability,
)

from . import grid_instances

#: (M - m) n / 6 <= 317 keeps the Chernoff bound exp(-(M-m)n/6) above float64's underflow
PAC_SPACE = {"M": Integers(2, 20), "m": Integers(1, 19), "n": Integers(1, 100)}


def _instance(*, M, m, n):
    """Theorem 1's hypotheses (m < M, (M - m) n >= 1, two targets) at a search point."""
    return grid_instances([(M, m, n)])[0]


@attack_surface("safari.thm1.chernoff_step", space=PAC_SPACE, instance=_instance,
                # full budget: seeds 0 and 1 at 5000 evaluations reach 0.5168451806 / 0.5168451806,
                # within 1e-3 of it from evaluation 1 / 1; 200 >= twice that
                budget={"quick": 200, "full": 200},
                tolerance=0.0, tolerance_why="binomial CDF vs closed form (as the claim)",
                fixed=[{"M": M, "m": m, "n": n} for M, m, n in
                       [(2, 1, 1), (10, 1, 1), (10, 5, 1), (10, 9, 1), (10, 1, 10),
                        (10, 5, 10), (10, 9, 10), (10, 9, 100)]])
def chernoff_step(*, M, m, n):
    """P[s_hat >= (1-omega)Mn] over min(Chernoff bound, e^-1/6, 17/20)."""
    bound = min(impossibility_chernoff_bound(M, m, n), math.exp(-1 / 6), 17 / 20)
    return (1.0 - impossibility_event_probability(M, m, n)) / bound


@attack_surface("safari.thm1.event_probability", space=PAC_SPACE, instance=_instance,
                # full budget: seeds 0 and 1 at 5000 evaluations reach 0.2666666667 / 0.2666666667,
                # within 1e-3 of it from evaluation 1 / 1; 200 >= twice that
                budget={"quick": 200, "full": 200},
                tolerance=0.0, tolerance_why="binomial CDF, no sampling (as the claim)",
                fixed=[{"M": 2, "m": 1, "n": 1}, {"M": 10, "m": 9, "n": 100}])
def event_probability(*, M, m, n):
    """3/20 over the exact probability of the indistinguishability event."""
    return (3 / 20) / impossibility_event_probability(M, m, n)
