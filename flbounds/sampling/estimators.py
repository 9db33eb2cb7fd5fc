r"""Unbiased client-sampling estimators and their exact variances.

* **ISP** (independent sampling): client :math:`i` joins with probability :math:`p_i`,
  independently; :math:`\mathbb E|S| = \sum_i p_i = K`. Estimator
  :math:`d = \sum_{i\in S} z_i / p_i` with :math:`z_i = \lambda_i g_i`.
* **RSP** (random sampling): either uniform :math:`K`-subsets without replacement
  (estimator :math:`\frac NK\sum_{i\in S} z_i`) or :math:`K` i.i.d. draws from a
  distribution :math:`q` on the simplex (multinomial, estimator
  :math:`\frac1K\sum_k z_{i_k}/q_{i_k}`, inclusion weight :math:`p = Kq`).

Exact enumeration of small designs lives in :mod:`flbounds.sampling.exact`.

References
----------
K-Vib: Zeng et al., "Enhanced Federated Optimization: Adaptive Unbiased Client Sampling with
Reduced Variance" (K-Vib), Sec. 3, Lemma 2.1 / B.7.
"""

from __future__ import annotations

import numpy as np

from flbounds.validation import (
    as_inclusion_probabilities,
    as_row_vectors,
    as_vector,
    check_budget,
    check_finite,
    check_int,
    check_probability_vector,
)

__all__ = ["isp_estimate", "isp_variance", "mix_uniform", "multinomial_estimate",
           "multinomial_variance", "rsp_bound", "rsp_uniform_variance", "uniform_isp_variance"]


def isp_variance(p, a) -> float:
    r"""Exact ISP variance :math:`\sum_i (1-p_i)\,a_i^2/p_i`.

    Here :math:`a_i = \|z_i\|` with :math:`z_i = \lambda_i g_i`; the formula is an equality for
    independent sampling.

    Parameters
    ----------
    p : array_like, shape (N,)
        Inclusion probabilities in (0, 1].
    a : array_like, shape (N,)
        The norms :math:`a_i \ge 0`.

    Returns
    -------
    float
        :math:`E\|d - \sum_i z_i\|^2` of the estimator :math:`d = \sum_{i \in S} z_i/p_i`.

    References
    ----------
    .. [1] D. Zeng, Z. Xu, Y. Pan, X. Luo, Q. Wang, X. Tang. Enhanced Federated Optimization:
       Adaptive Unbiased Client Sampling with Reduced Variance. TMLR 2025. arXiv:2310.02698,
       Lemma 2.1 / B.7.
    """
    a = as_vector(a, "a", nonnegative=True)
    p = as_inclusion_probabilities(p, n=a.size)
    return float(np.sum((1.0 - p) / p * a * a))


def uniform_isp_variance(a, k) -> float:
    r"""The variance of uniform ISP, :math:`\delta_{\mathbb U} = \frac{N-k}{k}\sum_i a_i^2`.

    Parameters
    ----------
    a : array_like, shape (N,)
        The norms :math:`a_i \ge 0`.
    k : int
        The expected sample size, :math:`1 \le k \le N` (every :math:`p_i = k/N`).

    Returns
    -------
    float

    References
    ----------
    .. [1] D. Zeng, Z. Xu, Y. Pan, X. Luo, Q. Wang, X. Tang. Enhanced Federated Optimization:
       Adaptive Unbiased Client Sampling with Reduced Variance. TMLR 2025. arXiv:2310.02698,
       eq. (28).
    """
    a = as_vector(a, "a", nonnegative=True)
    k = check_budget(k, a.size)
    return float((a.size - k) / k * np.sum(a * a))


