r"""Attack surfaces of K-Vib over the whole hypothesis domain of its variance results.

The regimes the first attacks (:mod:`verify.kvib.attacks`) leave out: eq. (5) where some
K a_i / sum a exceeds 1, the display before eq. (8) over every ISP in P_K, Lemma B.7 over
every proper design, Corollary B.2's split indices, Lemma B.6 per client up to N = 64, and
eq. (33) with the factor 2 over the joint laws of the two samples. Same conventions:
weights on a log scale, N cut from fixed-length vectors, K real.
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import Box, Integers, Simplex
from flbounds.sampling import optimal_isp_objective, optimal_isp_probabilities, rsp_bound

from .attacks import N_MAX, SUMS, WEIGHTS, _budget, _surface
from .thm4_1 import admissible_instance


def _eq5_above_one(*, a, n, k_frac):
    """Eq. (5) gives some p_i > 1 (the regime ``kvib.eq5.beyond_one`` checks)."""
    k = _budget(n, k_frac)
    return bool(np.any(k * a[:n] / a[:n].sum() > 1)) or "p = K a/sum a <= 1 everywhere"


@_surface("kvib.eq5.beyond_one",
                space={"a": WEIGHTS, "n": Integers(2, N_MAX), "k_frac": Box(0, 1)},
                validator=_eq5_above_one,
                instance=lambda *, a, n, k_frac: dict(a=a[:n], budget=_budget(n, k_frac)),
                tolerance=1e-12, tolerance_why=SUMS,
                fixed=[{"a": [1, 1, 20, 1, 1, 1, 1, 1], "n": 3, "k_frac": 0.5}])
def eq5_beyond_one(*, a, n, k_frac):
    """Optimal ISP variance over eq. (3)'s RSP side at eq. (5) where some K a_i/sum a > 1."""
    a, k = a[:n], _budget(n, k_frac)
    return (optimal_isp_objective(a, k) - np.sum(a * a)) / rsp_bound(k * a / a.sum(), a)


def _eq8_point(a, n, k_frac, w):
    """An ISP p in P_K (water-filled weights w, so every p_i <= 1) and the optimum p*."""
    a, k = a[:n], _budget(n, k_frac)
    return a, k, optimal_isp_probabilities(w[:n] + 1e-3, k), optimal_isp_probabilities(a, k)


@_surface("kvib.eq8.display_every_coupling",
                space={"a": Box(1e-2, 1e2, log=True, shape=5), "n": Integers(2, 5),
                       "k_frac": Box(0, 1), "w": Simplex(5)},
                instance=lambda *, a, n, k_frac, w: dict(zip(
                    ("a", "budget", "p", "p_star"), _eq8_point(a, n, k_frac, w), strict=True)),
                tolerance=1e-12, tolerance_why=SUMS, shrink=True,
                fixed=[{"a": [1, 2, 1, 1, 1], "n": 2, "k_frac": 0.0,
                        "w": [0.25, 0.75, 0, 0, 0]}],
                note="N <= 5: the estimators' laws are enumerated over 2^N sets")
def eq8_display(*, a, n, k_frac, w):
    """Smallest Q over joint laws (quantile coupling, d = 1) over l(p) - l(p*)."""
    from .eq8 import estimator_law, wasserstein2_squared

    a, k, p, p_star = _eq8_point(a, n, k_frac, w)
    rhs = float(np.sum(a * a / p) - np.sum(a * a / p_star))
    if rhs <= 1e-12 * float(np.sum(a * a / p_star)):
        return 0.0  # p = p*: both sides 0
    return wasserstein2_squared(*estimator_law(a, p), *estimator_law(a, p_star)) / rhs


def _design(n, weights):
    """A proper design on all subsets of n clients with the first 2^n ``weights``."""
    from flbounds.sampling.exact import all_masks

    masks = all_masks(n)
    probs = weights[:masks.shape[0]] + 1e-6
    return masks, probs / probs.sum()


@_surface("kvib.lemma_b7.general_design",
                space={"n": Integers(2, 5), "weights": Simplex(32),
                       "z": Box(-1e2, 1e2, shape=10)},
                instance=lambda *, n, weights, z: dict(zip(("masks", "probs"),
                                                           _design(n, weights), strict=True)),
                tolerance=1e-10, tolerance_why="eigenvalue bisection (40 halvings) and 2^N-term "
                "sums",
                fixed=[{"n": 3, "weights": [1 / 8] * 8 + [0] * 24, "z": [1.0] * 10}])
def lemma_b7_general(*, n, weights, z):
    """Exact variance over eq. (19)'s bound with the tightest admissible v of eq. (18)."""
    from flbounds.sampling.exact import design_moments

    from .lemma_b7 import _pair_matrix, tight_v

    masks, probs = _design(n, weights)
    P = _pair_matrix(masks, probs)
    p = np.diag(P).copy()
    v = tight_v(P - np.outer(p, p), p)
    vecs = np.asarray(z, dtype=float)[:2 * n].reshape(n, 2)
    bound = float(np.sum(v / p * np.sum(vecs * vecs, axis=1)))
    return design_moments(vecs, masks, probs).variance / bound if bound > 0 else 0.0


