r"""Definition C.1 of K-Vib (the optimal factor) with eq. (28): the result, its parts, its
hypotheses and its claims.

Eq. (28): uniform ISP has :math:`\delta_{\mathbb U}^t=\frac{N-K}K\sum_i\|\tilde g_i^t\|^2`;
eq. (29): :math:`\alpha_*^t=\delta_*^t/\delta_{\mathbb U}^t`, claimed
:math:`\le(\sum\|\tilde g\|)^2/(N\sum\|\tilde g\|^2)\le1` without capping; hence
:math:`\gamma^t=(\alpha_*^t\frac{N-K}K+N)W\in[NW,NW+\frac{N-K}KW]` (Theorem 4.1).
Instances carry ``a`` and ``budget``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, result
from flbounds.sampling import (
    optimal_factor,
    optimal_isp_variance,
    uniform_isp_variance,
)
from flbounds.sampling.exact import isp_moments
from flbounds.tolerances import EPS

from .conditions import budget_below_n, positive_weights, uncapped
from .instances import random_budget, random_weights
from .thm4_1 import THM4_1

DEF_C1 = result(
    "kvib.def_c1", ref="Definition C.1", title="the optimal factor alpha_* (eqs. (28)-(29))",
    parts={"eq28": "eq. (28): uniform ISP's variance delta_U = (N-K)/K sum_i ||g~_i||^2",
           "alpha_bound": "eq. (29): alpha_* = delta_*/delta_U <= (sum ||g~||)^2/(N sum "
                          "||g~||^2) <= 1 (Cauchy-Schwarz, no capping)",
           "gamma_range": "hence gamma^t = (alpha_* (N-K)/K + N) W in [NW, NW + (N-K)/K W]"},
    hypotheses=(positive_weights, budget_below_n, uncapped.only("alpha_bound")))


@claim("kvib.def_c1.gamma_range", ref="Def. C.1; Thm 4.1 (gamma^t range)", kind="statement",
       expected="holds",
       parts=(DEF_C1.part("gamma_range"), THM4_1.part("gamma_range")),
       statement="gamma^t = (alpha_* (N-K)/K + N) W lies in [N W, N W + (N-K)/K W].",
       quick=dict(n_instances=500), full=dict(n_instances=10000))
def gamma_range(*, rng, n_instances):
    """Follows from 0 <= alpha_* <= 1, which holds for every instance (capped or not) because
    p* minimizes the ISP variance and uniform K/N is feasible. Measured: min of alpha and max of
    alpha - 1 over random instances (including capped ones)."""
    lo, hi, instances = np.inf, -np.inf, []
    for _ in range(n_instances):
        a = random_weights(rng, 100)
        k = random_budget(rng, a.size)
        if k >= a.size:
            continue
        instances.append(dict(a=a, budget=k))
        alpha = optimal_factor(a, k)
        lo, hi = min(lo, alpha), max(hi, alpha - 1.0)
    return Evidence(instance=instances,
                    measured=[-lo, hi], theoretical=[0.0, 0.0], relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "ratio of sums"))


@claim("kvib.eq28.uniform_isp_variance_exact", ref="Def. C.1, eq. (28)", kind="statement",
       expected="holds",
       result=DEF_C1, parts=("eq28",),
       statement="Uniform ISP (p_i = K/N): E||sum_{i in S} z_i/p_i - sum_i z_i||^2 = "
                 "(N-K)/K sum_i ||z_i||^2 (delta_U, the denominator of alpha_*).",
       quick=dict(n_instances=12, max_clients=10), full=dict(n_instances=100, max_clients=12))
def uniform_isp_variance_exact(*, rng, n_instances, max_clients):
    """Random N in 2..max_clients, integer K in 1..N-1, z in R^3. Measured: the largest
    relative difference between ``uniform_isp_variance`` (and the delta_U inside
    ``optimal_factor``, recomputed as delta_*/alpha_*) and the variance from enumerating all
    2^N subsets. Tolerance: rounding of 2^N-term sums (1e3 2^N eps relative)."""
    worst, instances = 0.0, []
    for r in rng.spawn(n_instances):
        n = int(r.integers(2, max_clients + 1))
        k = int(r.integers(1, n))
        z = r.standard_normal((n, 3))
        a = np.linalg.norm(z, axis=1)
        instances.append(dict(a=a, budget=k))
        exact = isp_moments(z, np.full(n, k / n)).variance
        via_alpha = optimal_isp_variance(a, k) / optimal_factor(a, k)
        worst = max(worst, abs(uniform_isp_variance(a, k) - exact) / exact,
                    abs(via_alpha - exact) / exact)
    return Evidence(instance=instances,
                    measured=worst, theoretical=0.0, relation="<=",
                    tolerance=Tolerance.rounding(1e3 * 2**max_clients * EPS, "2^N-term sums"),
                    details={"n_instances": n_instances, "max_clients": max_clients})
