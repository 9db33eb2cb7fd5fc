r"""Theorem 1 of SAFARI: the exact probability of the indistinguishability event.

On :math:`\mathcal S = \{\hat s < (1-\omega)Mn\}` the training set is :math:`mn` copies of
:math:`x_1`, so no learner can tell :math:`f_1` from :math:`f_2`. The proof bounds the
complement with Chernoff; here it is computed exactly from the binomial CDF, and recounted
with exact rational arithmetic on small instances (the library's binomial CDF against its
definition). The printed binomial parameter of the Chernoff step is checked with sympy.
"""

from __future__ import annotations

import math
from fractions import Fraction
from math import comb

import sympy as sp

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.theory.impossibility import (
    impossibility_chernoff_bound,
    impossibility_event_probability,
)

from . import THM1, grid_instances

EXACT = Tolerance.exact("rational arithmetic in sympy")

# (M, m, n) grid of spec V1: M = 10 with m in {1, 5, 9}, and (M, m) = (2, 1).
GRID_QUICK = [(2, 1, 1), (10, 1, 1), (10, 5, 1), (10, 9, 1), (10, 1, 10), (10, 5, 10),
              (10, 9, 10), (10, 9, 100)]
GRID_FULL = [(M, m, n) for (M, m) in [(2, 1), (10, 1), (10, 5), (10, 9)]
             for n in (1, 10, 100, 1000)]


@claim("safari.thm1.chernoff_step", ref="Thm 1, App. A (Chernoff step)", kind="proof-step",
       expected="holds", result=THM1, parts=("chernoff",),
       corrects="safari.thm1.binomial_parameter",
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
                    details={"grid": grid}, instance=grid_instances(grid))


@claim("safari.thm1.event_probability", ref="Thm 1, App. A", kind="proof-step",
       expected="holds", result=THM1, parts=("event",),
       statement="The indistinguishability event has P[S in calS] > 3/20 for every (M, m, n).",
       quick=dict(grid=GRID_QUICK), full=dict(grid=GRID_FULL))
def event_probability(*, rng, grid):
    """Exact binomial CDF against the proof's 3/20; no tolerance is needed."""
    probs = [impossibility_event_probability(M, m, n) for M, m, n in grid]
    return Evidence(measured=probs, theoretical=[3 / 20] * len(probs), relation=">=",
                    tolerance=Tolerance.exact("binomial CDF, no sampling"),
                    details={"grid": grid, "min": min(probs)}, instance=grid_instances(grid))


def exact_event_probability(n_clients: int, n_participating: int, n_samples: int) -> Fraction:
    r""":math:`P[\mathrm{Bin}(Mn, (1-\omega)/2) < (1-\omega)Mn]` as an exact fraction."""
    total = n_clients * n_samples
    p = Fraction(n_clients - n_participating, 2 * n_clients)
    threshold = Fraction((n_clients - n_participating) * n_samples)
    return sum((comb(total, j) * p**j * (1 - p) ** (total - j)
                for j in range(total + 1) if j < threshold), Fraction(0))


@claim("safari.thm1.event_probability_exact", ref="Thm 1; proof (App. A)", kind="proof-step",
       expected="holds", result=THM1, parts=("event",),
       statement="The failure event of the Thm 1 construction is s < (1 - m/M) M n with "
                 "s ~ Bin(M n, (1 - m/M)/2); its probability as the Thm 1 claims use it.",
       quick=dict(max_clients=6, max_samples=5), full=dict(max_clients=10, max_samples=12))
def event_probability_exact(*, rng, max_clients, max_samples):
    """Every 1 <= m < M <= max_clients and 1 <= n <= max_samples. Measured: the largest
    |library - exact rational count|. Tolerance: rounding of a binomial CDF, 1e-12."""
    del rng  # deterministic grid
    worst, cases, grid = 0.0, 0, []
    for big_m in range(2, max_clients + 1):
        for m in range(1, big_m):
            for n in range(1, max_samples + 1):
                exact = exact_event_probability(big_m, m, n)
                worst = max(worst, abs(impossibility_event_probability(big_m, m, n)
                                       - float(exact)))
                cases += 1
                grid.append((big_m, m, n))
    return Evidence(measured=worst, theoretical=0.0, relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "binomial CDF of <= 120 terms in "
                                                 "float64, error ~1e-15"),
                    details={"cases": cases}, instance=grid_instances(grid))


@claim("safari.thm1.binomial_parameter", ref="Thm 1 proof, App. A", kind="proof-step",
       expected="violated", result=THM1, parts=("chernoff",),
       statement="For the printed s_hat ~ B(Mn, eps), the Chernoff step's threshold is twice the "
                 "mean: (1 - omega)Mn = (1 + 1) E[s_hat].",
       quick=dict(M=2, m=1, n=1))
def binomial_parameter(*, rng, M, m, n):
    """The Chernoff step needs E[s_hat] = 4 eps Mn = (1 - omega)Mn/2 (the x_2 mass is 4 eps);
    the printed B(Mn, eps) has mean eps Mn, a quarter of it (spec 7.A.3, audit part A #3: the
    exact tables use 4 eps). Measured: (1 - omega)Mn / (2 E[s_hat]) under the printed law,
    which must be 1 for the step; it is 4 for every (M, m, n), so the smallest system
    (M = 2 clients, m = 1 taking part, n = 1 sample each) is the instance; every hypothesis of
    the theorem holds on it (m < M, the construction's non-trivial pair of targets,
    (M - m) n >= 1). Exact rationals."""
    omega = sp.Rational(m, M)
    eps = (1 - omega) / 8
    printed_mean = eps * M * n
    ratio = (1 - omega) * M * n / (2 * printed_mean)
    return Evidence(measured=float(ratio), theoretical=1.0, relation="==", tolerance=EXACT,
                    instance=grid_instances([(M, m, n)]),
                    details={"printed_mean": str(printed_mean),
                             "needed_mean": str((1 - omega) * M * n / 2)})
