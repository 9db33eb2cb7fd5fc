r"""Attack surfaces of SubTrunc's repaired statements: the corrected intro claim
(nondecreasing concave of monotone submodular is submodular), the distorted-greedy
guarantee on UnionFL's :math:`h_t = G - c` (Harshaw et al. 2019) and the Cauchy-Schwarz
repair of eq. (31) (exact on the claim's cosine family).

Both are margin claims, attacked as ``1 - min scaled margin`` (above 1 exactly when a margin is
negative beyond rounding), over instances built the way the claims build theirs but with every
ingredient searched: client points (their distances are the dissimilarities), n up to 8 or 10,
the budget K up to n, U_t any subset, mu over two decades of the instance's scale, and psi over
three nondecreasing concave families with their parameter.
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import Box, Integers, attack_surface
from flbounds.ledger.api.judge import judge
from flbounds.ledger.api.registry import get
from flbounds.selection import (
    Composed,
    FacilityLocation,
    UnionFLObjective,
    WeightedCoverage,
    brute_force_max,
    distorted_greedy,
    exhaustive_margins,
)

from ._common import ROUNDING, _scaled
from .instances import distances
from .lemma1 import cosine_instance, eq31_closed_form
from .sec3c.greedy_h import _distorted_target, _windows_for

N_SEC2, N_UNION = 8, 10


def _psi(kind, shape, cap):
    """Nondecreasing concave psi: (x + 1e-3)^a with a in (0, 1], log1p(x / s), min(x, c);
    kind 3, (x + 1e-3)^(1 + a), is convex: outside the hypotheses (the predicate rejects it)."""
    if kind == 3:
        return lambda x, a=shape: np.power(np.asarray(x, dtype=float) + 1e-3, 1 + a)
    if kind == 0:
        return lambda x, a=shape: np.power(np.asarray(x, dtype=float) + 1e-3, a)
    if kind == 1:
        return lambda x, s=shape: np.log1p(np.asarray(x, dtype=float) / s)
    return lambda x, c=cap: np.minimum(np.asarray(x, dtype=float), c)


def _sec2_f(points, covers, weights, n, family):
    if family == 0:
        return FacilityLocation(distances(np.asarray(points)[:n]))
    return WeightedCoverage(np.asarray(covers)[:n] < 0.3, np.asarray(weights))


def sec2_instance(*, points, covers, weights, n, family, psi, shape, cap_frac):
    """The values Sec. II's hypotheses read: f (submodular) and psi (concave on f's values)."""
    f = _sec2_f(points, covers, weights, n, family)
    return dict(f=f, psi=_psi(psi, shape, cap_frac * f.value(range(n))))


SEC2_SPACE = {"points": Box(-3, 3, shape=(N_SEC2, 2)), "covers": Box(0, 1, shape=(N_SEC2, 12)),
              "weights": Box(0.01, 5, shape=12), "n": Integers(2, N_SEC2),
              "family": Integers(0, 1), "psi": Integers(0, 3), "shape": Box(0.05, 1),
              "cap_frac": Box(0.0, 1.0)}
SEC2_FIXED = [{"points": np.eye(N_SEC2, 2), "covers": np.full((N_SEC2, 12), 0.2),
               "weights": np.ones(12), "n": 4, "family": 0, "psi": 2, "shape": 0.5,
               "cap_frac": 0.5}]


@attack_surface("subtrunc.intro.nondecreasing_concave", space=SEC2_SPACE, fixed=SEC2_FIXED,
                # full budget: seeds 0 and 1 at 800 evaluations reach 1 / 1,
                # within 1e-3 of it from evaluation 1 / 1; 200 >= twice that
                budget={"quick": 150, "full": 200},
                instance=sec2_instance, tolerance=ROUNDING.value,
                tolerance_why=ROUNDING.derivation,
                note="facility location or weighted coverage, n <= 8, psi = (x + 1e-3)^a, "
                     "log1p(x / s) or min(x, c) with a, s, c searched (c from 0 to f(N))")
def nondecreasing_concave(*, points, covers, weights, n, family, psi, shape, cap_frac):
    """1 - the smallest DR margin of psi(f(S)) divided by max(1, |f(N)|) (exhaustive)."""
    inst = sec2_instance(points=points, covers=covers, weights=weights, n=n, family=family,
                         psi=psi, shape=shape, cap_frac=cap_frac)
    f = inst["f"]
    return 1.0 - _scaled(exhaustive_margins(Composed(inst["psi"], f)), f)[0]


def union_instance(*, points, n, k, recent, mu_scale):
    """The values Sec. III-C's ``greedy_h`` hypotheses read (the cardinality reading is
    outside this repair: it compares with a target T, not OPT)."""
    d = distances(np.asarray(points)[:n])
    scale = float(d.max(axis=1).sum() / n)
    h = UnionFLObjective(d, np.asarray(recent)[:n] > 0.5, mu=float(mu_scale) * scale)
    return dict(objective=h, k=int(k), window=_windows_for(h.recent, int(k)))


def union_valid(**point):
    """Every hypothesis of the claim's parts true at the point, except those the claim
    declares outside on purpose (the judge lists those as not evaluated)."""
    claim = get("subtrunc.unionfl.distorted_greedy")
    verdict = judge(claim.parts, union_instance(**point), claim.outside)
    bad = [label for label in verdict.failed + verdict.unevaluated
           if not str(verdict.table[label]).startswith("outside on purpose")
           or label in verdict.failed]
    return "; ".join(bad) if bad else True


UNION_SPACE = {"points": Box(-3, 3, shape=(N_UNION, 3)), "n": Integers(2, N_UNION),
               "k": Integers(1, N_UNION), "recent": Box(0, 1, shape=N_UNION),
               "mu_scale": Box(1e-2, 4, log=True)}
UNION_FIXED = [{"points": np.eye(N_UNION, 3), "n": 6, "k": 3,
                "recent": np.linspace(0, 1, N_UNION), "mu_scale": 1.0}]


@attack_surface("subtrunc.unionfl.distorted_greedy", space=UNION_SPACE, fixed=UNION_FIXED,
                validator=union_valid, tolerance=1e-9,
                tolerance_why="the claim's: relative rounding of value sums",
                budget={"quick": 150, "full": 1500},
                note="UnionFL h_t = G - mu |U_t cap S| with n <= 10, 1 <= K_t <= n, U_t any "
                     "subset, mu over 2.6 decades of the mean largest distance")
def distorted_guarantee(*, points, n, k, recent, mu_scale):
    """1 - (h(distorted greedy) - max_{|T| <= k} ((1 - 1/e) G(T) - c(T))) / max(1, |max|)."""
    h = union_instance(points=points, n=n, k=k, recent=recent, mu_scale=mu_scale)["objective"]
    best, _ = brute_force_max(_distorted_target(h), int(k))
    return 1.0 - (h.value(distorted_greedy(h, int(k))) - best) / max(1.0, abs(best))


# ---- the Cauchy-Schwarz repair of (31), exact on the cosine family ----

@attack_surface("subtrunc.eq31.corrected",
                # full budget: seeds 0 and 1 at 300 evaluations reach 0.5810884112 / 0.5810884112,
                # within 1e-3 of it from evaluation 1 / 1; 200 >= twice that
                budget={"quick": 60, "full": 200},
                space={"step": Box(1e-4, 0.25, log=True), "n_clients": Integers(1, 16)},
                instance=lambda *, step, n_clients: dict(cosine_instance(n_clients, step),
                                                         bias_sq=0.0, gamma=0.0),
                tolerance=1e-14, tolerance_why="closed forms of exp in float64 (as the claim)",
                fixed=[{"step": s, "n_clients": 1} for s in (0.01, 0.05, 1 / 6)],
                note="the claim's family (n identical clients 1 + cos w, all selected: gamma = 0, "
                     "tau = 2, sigma = 1) in "
                     "closed form, eta up to 0.25 (above 1/6 = 1/(3 L E) rejected), n <= 16")
def eq31_repair(*, step, n_clients):
    """Exact E||u_hat_0 + u_hat_1||^2 over tau sum E||u_t||^2 + tau^2 sigma^2/n."""
    lhs, _, repaired = eq31_closed_form(step, n_clients)
    return lhs / repaired
