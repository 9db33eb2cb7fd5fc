r"""Unbiased client sampling: optimal independent-sampling probabilities and exact variances.

Two sampling procedures of K-Vib ([003], Sec. 3) are covered.

* **ISP** (independent sampling): client :math:`i` joins with probability :math:`p_i`,
  independently; :math:`\mathbb E|S| = \sum_i p_i = K`. Estimator
  :math:`d = \sum_{i\in S} z_i / p_i` with :math:`z_i = \lambda_i g_i`.
* **RSP** (random sampling): either uniform :math:`K`-subsets without replacement
  (estimator :math:`\frac NK\sum_{i\in S} z_i`) or :math:`K` i.i.d. draws from a
  distribution :math:`q` on the simplex (multinomial, estimator
  :math:`\frac1K\sum_k z_{i_k}/q_{i_k}`, inclusion weight :math:`p = Kq`).

The central routine is :func:`optimal_isp_probabilities`, the water-filling solution
:math:`p_i = \operatorname{clip}(a_i/\tau, p_{\min}, 1)` of [003, Lemma 2.2 and Lemma B.8].
Exact enumeration helpers for :math:`N \le 12` live in :mod:`flbounds.sampling_exact`.

References
----------
[003] Zeng et al., "Enhanced Federated Optimization: Adaptive Unbiased Client Sampling with
Reduced Variance" (K-Vib).
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "isp_estimate",
    "isp_variance",
    "isp_objective",
    "lemma22_printed_formula",
    "mix_uniform",
    "multinomial_estimate",
    "multinomial_variance",
    "optimal_isp_objective",
    "optimal_isp_probabilities",
    "optimal_isp_variance",
    "optimal_factor",
    "rsp_bound",
    "rsp_uniform_variance",
    "uniform_isp_variance",
]


# ----------------------------------------------------------------------------- validation

def _as_vector(x, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be real numbers, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def _weights(a, name: str = "a") -> np.ndarray:
    arr = _as_vector(a, name)
    if np.any(arr < 0):
        raise ValueError(f"{name} must be nonnegative")
    return arr


def _budget(k, n: int, name: str = "k") -> float:
    if isinstance(k, bool) or not isinstance(k, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {k!r}")
    k = float(k)
    if not np.isfinite(k) or k <= 0 or k > n:
        raise ValueError(f"{name} must satisfy 0 < {name} <= N = {n}, got {k}")
    return k


def _probabilities(p, n: int | None = None, name: str = "p") -> np.ndarray:
    arr = _as_vector(p, name)
    if n is not None and arr.size != n:
        raise ValueError(f"{name} must have length {n}, got {arr.size}")
    if np.any(arr <= 0) or np.any(arr > 1):
        raise ValueError(f"{name} must lie in (0, 1]")
    return arr


def _vectors(z, n: int, name: str = "z") -> np.ndarray:
    arr = np.asarray(z)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be real numbers, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n}, d) or ({n},), got {np.shape(z)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


# ----------------------------------------------------------------------------- the solver

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
    a = _weights(a)
    n = a.size
    k = _budget(k, n)
    if isinstance(p_min, bool) or not isinstance(p_min, numbers.Real) or not np.isfinite(p_min):
        raise ValueError(f"p_min must be a finite real number, got {p_min!r}")
    p_min = float(p_min)
    if p_min < 0 or p_min > k / n * (1 + 1e-12):
        raise ValueError(f"p_min must satisfy 0 <= p_min <= k/N = {k / n}, got {p_min}")
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
    r""":math:`\ell(p) = \sum_i a_i^2/p_i`, the cost of [003, Sec. 5.1]."""
    a = _weights(a)
    p = _probabilities(p, a.size)
    return float(np.sum(a * a / p))


def optimal_isp_objective(a, k, *, p_min: float = 0.0) -> float:
    r""":math:`\min_p \sum_i a_i^2/p_i` over :math:`\{p_{\min}\le p\le 1, \sum p = k\}`.

    Zero weights contribute 0 (the limit), so this is defined for every nonnegative ``a``.
    """
    a = _weights(a)
    p = optimal_isp_probabilities(a, k, p_min=p_min)
    nz = a > 0
    return float(np.sum(a[nz] ** 2 / p[nz]))


def lemma22_printed_formula(a, k) -> np.ndarray:
    r"""The printed closed form of [003, Lemma 2.2, eq. (4)], evaluated literally.

    Sort :math:`a_{(1)}\le\dots\le a_{(N)}`; :math:`l` is the **largest** integer with
    :math:`0 < k+l-N \le \sum_{i\le l}a_{(i)}/a_{(l)}`; then
    :math:`p_{(i)} = (k+l-N)a_{(i)}/\sum_{j\le l}a_{(j)}` for :math:`i\le l` and 1 otherwise.
    Requires positive ``a``. A plain O(N) scan after the sort; used to check the paper's
    formula against :func:`optimal_isp_probabilities`.
    """
    a = _weights(a)
    if np.any(a <= 0):
        raise ValueError("a must be positive for the printed formula of Lemma 2.2")
    n = a.size
    k = _budget(k, n)
    order = np.argsort(a, kind="stable")
    s = a[order]
    csum = np.cumsum(s)
    ell = None
    for l1 in range(n, 0, -1):  # l1 = l (1-indexed)
        lhs = k + l1 - n
        if 0 < lhs <= csum[l1 - 1] / s[l1 - 1]:
            ell = l1
            break
    if ell is None:
        raise ValueError("no l satisfies the condition of Lemma 2.2 (cannot happen for k >= 1)")
    p_sorted = np.ones(n)
    p_sorted[:ell] = (k + ell - n) * s[:ell] / csum[ell - 1]
    p = np.empty(n)
    p[order] = p_sorted
    return p


# ----------------------------------------------------------------------------- variances

def isp_variance(p, a) -> float:
    r"""Exact ISP variance :math:`\sum_i (1-p_i)\,a_i^2/p_i` ([003, Lemma 2.1 / B.7]).

    Here :math:`a_i = \|z_i\|` with :math:`z_i = \lambda_i g_i`; the formula is an equality for
    independent sampling. ``p`` must lie in (0, 1].
    """
    a = _weights(a)
    p = _probabilities(p, a.size)
    return float(np.sum((1.0 - p) / p * a * a))


def uniform_isp_variance(a, k) -> float:
    r""":math:`\delta_{\mathbb U} = \frac{N-k}{k}\sum_i a_i^2` (uniform ISP, [003, eq. (28)])."""
    a = _weights(a)
    k = _budget(k, a.size)
    return float((a.size - k) / k * np.sum(a * a))


def optimal_isp_variance(a, k) -> float:
    r"""App. C.1 closed form :math:`\delta_* = \frac{(\sum_{i\le l}a_{(i)})^2}{k-N+l}
    - \sum_{i\le l}a_{(i)}^2` with :math:`l` the number of uncapped clients.

    Computed from the solver's support (:math:`l = \#\{i: p^*_i < 1\}`), not from
    :func:`isp_variance`, so the two can be compared. Requires positive ``a``.
    """
    a = _weights(a)
    if np.any(a <= 0):
        raise ValueError("a must be positive")
    k = _budget(k, a.size)
    p = optimal_isp_probabilities(a, k)
    uncapped = p < 1.0
    ell = int(uncapped.sum())
    if ell == 0:
        return 0.0
    s = a[uncapped]
    return float(s.sum() ** 2 / (k - a.size + ell) - np.sum(s * s))


def optimal_factor(a, k) -> float:
    r""":math:`\alpha_* = \delta_*/\delta_{\mathbb U}` (Def. C.1); 0 when :math:`k = N`."""
    du = uniform_isp_variance(a, k)
    return 0.0 if du == 0 else optimal_isp_variance(a, k) / du


def rsp_bound(p, a, n_clients: int | None = None) -> float:
    r"""The RSP side of [003, eq. (3)]: :math:`\frac{N-K}{N-1}\sum_i a_i^2/p_i`, :math:`K=\sum p`.

    Valid as a variance bound only where the constant :math:`v=(N-K)/(N-1)` is admissible
    (Lemma B.7 needs :math:`v \ge 1-p_i`, i.e. :math:`p_i \ge (K-1)/(N-1)`).
    ``p`` may exceed 1 here (the paper evaluates it at :math:`Ka/\sum a`).
    """
    a = _weights(a)
    p = _as_vector(p, "p")
    if p.size != a.size or np.any(p <= 0):
        raise ValueError("p must be positive with the length of a")
    n = a.size if n_clients is None else int(n_clients)
    if n < 2:
        raise ValueError("n_clients must be >= 2")
    k = float(p.sum())
    return float((n - k) / (n - 1) * np.sum(a * a / p))


def rsp_uniform_variance(z, k: int) -> float:
    r"""Exact variance of :math:`\frac NK\sum_{i\in S}z_i`, S a uniform K-subset.

    .. math:: \frac{N(N-K)}{K(N-1)}\sum_i\|z_i-\bar z\|^2 .
    """
    z = np.asarray(z, dtype=float)
    n = z.shape[0] if z.ndim else 0
    z = _vectors(z, n)
    if n < 2:
        raise ValueError("z must hold at least 2 clients")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= n:
        raise ValueError(f"k must be an integer in [1, N={n}], got {k!r}")
    dev = z - z.mean(axis=0)
    return float(n * (n - k) / (k * (n - 1)) * np.sum(dev * dev))


def multinomial_variance(q, z, k: int) -> float:
    r"""Exact variance of :math:`\frac1K\sum_{k}z_{i_k}/q_{i_k}`, K i.i.d. draws from q.

    .. math:: \frac1K\Big(\sum_i\|z_i\|^2/q_i - \|\textstyle\sum_i z_i\|^2\Big).
    """
    q = _as_vector(q, "q")
    if np.any(q <= 0) or abs(q.sum() - 1) > 1e-9:
        raise ValueError("q must be positive and sum to 1")
    z = _vectors(z, q.size)
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    tot = z.sum(axis=0)
    return float((np.sum(np.sum(z * z, axis=1) / q) - tot @ tot) / k)


# ----------------------------------------------------------------------------- estimators

def isp_estimate(z, p, mask) -> np.ndarray:
    r""":math:`d = \sum_{i\in S} z_i/p_i` for the ISP draw ``mask`` (bool, shape (N,))."""
    p = _probabilities(p)
    z = _vectors(z, p.size)
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != p.shape:
        raise ValueError(f"mask must have shape {p.shape}")
    return (z[mask] / p[mask, None]).sum(axis=0)


def multinomial_estimate(z, q, counts) -> np.ndarray:
    r""":math:`d = \sum_i c_i z_i/(K q_i)`, :math:`c` the draw counts, :math:`K=\sum c`."""
    q = _as_vector(q, "q")
    z = _vectors(z, q.size)
    counts = np.asarray(counts)
    if counts.shape != q.shape or np.any(counts < 0) or counts.sum() < 1:
        raise ValueError("counts must be nonnegative integers with the shape of q, sum >= 1")
    w = counts / (counts.sum() * q)
    return (w[:, None] * z).sum(axis=0)


def mix_uniform(p, theta: float) -> np.ndarray:
    r"""Mixing of [003, eq. (12)]: :math:`\tilde p = (1-\theta)p + \theta K/N`, :math:`K=\sum p`."""
    p = _as_vector(p, "p")
    if np.any(p < 0) or np.any(p > 1):
        raise ValueError("p must lie in [0, 1]")
    if not 0.0 <= float(theta) <= 1.0:
        raise ValueError(f"theta must lie in [0, 1], got {theta!r}")
    return (1.0 - theta) * p + theta * p.sum() / p.size
