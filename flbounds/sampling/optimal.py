r"""Optimal independent-sampling (ISP) probabilities: the water-filling solver.

For weights :math:`a_i = \lambda_i\|g_i\|` and an expected sample size :math:`K`,

.. math:: \min_p \sum_i a_i^2/p_i \quad\text{s.t.}\quad \sum_i p_i = K,\;
          p_{\min} \le p_i \le 1

is solved by :math:`p_i = \operatorname{clip}(a_i/\tau, p_{\min}, 1)`
(:func:`optimal_isp_probabilities`, [003, Lemma 2.2 and Lemma B.8]); the optimal ISP
variance has the closed form of [003, App. C.1] (:func:`optimal_isp_variance`).

References
----------
K-Vib: Zeng et al., "Enhanced Federated Optimization: Adaptive Unbiased Client Sampling with
Reduced Variance" (K-Vib).
"""

from __future__ import annotations

import numpy as np

from flbounds.kernels.isp_round import isp_probabilities
from flbounds.validation import as_inclusion_probabilities, as_vector, check_budget, check_finite

from .estimators import uniform_isp_variance

__all__ = ["isp_objective", "optimal_factor", "optimal_isp_objective",
           "optimal_isp_probabilities", "optimal_isp_variance"]


#: the most weights solved by the compiled port (the same numbers, 10-30x faster on small
#: inputs; its merge sort and scratch make it slower than NumPy's sort on thousands)
COMPILED_MAX_N = 512


def _clip_sum(sorted_a: np.ndarray, csum: np.ndarray, tau: float, p_min: float):
    """Counts and middle sum of :math:`\\sum_i \\mathrm{clip}(a_i/\\tau, p_{min}, 1)`."""
    n = sorted_a.size
    n_low = int(np.searchsorted(sorted_a, p_min * tau, side="right")) if p_min > 0 else 0
    n_high = n - int(np.searchsorted(sorted_a, tau, side="left"))
    n_high = min(n_high, n - n_low)
    mid = csum[n - n_high] - csum[n_low]
    return p_min * n_low + n_high, mid


def _largest_at_least(sorted_b: np.ndarray, sorted_a, csum, k, p_min):
    """Largest b (and smallest b') in ``sorted_b`` with S(b) >= k (S(b') < k); binary search."""
    lo, hi = -1, sorted_b.size  # invariant: S(b[lo]) >= k, S(b[hi]) < k
    while hi - lo > 1:
        m = (lo + hi) // 2
        c0, c1 = _clip_sum(sorted_a, csum, sorted_b[m], p_min)
        if c0 + c1 / sorted_b[m] >= k:
            lo = m
        else:
            hi = m
    return (sorted_b[lo] if lo >= 0 else None), (sorted_b[hi] if hi < sorted_b.size else None)


def optimal_isp_probabilities(a, k, *, p_min: float = 0.0) -> np.ndarray:
    r"""Optimal independent-sampling probabilities (water-filling), [003, Lemma 2.2 / B.8].

    Solves

    .. math::
        \min_p \sum_i \frac{a_i^2}{p_i}\quad\text{s.t.}\quad \sum_i p_i = k,\;
        p_{\min} \le p_i \le 1,

    whose solution is :math:`p_i = \operatorname{clip}(a_i/\tau, p_{\min}, 1)` with the
    :math:`\tau > 0` that makes the sum equal :math:`k`. The map
    :math:`\tau\mapsto\sum_i\operatorname{clip}(a_i/\tau,p_{\min},1)` is piecewise of the
    form :math:`c_0 + c_1/\tau` between the breakpoints :math:`\{a_i\}\cup\{a_i/p_{\min}\}`;
    a binary search over the (sorted) breakpoints brackets :math:`\tau` and the linear
    equation on that piece gives it exactly. Cost :math:`O(N\log N)` (the sort).

    Zeros: with :math:`p_{\min}=0` a zero weight gets :math:`p_i = 0` (the limit of the
    problem) unless the positive weights cannot absorb the budget; then every positive
    weight gets 1 and the remainder is spread evenly over the zero weights (any split is
    optimal). All-zero ``a`` gives the uniform :math:`k/N`. Ties get equal probabilities.

    Parameters
    ----------
    a : array_like, shape (N,)
        Nonnegative, finite weights (:math:`a_i = \lambda_i\|g_i\|`).
    k : float
        Expected sample size, :math:`0 < k \le N` (need not be an integer).
    p_min : float, default 0
        Floor, :math:`0 \le p_{\min} \le k/N`.

    Returns
    -------
    numpy.ndarray
        ``p`` of shape (N,), float64, :math:`\sum p = k` up to rounding.

    Raises
    ------
    ValueError
        ``a`` not a finite nonnegative vector, ``k`` outside (0, N], ``p_min`` outside
        [0, k/N].

    Examples
    --------
    >>> optimal_isp_probabilities([1.0, 3.0, 6.0], 2)
    array([0.25, 0.75, 1.  ])
    """
    a = as_vector(a, "a", nonnegative=True)
    n = a.size
    k = check_budget(k, n)
    p_min = check_finite(p_min, "p_min")
    if p_min < 0 or p_min > k / n * (1 + 1e-12):
        raise ValueError(f"p_min must satisfy 0 <= p_min <= k/N = {k / n}, got {p_min}")
    if n <= COMPILED_MAX_N:
        out = np.empty(n)
        isp_probabilities(np.ascontiguousarray(a), float(k), float(p_min), np.empty(n),
                          np.empty(n + 1), out)
        return out
    return waterfill_numpy(a, k, p_min)


