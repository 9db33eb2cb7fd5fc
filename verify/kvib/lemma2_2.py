r"""Lemma 2.2 of K-Vib (optimal sampling probability, Chen et al. 2020): the result, its parts,
its hypotheses and its claims.

Statement: with :math:`a_i=\lambda_i\|g_i^t\|`, :math:`0<a_1\le\dots\le a_N`, :math:`0<K\le N`
and :math:`l` the largest integer with :math:`0<K+l-N\le\sum_{i\le l}a_i/a_l`, eq. (4)
:math:`p_i^*=(K+l-N)a_i/\sum_{j\le l}a_j` (:math:`i\le l`), 1 otherwise, solves
:math:`\min_p\sum_ia_i^2/p_i` (over :math:`\sum p=K`, :math:`0<p\le1`); for RSP the optimum is
eq. (5), :math:`p_i^*=Ka_i/\sum_ja_j`. Instances carry ``a`` (one vector, or rows of vectors
sharing one budget) and ``budget``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.sampling import (
    optimal_isp_objective,
    optimal_isp_probabilities,
    rsp_bound,
)
from flbounds.tolerances import EPS

from .conditions import positive
from .guards import ROUNDING, _feedback
from .instances import random_budget, random_weights
from .printed_formulas import lemma22_printed_formula
from .sec3 import SEC3


@hypothesis("weights", "0 < a_1 <= ... <= a_N, a_i = lambda_i ||g_i^t|| (sorted for notation)")
def positive_weights(*, a):
    return positive(a)


@hypothesis("budget", "0 < K <= N")
def budget_range(*, a, budget):
    return bool(0 < budget <= np.shape(a)[-1] * (1 + 1e-12))


LEMMA2_2 = result(
    "kvib.lemma2_2", ref="Lemma 2.2", title="optimal ISP sampling probability (eq. (4))",
    parts={"optimum": "eq. (4) is a solution of min_p sum_i a_i^2/p_i over sum p = K, 0 < p <= 1",
           "rsp": "eq. (5): the optimal RSP probability is p_i = K a_i/sum_j a_j (the minimiser "
                  "of eq. (3)'s RSP side, p_i > 1 allowed: the multinomial's expected counts)",
           "conclusion": ("'the optimal client sampling in FL uses ISP with eq. (4)'",
                          "a conclusion drawn from Lemma 2.1 and eq. (4); see kvib.sec3")},
    hypotheses=(positive_weights, budget_range))


@claim("kvib.lemma2_2.compiled_optimum", ref="Lemma 2.2; Sec. 5.1 (dynamic regret)",
       kind="statement", expected="holds", result=LEMMA2_2, parts=("optimum",),
       statement="min_{p in P_K} sum_i pi_t(i)^2/p_i is attained by water-filling (Lemma 2.2): "
                 "the compiled per-round optimum of the regret claims equals it.",
       quick=dict(n_instances=6, n_rounds=200), full=dict(n_instances=40, n_rounds=2000))
def compiled_optimum(*, rng, n_instances, n_rounds):
    """Random N in 8..40, K in [N/4, 3N/4] (large enough that rounds have capped clients).
    Measured: the largest relative difference between sum_t min_p l_t(p) as the regret claims
    compute it (compiled water-filling) and the same sum from the Python solver
    (``optimal_isp_objective``) round by round. Tolerance: rounding."""
    worst, n_capped_rounds, instances = 0.0, 0, []
    for r in rng.spawn(n_instances):
        n = int(r.integers(8, 41))
        k = float(r.integers(n // 4, 3 * n // 4 + 1))
        fb = _feedback(r, n)
        fast = fb.sum_optimal_costs(n_rounds, k)
        values = [fb.values(t) for t in range(1, n_rounds + 1)]
        slow = sum(optimal_isp_objective(v, k) for v in values)
        n_capped_rounds += sum(int(k * v.max() > v.sum()) for v in values)
        worst = max(worst, abs(fast - slow) / slow)
        instances.append(dict(a=np.stack(values), budget=k))
    return Evidence(measured=worst, theoretical=0.0, relation="<=", tolerance=ROUNDING,
                    instance=instances,
                    details={"n_instances": n_instances, "rounds_with_capping": n_capped_rounds})


@claim("kvib.lemma2_2.closed_form", ref="Lemma 2.2, eq. (4)", kind="statement", expected="holds",
       result=LEMMA2_2, parts=("optimum",),
       statement="With l the largest integer with 0 < K+l-N <= sum_{i<=l} a_(i)/a_(l), "
                 "p_(i) = (K+l-N) a_(i)/sum_{j<=l} a_(j) (i <= l), 1 otherwise, minimizes "
                 "sum a_i^2/p_i over {0 < p <= 1, sum p = K}.",
       quick=dict(n_instances=400, n_random=200), full=dict(n_instances=20000, n_random=1000))
def lemma22_closed_form(*, rng, n_instances, n_random):
    r"""[003, Lemma 2.2]. The printed formula (evaluated literally by
    :func:`lemma22_printed_formula`) is compared with the water-filling solver and with random
    feasible points (Dirichlet times K, rejected if any entry exceeds 1).

    Expected **holds** (audit part B item 1: the formula is right, the off-by-one is only in the
    released code). Measured: max |printed - water-filling|, max |sum p - K|, and the largest
    relative amount by which any random feasible q beats the formula (must be <= 0).
    Tolerance: rounding of sums over N <= 200 terms, 1e3 N eps relative.
    """
    dev, sum_err, beaten, instances = 0.0, 0.0, -np.inf, []
    for _ in range(n_instances):
        a = random_weights(rng)
        n = a.size
        k = random_budget(rng, n)
        instances.append(dict(a=a, budget=k))
        p = lemma22_printed_formula(a, k)
        dev = max(dev, float(np.abs(p - optimal_isp_probabilities(a, k)).max()))
        sum_err = max(sum_err, abs(p.sum() - k) / k)
        best = np.sum(a * a / p)
        q = k * rng.dirichlet(np.ones(n), size=n_random // 10 + 1)
        q = q[np.all(q <= 1, axis=1)]
        if q.size:
            beaten = max(beaten, float(((best - np.sum(a * a / q, axis=1)) / best).max()))
    tol = 1e3 * 200 * EPS
    return Evidence(measured=[dev, sum_err, max(beaten, 0.0)], theoretical=[0.0, 0.0, 0.0],
                    relation="==", tolerance=Tolerance.rounding(tol, "1e3 N eps, N <= 200"),
                    instance=instances,
                    details={"max_abs_dev_vs_waterfilling": dev, "max_rel_sum_error": sum_err,
                             "max_rel_improvement_by_random_q": beaten})


@claim("kvib.lemma2_2.special_cases", ref="Lemma 2.2; Sec. 3 ('RSP is a special case of ISP')",
       kind="statement", expected="holds",
       result=LEMMA2_2, parts=("optimum", SEC3.part("rsp_special_case"), SEC3.part("asymptotic")),
       statement="(1,3,6) with K=2 gives (0.25,0.75,1); K=1 gives a/sum(a) (the RSP optimum "
                 "eq. (5)); K=N gives all ones.",
       quick=dict(n_instances=200), full=dict(n_instances=5000))
def lemma22_special_cases(*, rng, n_instances):
    """Regression instance of spec V1 plus the two limits of Sec. 3; exact up to rounding."""
    worst = float(np.abs(optimal_isp_probabilities([1.0, 3.0, 6.0], 2)
                         - np.array([0.25, 0.75, 1.0])).max())
    instances = [dict(a=np.array([1.0, 3.0, 6.0]), budget=2.0)]
    for _ in range(n_instances):
        a = random_weights(rng)
        instances += [dict(a=a, budget=1.0), dict(a=a, budget=float(a.size))]
        worst = max(worst, float(np.abs(optimal_isp_probabilities(a, 1) - a / a.sum()).max()),
                    float(np.abs(optimal_isp_probabilities(a, a.size) - 1.0).max()))
    return Evidence(measured=worst, theoretical=0.0, relation="==", instance=instances,
                    tolerance=Tolerance.rounding(1e3 * 200 * EPS, "1e3 N eps, N <= 200"))


#: Example 3.2's norms ||g_i|| and the budget (K = N) at which eq. (5) gives p_3 = 1.8
EXAMPLE32_A, EXAMPLE32_K = np.array([1.0, 3.0, 6.0]), 3


#: instances per cell of ``kvib.eq5.beyond_one`` (a cell is a task of its own)
BEYOND_ONE_CHUNK = 500


def _rsp_bounds(rows, a):
    """``[rsp_bound(p, a) for p in rows]`` as one array, the same numbers: each row's sums
    run over its own contiguous entries, in the order of the one-row call."""
    if rows.ndim != 2 or rows.shape[1] != a.size or not np.all(rows > 0):
        raise ValueError("rows must be positive, each with the length of a")
    n = a.size
    k = rows.sum(axis=1)
    return (n - k) / (n - 1) * np.sum(a * a / rows, axis=1)


def _beyond_one_grid(*, rng, n_instances, n_rivals):
    """The cells run as separate tasks: chunks of at most BEYOND_ONE_CHUNK instances."""
    sizes = [min(BEYOND_ONE_CHUNK, n_instances - i)
             for i in range(0, n_instances, BEYOND_ONE_CHUNK)]
    return [dict(chunk=j, n_instances=n, n_rivals=n_rivals) for j, n in enumerate(sizes)]


def _beyond_one_cell(*, rng, chunk, n_instances, n_rivals):
    """One chunk's instances (drawn from the cell's own generator) and its two worst
    relative excesses."""
    cases, skipped = [], 0
    while len(cases) < n_instances:
        a = random_weights(rng, 60)
        k = int(rng.integers(1, a.size))
        if np.max(k * a / a.sum()) > 1:
            cases.append((a, k))
        else:
            skipped += 1
    worst_min, worst_isp = -np.inf, -np.inf
    for a, k in cases:
        eq5 = rsp_bound(k * a / a.sum(), a)
        rivals = k * rng.dirichlet(np.ones(a.size), size=n_rivals)
        best_rival = float(_rsp_bounds(rivals, a).min())
        isp_min = optimal_isp_objective(a, k) - np.sum(a * a)
        if eq5 > 0:
            worst_min = max(worst_min, (eq5 - best_rival) / eq5)
            worst_isp = max(worst_isp, (isp_min - eq5) / eq5)
    return dict(worst_min=worst_min, worst_isp=worst_isp, skipped=skipped,
                cases=[[a, k] for a, k in cases])


@claim("kvib.eq5.beyond_one", ref="eq. (5) where K a_i/sum a > 1 (Example 3.2 at K = 3: "
       "p_3 = 1.8)", kind="statement", expected="holds",
       parts=(LEMMA2_2.part("rsp"), SEC3.part("tighter_bound")),
       statement="Where eq. (5) gives some p_i > 1 (the multinomial's expected count, allowed "
                 "for RSP), K < N: p = K a/sum a still minimises eq. (3)'s RSP side over {p > 0, "
                 "sum p = K}, and the ISP optimum (eq. (4), capped) stays below that minimum.",
       quick=dict(n_instances=500, n_rivals=50), full=dict(n_instances=5000, n_rivals=200),
       cells=dict(grid=_beyond_one_grid, run=_beyond_one_cell))
def eq5_beyond_one(*, rng, cells, n_instances, n_rivals):
    """Instances: random weights, K < N, whose eq. (5) exceeds 1 somewhere (others are
    skipped; their count is reported). Example 3.2's p_3 = 1.8 is at K = N = 3, where eq.
    (3)'s RSP side is 0 ((N - K)/(N - 1) = 0, the constant of sampling *without*
    replacement, Lemma B.7) while the with-replacement RSP the example runs has a positive
    variance: eq. (3) does not speak there (its numbers are in details). Measured: (i) the
    largest relative amount by which the RSP side at eq. (5) exceeds its value at any of
    ``n_rivals`` random points of {p > 0, sum p = K} (Dirichlet, uncapped): <= 0, since
    eq. (5) is the Cauchy-Schwarz minimiser; (ii) the largest relative excess of the optimal
    ISP variance over the RSP side at eq. (5): <= 0. The earlier check
    ``kvib.eq5.rsp_optimum_bound`` compares the two procedures at the same p only where
    eq. (5) <= 1 (ISP needs p <= 1). The instances are drawn and checked in chunks of
    BEYOND_ONE_CHUNK, each chunk a task of its own (``_beyond_one_cell``); this combines them."""
    instances = [dict(a=np.asarray(a), budget=k) for c in cells for a, k in c["cases"]]
    worst_min = max(float(c["worst_min"]) for c in cells)
    worst_isp = max(float(c["worst_isp"]) for c in cells)
    skipped = sum(c["skipped"] for c in cells)
    p32 = EXAMPLE32_K * EXAMPLE32_A / EXAMPLE32_A.sum()
    return Evidence(measured=[worst_min, worst_isp], theoretical=[0.0, 0.0], relation="<=",
                    instance=instances,
                    tolerance=Tolerance.rounding(1e-12, "sums of N <= 60 terms"),
                    details={"example32_p": p32, "example32_rsp_side": rsp_bound(p32, EXAMPLE32_A),
                             "example32_isp_optimum": optimal_isp_objective(
                                 EXAMPLE32_A, EXAMPLE32_K) - np.sum(EXAMPLE32_A**2),
                             "instances_with_p_above_1": len(instances),
                             "skipped_all_p_le_1": skipped})
