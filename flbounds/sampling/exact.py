r"""Exact enumeration oracles for small client counts (:math:`N \le 12`).

Every subset :math:`S\subseteq[N]` is listed with its probability, so means and variances of
the unbiased estimators of :mod:`flbounds.sampling.estimators` are computed exactly (no Monte
Carlo). These are test oracles for the closed forms of [003, Lemma 2.1 / B.7, Def. 2.1].
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.participation import all_masks as _participation_masks
from flbounds.validation import as_inclusion_probabilities, as_row_vectors, check_int

MAX_ENUM_CLIENTS = 12


class Moments(NamedTuple):
    """Exact mean and variance of an estimator, plus the subset-size distribution."""

    mean: np.ndarray          # E[d], shape (d,)
    variance: float           # E||d - E d||^2
    size_probs: np.ndarray    # P(|S| = s), s = 0..N


def all_masks(n_clients: int) -> np.ndarray:
    """Every subset of ``n_clients`` clients as a bool mask, shape (2^N, N).

    Row k is the binary expansion of k with client 0 as the MOST significant bit (the
    lexicographic order of ``itertools.product``): the participation enumeration with its
    columns reversed.
    """
    n_clients = check_int(n_clients, "n_clients", minimum=1, maximum=MAX_ENUM_CLIENTS)
    return np.ascontiguousarray(_participation_masks(n_clients)[:, ::-1])


def isp_subsetas_inclusion_probabilities(p) -> tuple[np.ndarray, np.ndarray]:
    r"""All masks and :math:`\Pr(S) = \prod_{i\in S}p_i\prod_{i\notin S}(1-p_i)`."""
    p = as_inclusion_probabilities(p)
    masks = all_masks(p.size)
    probs = np.prod(np.where(masks, p, 1.0 - p), axis=1)
    return masks, probs


def _moments(masks, probs, estimates, n) -> Moments:
    mean = probs @ estimates
    dev = estimates - mean
    var = float(probs @ np.sum(dev * dev, axis=1))
    sizes = masks.sum(axis=1)
    size_probs = np.bincount(sizes, weights=probs, minlength=n + 1)
    return Moments(mean=mean, variance=var, size_probs=size_probs)


def isp_moments(z, p) -> Moments:
    r"""Exact moments of :math:`d=\sum_{i\in S}z_i/p_i` under independent sampling."""
    p = as_inclusion_probabilities(p)
    z = as_row_vectors(z, "z", p.size)
    masks, probs = isp_subsetas_inclusion_probabilities(p)
    estimates = masks.astype(float) @ (z / p[:, None])
    return _moments(masks, probs, estimates, p.size)


def design_moments(z, masks, probs) -> Moments:
    r"""Exact moments of the Horvitz-Thompson estimator :math:`\sum_{i\in S}z_i/\pi_i` for an
    arbitrary design (masks with probabilities), :math:`\pi_i = \Pr(i\in S)` its marginals."""
    masks = np.asarray(masks, dtype=bool)
    probs = np.asarray(probs, dtype=float)
    z = as_row_vectors(z, "z", masks.shape[1])
    marg = probs @ masks
    if np.any(marg <= 0):
        raise ValueError("the design must be proper (every marginal > 0)")
    estimates = masks.astype(float) @ (z / marg[:, None])
    return _moments(masks, probs, estimates, masks.shape[1])


def uniform_subset_design(n_clients: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Uniform K-subsets without replacement: masks and equal probabilities."""
    masks = all_masks(n_clients)
    masks = masks[masks.sum(axis=1) == k]
    return masks, np.full(masks.shape[0], 1.0 / masks.shape[0])