def waterfill_numpy(a: np.ndarray, k: float, p_min: float) -> np.ndarray:
    """:func:`optimal_isp_probabilities` of validated arguments in NumPy, step for step what
    the compiled :func:`flbounds.kernels.isp_round.isp_probabilities` computes (its slow
    twin, and the path for more than :data:`COMPILED_MAX_N` weights)."""
    n = a.size
    p_min = min(p_min, k / n)
    positive = a > 0
    n_pos = int(positive.sum())
    if n_pos == 0 or k - p_min * n <= 0:
        return np.full(n, k / n)
    if k >= n_pos + (n - n_pos) * p_min:  # positive weights saturate: spread the rest on zeros
        p = np.ones(n)
        if n_pos < n:
            p[~positive] = (k - n_pos) / (n - n_pos)
        return p
    s = np.sort(a)  # only the sorted values are needed: p is clip(a / tau) on the input order
    csum = np.concatenate(([0.0], np.cumsum(s)))
    bps = [s[n - n_pos:]]
    if p_min > 0:
        bps.append(s[n - n_pos:] / p_min)
    tau_lo, tau_hi = None, None
    for b in bps:
        lo, hi = _largest_at_least(b, s, csum, k, p_min)
        if lo is not None and (tau_lo is None or lo > tau_lo):
            tau_lo = lo
        if hi is not None and (tau_hi is None or hi < tau_hi):
            tau_hi = hi
    # tau_lo exists: at tau = min positive a every positive weight gets 1, so S >= k there.
    probe = 2.0 * tau_lo if tau_hi is None else 0.5 * (tau_lo + tau_hi)
    c0, c1 = _clip_sum(s, csum, probe, p_min)
    tau = c1 / (k - c0) if (c1 > 0 and k > c0) else tau_lo
    return np.clip(a / tau, p_min, 1.0)


def isp_objective(p, a) -> float:
    r"""K-Vib's sampling cost :math:`\ell(p) = \sum_i a_i^2/p_i`.

    Parameters
    ----------
    p : array_like, shape (N,)
        Inclusion probabilities in (0, 1].
    a : array_like, shape (N,)
        The feedback norms :math:`a_i \ge 0`.

    Returns
    -------
    float

    References
    ----------
    .. [1] D. Zeng, Z. Xu, Y. Pan, X. Luo, Q. Wang, X. Tang. Enhanced Federated Optimization:
       Adaptive Unbiased Client Sampling with Reduced Variance. TMLR 2025. arXiv:2310.02698,
       Section 5.1.
    """
    a = as_vector(a, "a", nonnegative=True)
    p = as_inclusion_probabilities(p, n=a.size)
    return float(np.sum(a * a / p))


def optimal_isp_objective(a, k, *, p_min: float = 0.0) -> float:
    r""":math:`\min_p \sum_i a_i^2/p_i` over :math:`\{p_{\min}\le p\le 1, \sum p = k\}`.

    Zero weights contribute 0 (the limit), so this is defined for every nonnegative ``a``.

    Parameters
    ----------
    a : array_like, shape (N,)
        The feedback norms :math:`a_i \ge 0`.
    k : float
        The expected sample size, :math:`0 < k \le N`.
    p_min : float
        The floor of every probability.

    Returns
    -------
    float
        The cost at :func:`optimal_isp_probabilities`.
    """
    a = as_vector(a, "a", nonnegative=True)
    p = optimal_isp_probabilities(a, k, p_min=p_min)
    nz = a > 0
    return float(np.sum(a[nz] ** 2 / p[nz]))


def optimal_isp_variance(a, k) -> float:
    r"""App. C.1 closed form :math:`\delta_* = \frac{(\sum_{i\le l}a_{(i)})^2}{k-N+l}
    - \sum_{i\le l}a_{(i)}^2` with :math:`l` the number of uncapped clients.

    Computed from the solver's support (:math:`l = \#\{i: p^*_i < 1\}`), not from
    :func:`isp_variance`, so the two can be compared.

    Parameters
    ----------
    a : array_like, shape (N,)
        Positive feedback norms.
    k : float
        The expected sample size, :math:`0 < k \le N`.

    Returns
    -------
    float
        :math:`\delta_*`, the ISP variance at the optimal probabilities.

    References
    ----------
    .. [1] D. Zeng, Z. Xu, Y. Pan, X. Luo, Q. Wang, X. Tang. Enhanced Federated Optimization:
       Adaptive Unbiased Client Sampling with Reduced Variance. TMLR 2025. arXiv:2310.02698,
       Appendix C.1.
    """
    a = as_vector(a, "a", nonnegative=True)
    if np.any(a <= 0):
        raise ValueError("a must be positive")
    k = check_budget(k, a.size)
    p = optimal_isp_probabilities(a, k)
    uncapped = p < 1.0
    ell = int(uncapped.sum())
    if ell == 0:
        return 0.0
    s = a[uncapped]
    return float(s.sum() ** 2 / (k - a.size + ell) - np.sum(s * s))


def optimal_factor(a, k) -> float:
    r"""The optimal ISP's variance over uniform ISP's,
    :math:`\alpha_* = \delta_*/\delta_{\mathbb U}`.

    Parameters
    ----------
    a : array_like, shape (N,)
        Positive feedback norms.
    k : float
        The expected sample size, :math:`0 < k \le N`.

    Returns
    -------
    float
        In [0, 1]; 0 when :math:`k = N` (both variances vanish).

    References
    ----------
    .. [1] D. Zeng, Z. Xu, Y. Pan, X. Luo, Q. Wang, X. Tang. Enhanced Federated Optimization:
       Adaptive Unbiased Client Sampling with Reduced Variance. TMLR 2025. arXiv:2310.02698,
       Definition C.1.
    """
    du = uniform_isp_variance(a, k)
    return 0.0 if du == 0 else optimal_isp_variance(a, k) / du
