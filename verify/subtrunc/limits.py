r"""Limiting cases of SubTrunc and UnionFL stated in Sec. III of [004] (spec V6-V7).

Each claim runs deterministic greedy (ties to the lowest index) on random instances and
counts instances whose selected set differs from the predicted one; exact (set equality),
so the tolerance is zero. Where the selection is random (stochastic greedy), the same plan
(keys) is shared by both objectives.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.selection import (
    FacilityLocation,
    SubTruncObjective,
    UnionFLObjective,
    greedy,
    phi_values,
    stochastic_greedy,
    stochastic_greedy_plan,
)

from .instances import random_dissim, random_losses

EXACT = Tolerance.exact("set equality of selected clients")
QUICK, FULL = dict(n_instances=60, n=30, k=6), dict(n_instances=1000, n=100, k=10)


def _instances(rng, n_instances, n):
    for r in rng.spawn(n_instances):
        d = random_dissim(r, n)
        yield r, d, phi_values(random_losses(r, n), "log1p")


def _mismatches(pairs) -> tuple[int, list]:
    bad = [(a, b) for a, b in pairs if set(a) != set(b)]
    return len(bad), bad[:1]


@claim("subtrunc.limits.lam0_is_divfl", ref="Sec. III-A (after Prop 3)", kind="remark",
       expected="holds", statement="lam = 0 recovers DivFL's selection.",
       quick=QUICK, full=FULL)
def lam0(*, rng, n_instances, n, k):
    """W = G when lam = 0: greedy and stochastic greedy (shared plan, r = n/10 rounded up)
    select DivFL's set on every instance. Expected ``holds`` (exact)."""
    pairs = []
    for r, d, w in _instances(rng, n_instances, n):
        g, f = FacilityLocation(d), SubTruncObjective(d, w, lam=0.0, b=1.1)
        keys = stochastic_greedy_plan(r, n, k)
        size = max(1, n // 10)
        pairs += [(greedy(f, k), greedy(g, k)),
                  (stochastic_greedy(f, k, sample_size=size, keys=keys),
                   stochastic_greedy(g, k, sample_size=size, keys=keys))]
    count, example = _mismatches(pairs)
    return Evidence(measured=count, theoretical=0, relation="==", tolerance=EXACT,
                    details={"n_comparisons": len(pairs), "first_mismatch": example})


@claim("subtrunc.limits.tiny_b_is_divfl", ref="Sec. III-A (role of b)", kind="remark",
       expected="holds",
       statement="A very small b (b <= min_i phi(f_i)) makes H constant on nonempty sets, so "
                 "the selection is DivFL's.", quick=QUICK, full=FULL)
def tiny_b(*, rng, n_instances, n, k):
    """With b <= min_i phi(f_i), H(S) = lam b for every nonempty S: every first-step gain is
    shifted by the same lam b and later gains not at all. Expected ``holds`` (exact)."""
    pairs = []
    for r, d, w in _instances(rng, n_instances, n):
        f = SubTruncObjective(d, w, lam=float(r.uniform(0.1, 10)), b=0.999 * w.min() + 1e-300)
        pairs.append((greedy(f, k), greedy(FacilityLocation(d), k)))
    count, example = _mismatches(pairs)
    return Evidence(measured=count, theoretical=0, relation="==", tolerance=EXACT,
                    details={"n_comparisons": len(pairs), "first_mismatch": example})


@claim("subtrunc.limits.huge_lam_b_is_topk", ref="Sec. III-A (role of b and lam)",
       kind="remark", expected="holds",
       statement="Huge lam and b select the k highest-loss clients.", quick=QUICK, full=FULL)
def huge_lam(*, rng, n_instances, n, k):
    """With b >= sum of the top-k phi(f_i) the truncation never binds, and with
    lam > 2 max_e G({e}) / (smallest gap between sorted phi values) the H gain dominates
    every G gain difference, so greedy takes clients in decreasing loss order.
    Expected ``holds`` (exact)."""
    pairs = []
    for _, d, w in _instances(rng, n_instances, n):
        g = FacilityLocation(d)
        gap = np.diff(np.sort(w)).min()
        lam = 2.0 * g.gains(g.start(), np.arange(n)).max() / gap
        f = SubTruncObjective(d, w, lam=lam, b=float(w.sum()))
        pairs.append((greedy(f, k), np.argsort(-w)[:k].tolist()))
    count, example = _mismatches(pairs)
    return Evidence(measured=count, theoretical=0, relation="==", tolerance=EXACT,
                    details={"n_comparisons": len(pairs), "first_mismatch": example})


@claim("subtrunc.limits.mu0_is_divfl", ref="Sec. III-B", kind="remark", expected="holds",
       statement="mu = 0 turns UnionFL into DivFL.", quick=QUICK, full=FULL)
def mu0(*, rng, n_instances, n, k):
    """h_t = G when mu = 0, whatever the window. Expected ``holds`` (exact)."""
    pairs = []
    for r, d, _ in _instances(rng, n_instances, n):
        h = UnionFLObjective(d, r.random(n) < 0.5, mu=0.0)
        pairs.append((greedy(h, k), greedy(FacilityLocation(d), k)))
    count, example = _mismatches(pairs)
    return Evidence(measured=count, theoretical=0, relation="==", tolerance=EXACT,
                    details={"n_comparisons": len(pairs), "first_mismatch": example})


@claim("subtrunc.limits.large_mu_avoids_window", ref="Sec. III-B", kind="remark",
       expected="holds",
       statement="A large mu steers selection away from clients picked within the window.",
       quick=QUICK, full=FULL)
def large_mu(*, rng, n_instances, n, k):
    """With mu > max_e G({e}) >= every G gain and |N minus U_t| >= k, any e outside U_t beats
    any e inside, so S_t cap U_t is empty. Measured: total |S_t cap U_t| over instances, 0
    expected (exact)."""
    overlap = 0
    for r, d, _ in _instances(rng, n_instances, n):
        recent = np.zeros(n, dtype=bool)
        recent[r.choice(n, size=n - k, replace=False)] = True
        g = FacilityLocation(d)
        h = UnionFLObjective(d, recent, mu=1.01 * g.gains(g.start(), np.arange(n)).max())
        overlap += int(recent[greedy(h, k)].sum())
    return Evidence(measured=overlap, theoretical=0, relation="==", tolerance=EXACT,
                    details={"window_share": "|U_t| = n - k (tightest case)"})