def rsp_bound(p, a, n_clients: int | None = None) -> float:
    r"""The RSP side of K-Vib's eq. (3): :math:`\frac{N-K}{N-1}\sum_i a_i^2/p_i`, :math:`K=\sum p`.

    Valid as a variance bound only where the constant :math:`v=(N-K)/(N-1)` is admissible
    (Lemma B.7 needs :math:`v \ge 1-p_i`, i.e. :math:`p_i \ge (K-1)/(N-1)`).

    Parameters
    ----------
    p : array_like, shape (N,)
        Positive weights; they may exceed 1 here (the paper evaluates the bound at
        :math:`Ka/\sum a`).
    a : array_like, shape (N,)
        The norms :math:`a_i \ge 0`.
    n_clients : int, optional
        N (default: the length of ``a``), at least 2.

    Returns
    -------
    float

    References
    ----------
    .. [1] D. Zeng, Z. Xu, Y. Pan, X. Luo, Q. Wang, X. Tang. Enhanced Federated Optimization:
       Adaptive Unbiased Client Sampling with Reduced Variance. TMLR 2025. arXiv:2310.02698,
       eq. (3), Lemma B.7.
    """
    a = as_vector(a, "a", nonnegative=True)
    p = as_vector(p, "p")
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

    Parameters
    ----------
    z : array_like, shape (N,) or (N, d)
        The clients' updates, at least 2 clients.
    k : int
        The subset size, :math:`1 \le K \le N`.

    Returns
    -------
    float
    """
    z = np.asarray(z, dtype=float)
    n = z.shape[0] if z.ndim else 0
    z = as_row_vectors(z, "z", n)
    if n < 2:
        raise ValueError("z must hold at least 2 clients")
    k = check_int(k, "k", minimum=1, maximum=n)
    dev = z - z.mean(axis=0)
    return float(n * (n - k) / (k * (n - 1)) * np.sum(dev * dev))


def multinomial_variance(q, z, k: int) -> float:
    r"""Exact variance of :math:`\frac1K\sum_{k}z_{i_k}/q_{i_k}`, K i.i.d. draws from q.

    .. math:: \frac1K\Big(\sum_i\|z_i\|^2/q_i - \|\textstyle\sum_i z_i\|^2\Big).

    Parameters
    ----------
    q : array_like, shape (N,)
        A probability vector with every entry positive.
    z : array_like, shape (N,) or (N, d)
        The clients' updates.
    k : int
        The number of draws, at least 1.

    Returns
    -------
    float
    """
    q = check_probability_vector(q, "q")
    if np.any(q <= 0):
        raise ValueError("q must be positive (every client drawable)")
    z = as_row_vectors(z, "z", q.size)
    k = check_int(k, "k", minimum=1)
    tot = z.sum(axis=0)
    return float((np.sum(np.sum(z * z, axis=1) / q) - tot @ tot) / k)


def isp_estimate(z, p, mask) -> np.ndarray:
    r"""The ISP estimate :math:`d = \sum_{i\in S} z_i/p_i` of :math:`\sum_i z_i` for one draw.

    Parameters
    ----------
    z : array_like, shape (N,) or (N, d)
        The clients' updates.
    p : array_like, shape (N,)
        Inclusion probabilities in (0, 1].
    mask : array_like of bool, shape (N,)
        The drawn set S.

    Returns
    -------
    numpy.ndarray, shape (d,)
    """
    p = as_inclusion_probabilities(p)
    z = as_row_vectors(z, "z", p.size)
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != p.shape:
        raise ValueError(f"mask must have shape {p.shape}")
    return (z[mask] / p[mask, None]).sum(axis=0)


def multinomial_estimate(z, q, counts) -> np.ndarray:
    r"""The multinomial estimate :math:`d = \sum_i c_i z_i/(K q_i)`, :math:`K=\sum c`.

    Parameters
    ----------
    z : array_like, shape (N,) or (N, d)
        The clients' updates.
    q : array_like, shape (N,)
        The draw distribution.
    counts : array_like of int, shape (N,)
        How often each client was drawn (:math:`c`, summing to at least 1).

    Returns
    -------
    numpy.ndarray, shape (d,)
    """
    q = as_vector(q, "q")
    z = as_row_vectors(z, "z", q.size)
    counts = np.asarray(counts)
    if counts.shape != q.shape or np.any(counts < 0) or counts.sum() < 1:
        raise ValueError("counts must be nonnegative integers with the shape of q, sum >= 1")
    w = counts / (counts.sum() * q)
    return (w[:, None] * z).sum(axis=0)


def mix_uniform(p, theta: float) -> np.ndarray:
    r"""K-Vib's mixing with the uniform design: :math:`\tilde p = (1-\theta)p + \theta K/N`,
    :math:`K=\sum p`.

    Parameters
    ----------
    p : array_like, shape (N,)
        Probabilities in [0, 1].
    theta : float
        The mixing weight in [0, 1].

    Returns
    -------
    numpy.ndarray, shape (N,)
        Same sum as ``p``.

    References
    ----------
    .. [1] D. Zeng, Z. Xu, Y. Pan, X. Luo, Q. Wang, X. Tang. Enhanced Federated Optimization:
       Adaptive Unbiased Client Sampling with Reduced Variance. TMLR 2025. arXiv:2310.02698,
       eq. (12).
    """
    p = as_vector(p, "p")
    if np.any(p < 0) or np.any(p > 1):
        raise ValueError("p must lie in [0, 1]")
    theta = check_finite(theta, "theta")
    if not 0.0 <= theta <= 1.0:
        raise ValueError(f"theta must lie in [0, 1], got {theta!r}")
    return (1.0 - theta) * p + theta * p.sum() / p.size