@_surface("kvib.corollary_b1_b2.split_indices",
                space={"a": WEIGHTS, "n": Integers(2, N_MAX), "k_frac": Box(0, 1),
                       "floor_frac": Box(0, 1)},
                instance=lambda *, a, n, k_frac, floor_frac: dict(
                    a=a[:n], budget=min(_budget(n, k_frac), a[:n].sum() / a[:n].max()),
                    p_min=floor_frac * min(_budget(n, k_frac), a[:n].sum() / a[:n].max()) / n),
                tolerance=1e-9, tolerance_why="bisection of tau; 1 is the tie K a_max = sum a",
                fixed=[{"a": [1, 1.5, 2, 1, 1, 1, 1, 1], "n": 3, "k_frac": 0.5,
                        "floor_frac": 0.99}])
def split_indices(*, a, n, k_frac, floor_frac):
    """B.2's l2 = N: the largest client's value a_max/tau in the floor-only solution (above 1
    it would be capped), K up to the corollaries' limit sum a / a_max, p_min up to K/N."""
    from .corollaries_b1_b2 import uncapped_top

    a = a[:n]
    k = min(_budget(n, k_frac), a.sum() / a.max())   # the corollaries' uncapped regime
    return uncapped_top(a, k, floor_frac * k / n)


def _drift_instance(c, n, R, step_frac):
    """One-dimensional quadratics f_i(x) = (x - c_i)^2/2 (L = 1), x^t = mean c, sigma_l = 0."""
    from flbounds.problems import Quadratic

    c = np.asarray(c, dtype=float)[:n]
    problem = Quadratic(np.ones((n, 1, 1)), c[:, None])
    g = c.mean() - c
    return c, dict(problem=problem, lam=np.full(n, 1.0 / n), L=1.0,
                   sigma_g2=float(np.mean((g - g.mean()) ** 2)), sigma_l2=0.0,
                   local_noise=0.0, R=R, step=step_frac / (8 * R))


@_surface("kvib.lemma_b6.per_client",
                space={"c": Box(-1e2, 1e2, shape=64), "n": Integers(2, 64), "R": Integers(2, 10),
                       "step_frac": Box(1e-3, 1)},
                instance=lambda *, c, n, R, step_frac: _drift_instance(c, n, R, step_frac)[1],
                tolerance=1e-12, tolerance_why="R scalar GD steps, relative error < 1e-13",
                shrink=True, note="N up to 64: one outlier client needs N >= 33 to break the "
                "per-client bound (kvib.lemma_b6.per_client's details)",
                fixed=[{"c": [100.0] + [0.0] * 63, "n": 64, "R": 2, "step_frac": 1.0}])
def lemma_b6_per_client(*, c, n, R, step_frac):
    """Largest client drift after R local steps over Lemma B.6's per-client bound."""
    from .lemma_b6 import drift_bound

    c, inst = _drift_instance(c, n, R, step_frac)
    x, step = c.mean(), inst["step"]
    xi = np.full(n, x)
    for _ in range(R):
        xi = xi - step * (xi - c)
    bound = drift_bound(R=R, eta_l=step, sigma_l2=0.0, sigma_g2=inst["sigma_g2"], grad2=0.0)
    return float(np.max((xi - x) ** 2)) / bound if bound > 0 else 0.0


def _eq33_point(z, n, k_frac, w):
    """z (n, 2), an applied ISP p in P_K from weights w, the optimum p* of a = ||z||."""
    z = np.asarray(z, dtype=float)[:2 * n].reshape(n, 2)
    k = _budget(n, k_frac)
    return z, optimal_isp_probabilities(np.asarray(w)[:n] + 1e-3, k), \
        optimal_isp_probabilities(np.linalg.norm(z, axis=1) + 1e-12, k), k


@_surface("kvib.thm4_1.eq33_factor_two",
                space={"z": Box(-1e2, 1e2, shape=6), "n": Integers(2, 3), "k_frac": Box(0, 1),
                       "w": Simplex(3)},
                instance=lambda *, z, n, k_frac, w: (lambda zz, p, ps, k: admissible_instance(
                    L=1.0, R=2, step=1 / 16, centers=zz, budget=k, p=p, p_star=ps,
                    a=np.linalg.norm(zz, axis=1) + 1e-12))(*_eq33_point(z, n, k_frac, w)),
                tolerance=1e-12, tolerance_why="rounding of the ratio; the LP's feasibility "
                "error (HiGHS 1e-7 per outcome mass) is taken off the left side",
                fixed=[{"z": [0.5, 0.0, 0.5, 0.0, 0.0, 0.0], "n": 2, "k_frac": 0.0,
                        "w": [0.25, 0.75, 0.0]}])
def eq33_factor_two(*, z, n, k_frac, w):
    """E||X - Z||^2 over 2 Q + 2 E||Y - Z||^2 at the joint law of (S^t, S*) that maximises
    their gap (a linear program over the 4^N outcomes, both ISP marginals fixed, N <= 3)."""
    from .thm4_1.proof_gaps_descent import _eq33_coupling

    zz, p, p_star, _ = _eq33_point(z, n, k_frac, w)
    res = _eq33_coupling(zz, p, p_star, factor=2.0)
    rhs = 2 * (res["Q"] + res["E_Y_minus_Z_sq"])
    # the LP's error bound on the three expectations is taken off the left side (a gap below
    # it cannot be resolved), so the ratio's tolerance is rounding only
    lhs = max(res["E_X_minus_Z_sq"] - 3 * res["lp_error"], 0.0)
    return lhs / rhs if rhs > 0 else 0.0
