r"""Section III-B of SubTrunc (UnionFL's window objective, eq. (14)): the result, its parts, its
hypotheses and its claims on the role of mu (spec V7).

:math:`\max_{S_t \subseteq N_t} f_t(S_t) - \mu g_t(S_t)` s.t. :math:`|S_t| \le K_t`, with
:math:`g_t(S) = |(\cup_{i \in u_t} S_i) \cap S|` and :math:`f_t` the facility location of
(10). "If we set mu = 0, then we obtain a typical submodular maximization problem under a
cardinality constraint. However, increasing mu ..." penalizes the clients picked within the
window. Instances carry the ``objective`` (a :class:`~flbounds.selection.UnionFLObjective`)
and the budget ``k``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, claim, hypothesis, result
from flbounds.selection import FacilityLocation, UnionFLObjective, greedy

from ._predicates import unionfl_objective
from ._shared_limits import EXACT, FULL, QUICK, _instances, _mismatches


@hypothesis("h_t", "eq. (14): h_t = f_t - mu g_t, f_t the facility location of (10), mu >= 0")
def h_objective(*, objective):
    return unionfl_objective(objective)


@hypothesis("mu0", "mu = 0")
def mu_zero(*, objective):
    return objective.mu == 0


@hypothesis("large_mu", "mu larger than every gain of f_t (mu > max_e f_t({e})) and at least "
                        "K_t clients outside U_t")
def large_mu_regime(*, objective, k):
    g = objective.submodular_part
    top = float(g.gains(g.start(), np.arange(g.n)).max())
    return objective.mu > top and int((~objective.recent).sum()) >= k


SEC3B = result(
    "subtrunc.sec3b", ref="Section III-B", title="UnionFL's window objective, eq. (14), and "
    "the role of mu",
    parts={"mu0": "mu = 0 gives a typical submodular maximization under a cardinality "
                  "constraint (DivFL's selection)",
           "large_mu": "increasing mu steers the selection away from clients picked within "
                       "the window u_t",
           "diversity": "the penalty diversifies solutions: clients unpicked within u_t are "
                        "favoured, so participation evens out (more with a longer window)"},
    hypotheses=(h_objective.only("mu0", "large_mu"), mu_zero.only("mu0"),
                large_mu_regime.only("large_mu")))


@claim("subtrunc.limits.mu0_is_divfl", ref="Sec. III-B", kind="remark", expected="holds",
       result=SEC3B, parts=("mu0",), statement="mu = 0 turns UnionFL into DivFL.",
       quick=QUICK, full=FULL)
def mu0(*, rng, n_instances, n, k):
    """h_t = G when mu = 0, whatever the window. Expected ``holds`` (exact)."""
    pairs, instances = [], []
    for r, d, _ in _instances(rng, n_instances, n):
        h = UnionFLObjective(d, r.random(n) < 0.5, mu=0.0)
        pairs.append((greedy(h, k), greedy(FacilityLocation(d), k)))
        instances.append(dict(objective=h, k=k))
    count, example = _mismatches(pairs)
    return Evidence(measured=count, theoretical=0, relation="==", tolerance=EXACT,
                    instance=instances,
                    details={"n_comparisons": len(pairs), "first_mismatch": example})


@claim("subtrunc.limits.large_mu_avoids_window", ref="Sec. III-B", kind="remark",
       expected="holds", result=SEC3B, parts=("large_mu",),
       statement="A large mu steers selection away from clients picked within the window.",
       quick=QUICK, full=FULL)
def large_mu(*, rng, n_instances, n, k):
    """With mu > max_e G({e}) >= every G gain and |N minus U_t| >= k, any e outside U_t beats
    any e inside, so S_t cap U_t is empty. Measured: total |S_t cap U_t| over instances, 0
    expected (exact)."""
    overlap, instances = 0, []
    for r, d, _ in _instances(rng, n_instances, n):
        recent = np.zeros(n, dtype=bool)
        recent[r.choice(n, size=n - k, replace=False)] = True
        g = FacilityLocation(d)
        h = UnionFLObjective(d, recent, mu=1.01 * g.gains(g.start(), np.arange(n)).max())
        overlap += int(recent[greedy(h, k)].sum())
        instances.append(dict(objective=h, k=k))
    return Evidence(measured=overlap, theoretical=0, relation="==", tolerance=EXACT,
                    instance=instances,
                    details={"window_share": "|U_t| = n - k (tightest case)"})
