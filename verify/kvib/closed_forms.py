r"""K-Vib App. C.1 closed forms and the auxiliary lemmas of App. B.1 / D.2 ([003], recipes V7,
V8; spec section 6 item 10)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling import (
    isp_variance,
    optimal_factor,
    optimal_isp_probabilities,
    optimal_isp_variance,
    uniform_isp_variance,
)

from .instances import random_budget, random_weights
from .printed_formulas import lemma22_split


def _uncapped_instance(rng):
    """Weights and a budget with K max(a) <= sum(a) (no client capped at p = 1)."""
    a = random_weights(rng, 100)
    k = min(random_budget(rng, a.size), a.sum() / a.max())
    return a, max(k, 1.0) if a.sum() / a.max() >= 1.0 else 1.0


@claim("kvib.appC1.delta_star_closed_form", ref="App. C.1 (optimal ISP variance)",
       kind="statement", expected="holds",
       statement="delta_* = (sum_{i<=l} a_(i))^2/(K-N+l) - sum_{i<=l} a_(i)^2 equals "
                 "sum (1-p*_i) a_i^2/p*_i.",
       quick=dict(n_instances=500), full=dict(n_instances=20000))
def delta_star_closed_form(*, rng, n_instances):
    """V7 first item. The closed form is evaluated with l from the printed Lemma 2.2 rule,
    computed independently in the claim (:func:`lemma22_split`, a sorted scan), and compared
    with the ISP variance at the library solver's p*; equality up to rounding (1e-10 relative,
    cancellation between two sums of N <= 200 terms of similar size). Details: the library's
    closed-form helper agrees too."""
    worst, lib = 0.0, 0.0
    for _ in range(n_instances):
        a = random_weights(rng)
        k = random_budget(rng, a.size)
        if k >= a.size:
            continue
        direct = isp_variance(optimal_isp_probabilities(a, k), a)
        srt, l = lemma22_split(a, k)
        closed = srt[:l].sum() ** 2 / (k - a.size + l) - np.sum(srt[:l] ** 2)
        scale = max(direct, np.sum(a * a) * 1e-12)
        worst = max(worst, abs(direct - closed) / scale)
        lib = max(lib, abs(optimal_isp_variance(a, k) - closed) / scale)
    return Evidence(measured=worst, theoretical=0.0, relation="==",
                    tolerance=Tolerance.rounding(1e-10, "cancellation in sum^2/z - sum a^2"),
                    details={"library_helper_max_rel_gap": lib})


@claim("kvib.appC1.uncapped_bounds", ref="App. C.1; Def. C.1, eq. (29)", kind="statement",
       expected="holds",
       statement="If K max a <= sum a: delta_* <= (N-K)/(NK) (sum a)^2 and alpha_* = "
                 "delta_*/delta_U <= (sum a)^2/(N sum a^2) <= 1.",
       quick=dict(n_instances=1000), full=dict(n_instances=20000))
def uncapped_bounds(*, rng, n_instances):
    """V7 items 2-4. Measured: max relative excess over each bound (must be <= 0)."""
    ex1, ex2, ex3 = -np.inf, -np.inf, -np.inf
    for _ in range(n_instances):
        a, k = _uncapped_instance(rng)
        n = a.size
        if k >= n:
            continue
        ds = optimal_isp_variance(a, k)
        b1 = (n - k) / (n * k) * a.sum() ** 2
        cs = a.sum() ** 2 / (n * np.sum(a * a))
        ex1 = max(ex1, (ds - b1) / b1)
        ex2 = max(ex2, optimal_factor(a, k) - cs)
        ex3 = max(ex3, cs - 1.0)
    return Evidence(measured=[ex1, ex2, ex3], theoretical=[0.0, 0.0, 0.0], relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "sums of N <= 100 terms"))


@claim("kvib.appC1.alpha_printed_sign", ref="App. C.1 ('delta^t/delta_U < 0')",
       kind="remark", expected="violated",
       statement="The ratio of the optimal to the uniform ISP variance is negative.",
       quick=dict(), full=dict())
def alpha_printed_sign(*, rng):
    """Both variances are nonnegative, so the printed "< 0" cannot hold (intended: <= 1, checked
    by ``kvib.appC1.uncapped_bounds``). Instance a = (1, 3, 6), K = 2: delta_* = 6,
    delta_U = 23, ratio 0.26. Expected **violated** (typo). Kind ``remark``: a slip in the
    running text, not a step the proof uses (the proof uses alpha <= 1)."""
    a = np.array([1.0, 3.0, 6.0])
    ratio = optimal_isp_variance(a, 2) / uniform_isp_variance(a, 2)
    return Evidence(measured=ratio, theoretical=0.0, relation="<=",
                    tolerance=Tolerance.exact(), details={"instance": {"a": a, "K": 2}})


@claim("kvib.def_c1.gamma_range", ref="Def. C.1; Thm 4.1 (gamma^t range)", kind="statement",
       expected="holds",
       statement="gamma^t = (alpha_* (N-K)/K + N) W lies in [N W, N W + (N-K)/K W].",
       quick=dict(n_instances=500), full=dict(n_instances=10000))
def gamma_range(*, rng, n_instances):
    """Follows from 0 <= alpha_* <= 1, which holds for every instance (capped or not) because
    p* minimizes the ISP variance and uniform K/N is feasible. Measured: min of alpha and max of
    alpha - 1 over random instances (including capped ones)."""
    lo, hi = np.inf, -np.inf
    for _ in range(n_instances):
        a = random_weights(rng, 100)
        k = random_budget(rng, a.size)
        if k >= a.size:
            continue
        alpha = optimal_factor(a, k)
        lo, hi = min(lo, alpha), max(hi, alpha - 1.0)
    return Evidence(measured=[-lo, hi], theoretical=[0.0, 0.0], relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "ratio of sums"))


def _lemma_b1_sum(c):
    """sum_t c_t^4 / (c^2_{1:t})^{3/2} computed as c_t (c_t^2/c^2_{1:t})^{3/2} (no underflow;
    0/0 := 0)."""
    c2 = np.cumsum(c * c)
    ratio = np.divide(c * c, c2, out=np.zeros_like(c), where=c2 > 0)
    return float(np.sum(c * ratio**1.5))


@claim("kvib.lemma_b1.sum_bound", ref="Lemma B.1 (Borsos et al. 2018, Lemma 13)",
       kind="statement", expected="holds",
       statement="For c_t in [0, 1]: sum_t c_t^4/(c^2_{1:t})^{3/2} <= 44.",
       quick=dict(n_sequences=300, length=2000), full=dict(n_sequences=5000, length=20000))
def lemma_b1(*, rng, n_sequences, length):
    """Random uniform, sparse, geometric and front-loaded-tiny sequences. The sum is at most
    sum_t c_t^4 / c_t^3 <= ... and in fact stays below ~3 (spec pilot 2.40); the bound 44 is loose.
    Measured: the maximum over all sequences."""
    worst = 0.0
    for j in range(n_sequences):
        kind = j % 4
        if kind == 0:
            c = rng.random(length)
        elif kind == 1:
            c = rng.random(length) * (rng.random(length) < 0.05)
        elif kind == 2:
            c = rng.uniform(0.5, 0.99) ** np.arange(length)[::-1]
        else:
            c = np.r_[np.full(length // 2, 10.0 ** -rng.uniform(1, 8)), np.ones(length // 2)]
        worst = max(worst, _lemma_b1_sum(c))
    worst = max(worst, _lemma_b1_sum(np.ones(length)))
    return Evidence(measured=worst, theoretical=44.0, relation="<=",
                    tolerance=Tolerance.exact("a float sum far from the bound"))


@claim("kvib.lemma_b5.step_size", ref="Lemma B.5 (Koloskova et al. 2020)", kind="statement",
       expected="holds",
       statement="eta = min{(r0/(bT))^{1/2}, (r0/(eT))^{1/3}, 1/d} has eta <= 1/d and "
                 "Psi_T <= 2 (b r0/T)^{1/2} + 2 e^{1/3} (r0/T)^{2/3} + d r0/T.",
       quick=dict(n_instances=5000), full=dict(n_instances=200000))
def lemma_b5(*, rng, n_instances):
    """Random log-uniform (r0, b, e, d, T). Measured: max of Psi/RHS - 1 (must be <= 0)."""
    r0, b, e, d = (10.0 ** rng.uniform(-4, 4, n_instances) for _ in range(4))
    t = 10.0 ** rng.uniform(0, 6, n_instances)
    eta = np.minimum(np.minimum(np.sqrt(r0 / (b * t)), np.cbrt(r0 / (e * t))), 1 / d)
    psi = r0 / (eta * t) + b * eta + e * eta**2
    rhs = 2 * np.sqrt(b * r0 / t) + 2 * np.cbrt(e) * (r0 / t) ** (2 / 3) + d * r0 / t
    return Evidence(measured=[float(np.max(psi / rhs - 1)), float(np.max(eta * d - 1))],
                    theoretical=[0.0, 0.0], relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "a few ulp of the ratios"))


@claim("kvib.lemma_b2_b4.norm_inequalities", ref="Lemmas B.2-B.4", kind="statement",
       expected="holds",
       statement="||sum_i a_i||^2 <= n sum ||a_i||^2; for independent zero-mean z_i, "
                 "E||sum z_i||^2 = sum E||z_i||^2.",
       quick=dict(n_instances=500, n_draws=20000), full=dict(n_instances=20000, n_draws=400000))
def lemma_b2_b4(*, rng, n_instances, n_draws):
    """B.2 (and its expectation form B.3) on random vectors: max of lhs/rhs - 1 <= 0. B.4 by
    Monte Carlo with 5 independent zero-mean vectors of unequal scales: |mean - exact| within
    4 MC standard errors."""
    worst = -np.inf
    for _ in range(n_instances):
        n = int(rng.integers(1, 20))
        a = rng.standard_normal((n, 4)) + rng.standard_normal(4)
        worst = max(worst, np.sum(a.sum(0) ** 2) / (n * np.sum(a * a)) - 1)
    scales = np.array([0.5, 1.0, 2.0, 3.0, 0.1])
    z = rng.standard_normal((n_draws, 5, 3)) * scales[None, :, None]
    sq = np.sum(z.sum(axis=1) ** 2, axis=1)
    exact = 3 * np.sum(scales**2)
    se = sq.std(ddof=1) / np.sqrt(n_draws)
    return Evidence(measured=[worst, abs(sq.mean() - exact)], theoretical=[0.0, 0.0],
                    relation="<=",
                    tolerance=Tolerance(np.array([1e-12, 4 * se]), "rounding; 4 MC SE",
                                        "B.2 ratio to rounding; B.4 mean within 4 std/sqrt(M)"))


@claim("kvib.app_d2.floor_inequality", ref="App. D.2, eq. (49)", kind="proof-step",
       expected="holds", statement="1/(1-x)^2 - 1 <= 6x on [0, 1/2], equality at 0 and 1/2.",
       quick=dict(n_points=100001), full=dict(n_points=10000001))
def floor_inequality(*, rng, n_points):
    """Convexity: the left side is convex, equal to 6x at both ends, so it lies below the chord.
    Measured on a grid: max of lhs - 6x (<= 0 up to rounding) and the gaps at the two ends."""
    x = np.linspace(0, 0.5, n_points)
    gap = 1 / (1 - x) ** 2 - 1 - 6 * x
    return Evidence(measured=[float(gap.max()), abs(gap[0]), abs(gap[-1])],
                    theoretical=[0.0, 0.0, 0.0], relation="<=",
                    tolerance=Tolerance.rounding(1e-14, "a few ulp at values <= 4"))
