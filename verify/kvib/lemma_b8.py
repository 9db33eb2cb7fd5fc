r"""Lemma B.8 of K-Vib (optimal ISP probabilities with a floor): the result, its parts, its
hypotheses and its claims.

Statement: for :math:`0<a_1\le\dots\le a_N`, :math:`0<K\le N`, the minimiser of
:math:`\Omega(p)=\sum_ia_i^2/p_i` over :math:`\Delta=\{p_{\min}\le p_i\le1,\ \sum p=K\}` is
given by the KKT conditions (eqs. (24)-(26)), :math:`p_i=\mathrm{clip}(a_i/\sqrt y,p_{\min},1)`
with :math:`\sqrt y=\sum_{l_1<i\le l_2}a_i/(K-N+l_2-l_1p_{\min})`, and its value is eq.
(27). Instances carry ``a``, ``budget`` and ``p_min``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.sampling import (
    optimal_isp_objective,
    optimal_isp_probabilities,
)
from flbounds.tolerances import EPS

from .conditions import positive_sorted_weights
from .instances import random_budget, random_weights
from .solver import bisection_probabilities_rows


@hypothesis("K", "0 < K <= N")
def budget_range(*, a, budget):
    return bool(0 < budget <= np.shape(a)[-1] * (1 + 1e-12))


@hypothesis("Delta", "Delta is not empty: 0 <= p_min <= K/N")
def floor_feasible(*, a, budget, p_min):
    return bool(0 <= p_min <= budget / np.shape(a)[-1] * (1 + 1e-12))


LEMMA_B8 = result(
    "kvib.lemma_b8", ref="Lemma B.8", title="optimal ISP probabilities with a floor p_min",
    parts={"solution": "eqs. (24)-(26): p_i = p_min (i <= l1), a_i/sqrt(y) (l1 < i <= l2), 1 "
                       "(i > l2), sqrt(y) = sum_{l1<i<=l2} a_i/(K - N + l2 - l1 p_min)",
           "eq27": "eq. (27): Omega* = sum_{i<=l1} a_i^2/p_min + (sum_{l1<i<=l2} a_i)^2/"
                   "(K - N + l2 - l1 p_min) + sum_{i>=N-l2} a_i^2 (as printed)"},
    hypotheses=(positive_sorted_weights, budget_range, floor_feasible))


def _bisections(instances):
    """``[bisection_probabilities(a, budget, p_min) for each instance]``, the same numbers,
    with the instances of one size N bisected together."""
    out = [None] * len(instances)
    sizes = np.array([inst["a"].size for inst in instances])
    for n in np.unique(sizes):
        at = np.flatnonzero(sizes == n)
        rows = bisection_probabilities_rows(np.stack([instances[j]["a"] for j in at]),
                                            [instances[j]["budget"] for j in at],
                                            [instances[j]["p_min"] for j in at])
        for j, row in zip(at, rows, strict=True):
            out[j] = row
    return out


@claim("kvib.lemma_b8.floor_solution", ref="Lemma B.8, eqs. (25)-(27) (indices corrected)",
       corrects="kvib.lemma_b8.eq27_printed_indices",
       kind="statement", expected="holds", result=LEMMA_B8, parts=("solution",),
       statement="With a floor p_min <= K/N the optimum is p = clip(a/tau, p_min, 1) and its "
                 "value is sum_{i<=l1} a^2/p_min + (sum_{l1<i<=l2} a)^2/(K-N+l2-l1 p_min) "
                 "+ sum_{i>l2} a^2.",
       quick=dict(n_instances=300), full=dict(n_instances=10000))
def lemma_b8_floor_solution(*, rng, n_instances):
    """[003, Lemma B.8]. Our solver is compared with an independent bisection on tau, and the
    optimal value with the corrected eq. (27) (l1 = #floored, l2 = N - #capped). Expected
    **holds**. Tolerance: bisection to 200 halvings reaches machine precision; 1e-9 relative
    covers the difference of two float64 sums of N <= 200 terms with margin."""
    worst_p, worst_val, instances = 0.0, 0.0, []
    for _ in range(n_instances):
        a = random_weights(rng)
        k = random_budget(rng, a.size)
        instances.append(dict(a=a, budget=k, p_min=float(rng.uniform(0, k / a.size))))
    bisected = _bisections(instances)
    for inst, reference in zip(instances, bisected, strict=True):
        a, k, p_min = inst["a"], inst["budget"], inst["p_min"]
        n = a.size
        p = optimal_isp_probabilities(a, k, p_min=p_min)
        worst_p = max(worst_p, float(np.abs(p - reference).max()))
        s = np.sort(a)
        ps = np.sort(p)
        l1 = int(np.sum(ps <= p_min * (1 + 1e-12)))
        l2 = n - int(np.sum(ps >= 1 - 1e-12))
        l1 = min(l1, l2)
        value = (np.sum(s[:l1] ** 2) / p_min if l1 else 0.0) + np.sum(s[l2:] ** 2)
        if l2 > l1:
            value += s[l1:l2].sum() ** 2 / (k - n + l2 - l1 * p_min)
        obj = optimal_isp_objective(a, k, p_min=p_min)
        worst_val = max(worst_val, abs(value - obj) / obj)
    return Evidence(measured=[worst_p, worst_val], theoretical=[0.0, 0.0], relation="==",
                    instance=instances,
                    tolerance=Tolerance.rounding(1e-9, "bisection + sums of N <= 200 terms"),
                    details={"max_abs_dev_vs_bisection": worst_p, "max_rel_eq27_error": worst_val})


@claim("kvib.lemma_b8.eq27_printed_indices", ref="Lemma B.8, eq. (27) as printed",
       kind="proof-step", expected="violated", result=LEMMA_B8, parts=("eq27",),
       statement="Eq. (27): the optimal value has last term sum_{i >= N-l2} a_i^2.",
       quick=dict(), full=dict())
def lemma_b8_eq27_printed(*, rng):
    r"""The last sum of the printed eq. (27) runs over :math:`i\ge N-l_2`; the capped clients
    are :math:`i>l_2` (there are :math:`N-l_2` of them). Counterexample: a = (1, 3, 6), K = 2,
    p_min = 0: l1 = 0, l2 = 2, printed value 16 + (1+9+36) = 62, true optimum 16 + 36 = 52.
    Expected **violated** (index typo in a proof line; the corrected value is checked by
    ``kvib.lemma_b8.floor_solution``)."""
    a = np.array([1.0, 3.0, 6.0])
    n, k, l2 = 3, 2.0, 2
    printed = a[:l2].sum() ** 2 / (k - n + l2) + np.sum(a[n - l2 - 1:] ** 2)  # 1-indexed i>=N-l2
    true = optimal_isp_objective(a, k)
    return Evidence(measured=printed, theoretical=true, relation="==",
                    instance=dict(a=a, budget=k, p_min=0.0),
                    tolerance=Tolerance.rounding(10 * EPS * true, "a few ulp"),
                    details={"instance": {"a": a, "K": 2, "p_min": 0}, "printed": printed,
                             "optimum": true,
                             "smallest_instance": {
                                 "a": [1.0, 3.0], "K": 1.5, "p_min": 0.0, "l2": 1,
                                 "printed": 1.0 / 0.5 + 1.0 + 9.0,
                                 "optimum": optimal_isp_objective(np.array([1.0, 3.0]), 1.5),
                                 "why": "N = 2 with one capped client (K in (1, 2)); N = 1 "
                                        "has nothing to cap"}})
