r"""Corollaries B.1 and B.2 of K-Vib (the uncapped optimal values of Lemma B.8): the two
results, their parts, their hypotheses and the claim that checks both.

B.1: if :math:`Ka_N\le\sum_ia_i` and :math:`p_{\min}=0`, then :math:`l_1=0`, :math:`l_2=N`
and :math:`\min\Omega=(\sum_ia_i)^2/K`. B.2: if :math:`Ka_N\le\sum_ia_i` and
:math:`p_{\min}>0`, then :math:`l_2=N` and
:math:`\Omega^*\le K(\sum_ia_i)^2/(K-Np_{\min})^2`. Instances carry ``a``, ``budget`` and
``p_min`` (B.2's floor; B.1 is the same instance without a floor).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.sampling import (
    optimal_isp_objective,
    optimal_isp_probabilities,
)

from .conditions import positive_sorted_weights, uncapped
from .instances import random_weights
from .lemma_b8 import budget_range, floor_feasible


@hypothesis("floor", "p_min > 0")
def positive_floor(*, p_min):
    return bool(p_min > 0)


COR_B1 = result(
    "kvib.cor_b1", ref="Corollary B.1", title="uncapped optimal value without a floor",
    parts={"value": "l1 = 0, l2 = N and min Omega = (sum_i a_i)^2/K"},
    hypotheses=(positive_sorted_weights, budget_range, uncapped))
COR_B2 = result(
    "kvib.cor_b2", ref="Corollary B.2", title="uncapped optimal value with a floor",
    parts={"value": "l2 = N and Omega* <= ... <= K (sum_i a_i)^2/(K - N p_min)^2"},
    hypotheses=(positive_sorted_weights, budget_range, floor_feasible, uncapped, positive_floor))


@claim("kvib.corollary_b1_b2.uncapped_values", ref="Corollaries B.1 and B.2",
       kind="statement", expected="holds", parts=(COR_B1.part("value"), COR_B2.part("value")),
       statement="If K a_max <= sum a: with p_min = 0 the optimum is (sum a)^2/K; with "
                 "0 < p_min < K/N it is at most K (sum a)^2/(K - N p_min)^2.",
       quick=dict(n_instances=300), full=dict(n_instances=10000))
def corollary_b1_b2(*, rng, n_instances):
    """B.1 is an equality (rounding tolerance); B.2 an inequality that must hold on every
    instance. Measured: max relative error of B.1 and max of (value - B.2 bound)/bound."""
    err_b1, excess_b2, used, instances = 0.0, -np.inf, 0, []
    for _ in range(n_instances):
        a = random_weights(rng)
        n = a.size
        k = float(rng.uniform(1, n))
        if k * a.max() > a.sum():
            k = a.sum() / a.max() * rng.uniform(0.5, 1.0)
        if k <= 0.05:
            continue
        used += 1
        err_b1 = max(err_b1, abs(optimal_isp_objective(a, k) - a.sum() ** 2 / k)
                     / (a.sum() ** 2 / k))
        p_min = float(rng.uniform(0, k / n)) * 0.999
        instances.append(dict(a=a, budget=k, p_min=p_min))
        bound = k * a.sum() ** 2 / (k - n * p_min) ** 2
        excess_b2 = max(excess_b2, (optimal_isp_objective(a, k, p_min=p_min) - bound) / bound)
    return Evidence(measured=[err_b1, excess_b2], theoretical=[0.0, 0.0], relation="<=",
                    instance=instances,
                    tolerance=Tolerance.rounding(1e-12, "sums of N <= 200 terms"),
                    details={"instances_used": used})


def uncapped_top(a, k, p_min) -> float:
    """a_max / tau for the floor-only solution p_i = max(p_min, a_i/tau), sum p = K (no cap),
    by bisection on tau: l2 = N (nobody capped) iff this is <= 1 (= 1 is the tie where the
    largest client's proportional value is exactly the cap)."""
    a = np.asarray(a, dtype=float)
    lo, hi = a.max() * 1e-12, a.sum() / max(k - a.size * p_min, 1e-300) * 2 + a.max()
    add, maximum = np.add.reduce, np.maximum   # np.sum's reduction, without its dispatch
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if add(maximum(p_min, a / mid)) > k else (lo, mid)
    return float(a.max() / hi)


#: relative slack of the tie a_max/tau = 1 (bisection to 200 halvings, sums of N terms)
TIE = 1e-9


def _capped(p, a, k, p_min) -> bool:
    """Some client sits at 1 without being the tie of the uncapped formula."""
    return bool(p.max() >= 1 - 1e-12 and abs(uncapped_top(a, k, p_min) - 1) > TIE)


@claim("kvib.corollary_b1_b2.split_indices", ref="Corollaries B.1 and B.2 (l1, l2)",
       kind="statement", expected="holds", parts=(COR_B1.part("value"), COR_B2.part("value")),
       statement="If K a_max <= sum a: with p_min = 0 the optimum has l1 = 0 (no client at the "
                 "floor) and l2 = N (no client capped at 1); with 0 < p_min <= K/N it still has "
                 "l2 = N.",
       quick=dict(n_instances=1000), full=dict(n_instances=20000))
def split_indices(*, rng, n_instances):
    """The index statements of the corollaries, read on Lemma B.8's optimum (water-filling with
    a floor): l1 = the number of clients at the floor, N - l2 = the number capped at 1.
    Random weights (N up to 200) scaled into the uncapped regime; p_min uniform on (0, K/N]
    with a quarter of the instances at K/N (1 - 1e-9), the corner where the floor binds most.
    A client at 1 counts as capped unless it is the tie K a_max = sum a (its proportional
    value is then exactly 1; :func:`uncapped_top`). Measured: the number of instances
    breaking B.1's l1 = 0 or l2 = N, and B.2's l2 = N;
    both must be 0 (exact counts). Details: how many B.2 instances have a non-trivial floor
    (l1 > 0), so the check is not vacuous."""
    bad_b1 = bad_b2 = floored = 0
    instances = []
    for _ in range(n_instances):
        a = random_weights(rng)
        n = a.size
        k = float(rng.uniform(1, n))
        if k * a.max() > a.sum():
            k = a.sum() / a.max() * rng.uniform(0.5, 1.0)
        if k <= 0.05:
            continue
        p_min = k / n * ((1 - 1e-9) if rng.random() < 0.25 else float(rng.uniform(0, 1)))
        instances.append(dict(a=a, budget=k, p_min=p_min))
        p1 = optimal_isp_probabilities(a, k)
        bad_b1 += bool(np.any(p1 <= 0) or _capped(p1, a, k, 0.0))
        p2 = optimal_isp_probabilities(a, k, p_min=p_min)
        bad_b2 += _capped(p2, a, k, p_min)
        floored += bool(np.any(p2 <= p_min * (1 + 1e-12)))
    return Evidence(measured=[bad_b1, bad_b2], theoretical=[0, 0], relation="<=",
                    instance=instances, tolerance=Tolerance.exact("counts"),
                    details={"instances": len(instances), "b2_with_floored_clients": floored})
