r"""K-Vib's compiled paths against their literal counterparts ([003] Lemma 2.2, Algorithm 2).

The online experiments run K-Vib through a compiled loop (:func:`flbounds.sampling.online.
kvib_online`) and sum per-round optima with a compiled water-filling; the sampler class
:class:`flbounds.sampling.KVib`, driven round by round, transcribes Algorithm 2 line by line
on the Python solver of Lemma 2.2. Both claim the same numbers (same random stream), so the
regret claims built on the compiled loop are claims about Algorithm 2 only if they agree.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling import (
    KVib,
    optimal_factor,
    optimal_isp_objective,
    optimal_isp_variance,
    uniform_isp_variance,
)
from flbounds.sampling.exact import isp_moments
from flbounds.sampling.online import Assumption51Feedback, kvib_online, run_online
from flbounds.tolerances import EPS

ROUNDING = Tolerance.rounding(1e-9, "relative; sums of <= 10^4 float64 terms, each from a "
                              "water level solved to rounding (~N eps), differ by << 1e-9")


def _feedback(rng, n):
    """Assumption 5.1 feedback with heavy-tailed levels, so water-filling caps some clients."""
    return Assumption51Feedback.generate(rng, n, profile="lognormal")


@claim("kvib.lemma2_2.compiled_optimum", ref="Lemma 2.2; Sec. 5.1 (dynamic regret)",
       kind="statement", expected="holds",
       statement="min_{p in P_K} sum_i pi_t(i)^2/p_i is attained by water-filling (Lemma 2.2): "
                 "the compiled per-round optimum of the regret claims equals it.",
       quick=dict(n_instances=6, n_rounds=200), full=dict(n_instances=40, n_rounds=2000))
def compiled_optimum(*, rng, n_instances, n_rounds):
    """Random N in 8..40, K in [N/4, 3N/4] (large enough that rounds have capped clients).
    Measured: the largest relative difference between sum_t min_p l_t(p) as the regret claims
    compute it (compiled water-filling) and the same sum from the Python solver
    (``optimal_isp_objective``) round by round. Tolerance: rounding."""
    worst, n_capped_rounds = 0.0, 0
    for r in rng.spawn(n_instances):
        n = int(r.integers(8, 41))
        k = float(r.integers(n // 4, 3 * n // 4 + 1))
        fb = _feedback(r, n)
        fast = fb.sum_optimal_costs(n_rounds, k)
        values = [fb.values(t) for t in range(1, n_rounds + 1)]
        slow = sum(optimal_isp_objective(v, k) for v in values)
        n_capped_rounds += sum(int(k * v.max() > v.sum()) for v in values)
        worst = max(worst, abs(fast - slow) / slow)
    return Evidence(measured=worst, theoretical=0.0, relation="<=", tolerance=ROUNDING,
                    details={"n_instances": n_instances, "rounds_with_capping": n_capped_rounds})


@claim("kvib.alg2.compiled_loop", ref="Alg. 2, lines 3-8", kind="algorithm", expected="holds",
       statement="K-Vib per round: p^t from FTRL on omega + gamma (square root), mixing "
                 "(1 - theta) p^t + theta K/N, ISP draw, omega_i += pi_t(i)^2/p~_i for the "
                 "sampled clients; the compiled loop and the sampler class run these lines.",
       quick=dict(n_instances=4, n_rounds=150), full=dict(n_instances=20, n_rounds=1000))
def compiled_loop(*, rng, n_instances, n_rounds):
    """Random N in 6..30, K in [1, N/2], theory theta and gamma (G = max feedback). Both
    paths get the same seed, hence the same uniforms. Measured: the largest relative
    difference of the per-round costs l_t(p~^t) plus the number of rounds whose sample sizes
    differ (an ISP draw U < p~ would flip only on an exact tie). Tolerance: rounding."""
    worst, size_mismatch = 0.0, 0
    for r in rng.spawn(n_instances):
        n = int(r.integers(6, 31))
        k = float(r.integers(1, n // 2 + 1))
        fb = _feedback(r, n)
        G = float(np.max(fb.values(1)))
        seed = int(r.integers(2**63))
        fast = kvib_online(fb, n_rounds, k, np.random.default_rng(seed), G=G)
        slow = run_online(KVib(n, k, n_rounds, G=G), fb, n_rounds, np.random.default_rng(seed))
        worst = max(worst, float(np.max(np.abs(fast.costs - slow.costs) / slow.costs)))
        size_mismatch += int(np.sum(fast.sizes != slow.sizes))
    return Evidence(measured=worst + size_mismatch, theoretical=0.0, relation="<=",
                    tolerance=ROUNDING,
                    details={"max_rel_cost_diff": worst, "rounds_size_differs": size_mismatch,
                             "n_instances": n_instances})


@claim("kvib.eq28.uniform_isp_variance_exact", ref="Def. C.1, eq. (28)", kind="statement",
       expected="holds",
       statement="Uniform ISP (p_i = K/N): E||sum_{i in S} z_i/p_i - sum_i z_i||^2 = "
                 "(N-K)/K sum_i ||z_i||^2 (delta_U, the denominator of alpha_*).",
       quick=dict(n_instances=12, max_clients=10), full=dict(n_instances=100, max_clients=12))
def uniform_isp_variance_exact(*, rng, n_instances, max_clients):
    """Random N in 2..max_clients, integer K in 1..N-1, z in R^3. Measured: the largest
    relative difference between ``uniform_isp_variance`` (and the delta_U inside
    ``optimal_factor``, recomputed as delta_*/alpha_*) and the variance from enumerating all
    2^N subsets. Tolerance: rounding of 2^N-term sums (1e3 2^N eps relative)."""
    worst = 0.0
    for r in rng.spawn(n_instances):
        n = int(r.integers(2, max_clients + 1))
        k = int(r.integers(1, n))
        z = r.standard_normal((n, 3))
        a = np.linalg.norm(z, axis=1)
        exact = isp_moments(z, np.full(n, k / n)).variance
        via_alpha = optimal_isp_variance(a, k) / optimal_factor(a, k)
        worst = max(worst, abs(uniform_isp_variance(a, k) - exact) / exact,
                    abs(via_alpha - exact) / exact)
    return Evidence(measured=worst, theoretical=0.0, relation="<=",
                    tolerance=Tolerance.rounding(1e3 * 2**max_clients * EPS, "2^N-term sums"),
                    details={"n_instances": n_instances, "max_clients": max_clients})
