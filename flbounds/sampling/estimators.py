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
[003] Zeng et al., "Enhanced Federated Optimization: Adaptive Unbiased Client Sampling with
Reduced Variance" (K-Vib), Sec. 3, Lemma 2.1 / B.7.
"""

from __future__ import annotations

import numpy as np

from flbounds.validation import (
    as_inclusion_probabilities,
    as_row_vectors,
    as_vector,
    check_budget,
    check_int,
    check_probability_vector,
)

__all__ = ["isp_estimate", "isp_variance", "mix_uniform", "multinomial_estimate",
           "multinomial_variance", "rsp_bound", "rsp_uniform_variance", "uniform_isp_variance"]


def isp_variance(p, a) -> float:
    r"""Exact ISP variance :math:`\sum_i (1-p_i)\,a_i^2/p_i` ([003, Lemma 2.1 / B.7]).

    Here :math:`a_i = \|z_i\|` with :math:`z_i = \lambda_i g_i`; the formula is an equality for
    independent sampling. ``p`` must lie in (0, 1].
    """
    a = as_vector(a, "a", nonnegative=True)
    p = as_inclusion_probabilities(p, n=a.size)
    return float(np.sum((1.0 - p) / p * a * a))


def uniform_isp_variance(a, k) -> float:
    r""":math:`\delta_{\mathbb U} = \frac{N-k}{k}\sum_i a_i^2` (uniform ISP, [003, eq. (28)])."""
    a = as_vector(a, "a", nonnegative=True)
    k = check_budget(k, a.size)
    return float((a.size - k) / k * np.sum(a * a))


def rsp_bound(p, a, n_clients: int | None = None) -> float:
    r"""The RSP side of [003, eq. (3)]: :math:`\frac{N-K}{N-1}\sum_i a_i^2/p_i`, :math:`K=\sum p`.

    Valid as a variance bound only where the constant :math:`v=(N-K)/(N-1)` is admissible
    (Lemma B.7 needs :math:`v \ge 1-p_i`, i.e. :math:`p_i \ge (K-1)/(N-1)`).
    ``p`` may exceed 1 here (the paper evaluates it at :math:`Ka/\sum a`).
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
    """
    q = check_probability_vector(q, "q")
    if np.any(q <= 0):
        raise ValueError("q must be positive (every client drawable)")
    z = as_row_vectors(z, "z", q.size)
    k = check_int(k, "k", minimum=1)
    tot = z.sum(axis=0)
    return float((np.sum(np.sum(z * z, axis=1) / q) - tot @ tot) / k)


def isp_estimate(z, p, mask) -> np.ndarray:
    r""":math:`d = \sum_{i\in S} z_i/p_i` for the ISP draw ``mask`` (bool, shape (N,))."""
    p = as_inclusion_probabilities(p)
    z = as_row_vectors(z, "z", p.size)
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != p.shape:
        raise ValueError(f"mask must have shape {p.shape}")
    return (z[mask] / p[mask, None]).sum(axis=0)


def multinomial_estimate(z, q, counts) -> np.ndarray:
    r""":math:`d = \sum_i c_i z_i/(K q_i)`, :math:`c` the draw counts, :math:`K=\sum c`."""
    q = as_vector(q, "q")
    z = as_row_vectors(z, "z", q.size)
    counts = np.asarray(counts)
    if counts.shape != q.shape or np.any(counts < 0) or counts.sum() < 1:
        raise ValueError("counts must be nonnegative integers with the shape of q, sum >= 1")
    w = counts / (counts.sum() * q)
    return (w[:, None] * z).sum(axis=0)


def mix_uniform(p, theta: float) -> np.ndarray:
    r"""Mixing of [003, eq. (12)]: :math:`\tilde p = (1-\theta)p + \theta K/N`, :math:`K=\sum p`."""
    p = as_vector(p, "p")
    if np.any(p < 0) or np.any(p > 1):
        raise ValueError("p must lie in [0, 1]")
    if not 0.0 <= float(theta) <= 1.0:
        raise ValueError(f"theta must lie in [0, 1], got {theta!r}")
    return (1.0 - theta) * p + theta * p.sum() / p.size
