r"""Section III-A of SubTrunc (SubTrunc's objective): the result, its parts, its hypotheses and
its claims: eq. (9)'s triangle bound, eq. (10)'s facility location, and the roles of lam and
b in W = G + lam min(b, sum_S phi(f_i)) (eq. (13)), spec V1 and V6.

The limiting cases run deterministic greedy (ties to the lowest index) on random instances
and count instances whose selected set differs from the predicted one; exact (set
equality). Where the selection is random (stochastic greedy), the same plan (keys) is
shared by both objectives. Instances carry the gradients of eq. (9) (``g``, ``S``,
``sigma``, ``gamma``), or an ``objective`` and the budget ``k``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.selection import (
    FacilityLocation,
    SubTruncObjective,
    exhaustive_margins,
    greedy,
    stochastic_greedy,
    stochastic_greedy_plan,
)

from ._predicates import facility_offset_valid, offset_threshold, subtrunc_objective
from ._shared_limits import EXACT, FULL, QUICK, _instances, _mismatches
from .instances import gradient_points, random_dissim


@hypothesis("sigma", "sigma(i) is a nearest selected client (sigma(i) in argmin_{j in S} "
                     "||g_i - g_j||), C_j = sigma^-1(j), gamma_j = |C_j|, S nonempty")
def nearest_clusters(*, g, S, sigma, gamma):
    g, S, sigma = np.asarray(g), np.asarray(S), np.asarray(sigma)
    if S.size == 0:
        return False
    dist = np.linalg.norm(g[:, None, :] - g[None, S, :], axis=-1)
    own = np.linalg.norm(g - g[sigma], axis=-1)
    sizes = np.array([np.sum(sigma == j) for j in S])
    return bool(np.all(np.isin(sigma, S)) and np.allclose(own, dist.min(axis=1))
                and np.array_equal(sizes, np.asarray(gamma)))


@hypothesis("G", "G(S) = G-bar({}) - G-bar(S), G-bar({}) read as the phantom client or an "
                 "offset >= max_{j != e} sum_i max(d_ij, d_ie) (undefined as printed)")
def g_offset(*, objective):
    return facility_offset_valid(objective)


@hypothesis("W", "eq. (13): W = G + lam min(b, sum_S phi(f_i)), lam >= 0, b in R^+, "
                 "phi(f_i) >= 0")
def w_objective(*, objective):
    return subtrunc_objective(objective)


@hypothesis("lam0", "lam = 0")
def lam_zero(*, objective):
    return objective.lam == 0


@hypothesis("small_b", "b very small: b <= min_i phi(f_i), so min(b, F(S)) = b on every "
                       "nonempty S")
def small_b(*, objective):
    return objective.b <= float(objective.weights.min())


@hypothesis("large_b", "b very large (min(b, F(S)) = F(S) on every |S| <= k) and lam large "
                       "enough for H to order the picks: lam >= 2 max_e G({e}) / (smallest gap "
                       "between the phi(f_i))")
def large_b(*, objective, k):
    w = np.sort(objective.weights)
    g = FacilityLocation(objective.dissim, objective.offset)
    gap = float(np.diff(w).min())
    return (objective.b >= float(w[::-1][:k].sum()) and gap > 0
            and objective.lam >= 2 * float(g.gains(g.start(), np.arange(g.n)).max()) / gap
            * (1 - 1e-12))


SEC3A = result(
    "subtrunc.sec3a", ref="Section III-A", title="SubTrunc's objective, eqs. (9)-(10), and "
    "the role of b and lambda",
    parts={"eq9": "eq. (9): ||sum_N grad f_i - sum_S gamma_j grad f_j|| <= sum_i min_{j in S} "
                  "||grad f_i - grad f_j|| = G-bar(S)",
           "eq10": "eq. (10): G(S) = G-bar({}) - G-bar(S) is the facility location monotone "
                   "submodular function",
           "lam0": "lam = 0 gives the original DivFL formulation",
           "small_b": "a very small b makes H(S) = lam b independent of S: the selection is "
                      "independent of local performance (DivFL's)",
           "large_b": "a very large b makes H = lam F, maximized by the worst-performing "
                      "(highest-loss) clients"},
    hypotheses=(nearest_clusters.only("eq9"), g_offset.only("eq10"),
                w_objective.only("lam0", "small_b", "large_b"), lam_zero.only("lam0"),
                small_b.only("small_b"), large_b.only("large_b")))


@claim("subtrunc.eq9.triangle_bound", ref="Sec. III-A, eq. (9)", kind="statement",
       expected="holds", result=SEC3A, parts=("eq9",),
       statement="||sum_N g_i - sum_S gamma_j g_j|| <= sum_i min_{j in S} ||g_i - g_j|| with "
                 "nearest-representative clusters C_j and gamma_j = |C_j|.",
       quick=dict(n_instances=200, dims=(2, 10, 100)),
       full=dict(n_instances=5000, dims=(2, 10, 100)))
def triangle_bound(*, rng, n_instances, dims):
    """Eq. (9) follows from the triangle inequality once sigma(i) is a nearest selected client.

    Random heterogeneous gradients (d in {2, 10, 100}), random n and S. Expected ``holds``;
    tolerance: rounding relative to the right-hand side.
    """
    lhs, rhs, instances = [], [], []
    for r in rng.spawn(n_instances):
        dim = int(r.choice(dims))
        n = int(r.integers(2, 40))
        g = gradient_points(r, n, dim)
        S = r.choice(n, size=int(r.integers(1, n + 1)), replace=False)
        dist = np.linalg.norm(g[:, None, :] - g[None, S, :], axis=-1)
        sigma = S[np.argmin(dist, axis=1)]
        gamma = np.bincount(sigma, minlength=n)[S]
        instances.append(dict(g=g, S=S, sigma=sigma, gamma=gamma))
        lhs.append(np.linalg.norm(g.sum(axis=0) - gamma @ g[S]))
        rhs.append(dist.min(axis=1).sum())
    lhs, rhs = np.array(lhs), np.array(rhs)
    return Evidence(measured=lhs, theoretical=rhs, relation="<=", instance=instances,
                    tolerance=Tolerance.rounding(1e-9 * max(1.0, rhs.max()),
                                                 "1e-9 x largest right-hand side"),
                    details={"max_ratio_lhs_over_rhs": float(np.max(lhs[rhs > 0] / rhs[rhs > 0])),
                             "n_instances": n_instances})


@claim("subtrunc.prop3.control_small_offset", ref="Sec. III-A, eq. (10) (negative control)",
       kind="remark", expected="holds", result=SEC3A, parts=("eq10",),
       outside={"G": "negative control: an offset 0.9 x the threshold, to show (10) needs it"},
       statement="G(S) = C - sum_i min_{j in S} d_ij needs a large offset: with "
                 "C < max_{j,e} sum_i max(d_ij, d_ie) it fails diminishing returns at {}.",
       quick=dict(n_instances=20, n=8), full=dict(n_instances=200, n=10))
def prop3_small_offset(*, rng, n_instances, n):
    """Negative control: G-bar({}) is undefined in the paper; an offset C just below the
    first-step threshold T = max_{j,e} sum_i max(d_ij, d_ie) gives Delta(e|{}) < Delta(e|{j})
    for the maximizing pair. Every instance must show a violation larger than rounding
    (measured = smallest violation size >= 1e-9 relative), so ``holds`` is expected."""
    sizes, instances = [], []
    for r in rng.spawn(n_instances):
        d = random_dissim(r, n)
        thresh = offset_threshold(d)
        g = FacilityLocation(d, offset=0.9 * thresh)
        instances.append(dict(objective=g))
        sizes.append(-exhaustive_margins(g).dr_min / max(1.0, g.value(range(n))))
    return Evidence(measured=min(sizes), theoretical=1e-9, relation=">=",
                    tolerance=Tolerance.exact("threshold is the rounding level itself"),
                    instance=instances,
                    details={"offset": "0.9 x first-step threshold",
                             "violation_sizes_min_max": [min(sizes), max(sizes)]})


@claim("subtrunc.limits.lam0_is_divfl", ref="Sec. III-A (after Prop 3)", kind="remark",
       expected="holds", result=SEC3A, parts=("lam0",),
       statement="lam = 0 recovers DivFL's selection.",
       quick=QUICK, full=FULL)
def lam0(*, rng, n_instances, n, k):
    """W = G when lam = 0: greedy and stochastic greedy (shared plan, r = n/10 rounded up)
    select DivFL's set on every instance. Expected ``holds`` (exact)."""
    pairs, instances = [], []
    for r, d, w in _instances(rng, n_instances, n):
        g, f = FacilityLocation(d), SubTruncObjective(d, w, lam=0.0, b=1.1)
        instances.append(dict(objective=f, k=k))
        keys = stochastic_greedy_plan(r, n, k)
        size = max(1, n // 10)
        pairs += [(greedy(f, k), greedy(g, k)),
                  (stochastic_greedy(f, k, sample_size=size, keys=keys),
                   stochastic_greedy(g, k, sample_size=size, keys=keys))]
    count, example = _mismatches(pairs)
    return Evidence(measured=count, theoretical=0, relation="==", tolerance=EXACT,
                    instance=instances,
                    details={"n_comparisons": len(pairs), "first_mismatch": example})


@claim("subtrunc.limits.tiny_b_is_divfl", ref="Sec. III-A (role of b)", kind="remark",
       expected="holds", result=SEC3A, parts=("small_b",),
       statement="A very small b (b <= min_i phi(f_i)) makes H constant on nonempty sets, so "
                 "the selection is DivFL's.", quick=QUICK, full=FULL)
def tiny_b(*, rng, n_instances, n, k):
    """With b <= min_i phi(f_i), H(S) = lam b for every nonempty S: every first-step gain is
    shifted by the same lam b and later gains not at all. Expected ``holds`` (exact)."""
    pairs, instances = [], []
    for r, d, w in _instances(rng, n_instances, n):
        f = SubTruncObjective(d, w, lam=float(r.uniform(0.1, 10)), b=0.999 * w.min() + 1e-300)
        pairs.append((greedy(f, k), greedy(FacilityLocation(d), k)))
        instances.append(dict(objective=f, k=k))
    count, example = _mismatches(pairs)
    return Evidence(measured=count, theoretical=0, relation="==", tolerance=EXACT,
                    instance=instances,
                    details={"n_comparisons": len(pairs), "first_mismatch": example})


@claim("subtrunc.limits.huge_lam_b_is_topk", ref="Sec. III-A (role of b and lam)",
       kind="remark", expected="holds", result=SEC3A, parts=("large_b",),
       statement="Huge lam and b select the k highest-loss clients.", quick=QUICK, full=FULL)
def huge_lam(*, rng, n_instances, n, k):
    """With b >= sum of the top-k phi(f_i) the truncation never binds, and with
    lam > 2 max_e G({e}) / (smallest gap between sorted phi values) the H gain dominates
    every G gain difference, so greedy takes clients in decreasing loss order.
    Expected ``holds`` (exact)."""
    pairs, instances = [], []
    for _, d, w in _instances(rng, n_instances, n):
        g = FacilityLocation(d)
        gap = np.diff(np.sort(w)).min()
        lam = 2.0 * g.gains(g.start(), np.arange(n)).max() / gap
        f = SubTruncObjective(d, w, lam=lam, b=float(w.sum()))
        pairs.append((greedy(f, k), np.argsort(-w)[:k].tolist()))
        instances.append(dict(objective=f, k=k))
    count, example = _mismatches(pairs)
    return Evidence(measured=count, theoretical=0, relation="==", tolerance=EXACT,
                    instance=instances,
                    details={"n_comparisons": len(pairs), "first_mismatch": example})
