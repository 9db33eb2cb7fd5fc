r"""The moments of one round's participating set that the round PEPs need, computed exactly.

FOCUS's next state is affine in the participation indicators :math:`s_i = 1\{i \in S\}`, so
the expectation of its (quadratic) Lyapunov function needs only the first and second moments
:math:`\pi_i = P(i \in S)` and :math:`\pi_{ij} = P(i, j \in S)`. FedAvg's server average
:math:`\sum_{i \in S} z_i / |S|` needs :math:`W_{ij} = E[s_i s_j / |S|^2; S \ne \emptyset]` and
:math:`P(S = \emptyset)`. With these moments the exact expectation over the :math:`2^N`
participation patterns becomes a sum of :math:`O(N^2)` terms sharing one Gram matrix, instead
of :math:`2^N` scenario branches (the scenario form is kept in the tests as the cross-check).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.validation import check_int


class SubsetMoments(NamedTuple):
    r"""Exact moments of a subset law over ``n`` clients.

    Attributes
    ----------
    pair : (n, n) array
        :math:`\pi_{ij} = P(i, j \in S)`; the diagonal is :math:`\pi_i`.
    avg_pair : (n, n) array
        :math:`W_{ij} = E[s_i s_j / |S|^2; S \ne \emptyset]`.
    empty : float
        :math:`P(S = \emptyset)`.
    """

    pair: np.ndarray
    avg_pair: np.ndarray
    empty: float

    @property
    def inclusion(self) -> np.ndarray:
        return np.diag(self.pair).copy()


def moments_from_subsets(masks, probs) -> SubsetMoments:
    """Moments of an explicit subset law.

    Parameters
    ----------
    masks : array_like of bool, shape (K, n)
        The K possible participation sets.
    probs : array_like, shape (K,)
        Their probabilities (nonnegative, summing to 1).

    Returns
    -------
    SubsetMoments
    """
    masks = np.asarray(masks, dtype=float)
    probs = np.asarray(probs, dtype=float)
    if masks.ndim != 2 or probs.shape != (masks.shape[0],):
        raise ValueError(f"masks must be (K, n) and probs (K,), got {masks.shape}, {probs.shape}")
    if np.any(probs < 0) or abs(probs.sum() - 1.0) > 1e-12:
        raise ValueError("probs must be nonnegative and sum to 1")
    size = masks.sum(axis=1)
    pair = np.einsum("k,ki,kj->ij", probs, masks, masks)
    inv = np.divide(1.0, size, out=np.zeros_like(size), where=size > 0)
    avg_pair = np.einsum("k,ki,kj->ij", probs * inv**2, masks, masks)
    return SubsetMoments(pair, avg_pair, float(probs[size == 0].sum()))


def participation_moments(participation, n_clients: int) -> SubsetMoments:
    """Moments of ``participation`` for ``n_clients`` clients.

    Parameters
    ----------
    participation : None, array_like of bool (n,), or a process of ``flbounds.participation``
        None: every client in every round. A bool vector: that fixed set every round. A
        process: its exact subset law (``flbounds.participation.subset_distribution``).
    n_clients : int
        n, at least 1.

    Returns
    -------
    SubsetMoments
    """
    from flbounds.participation import subset_distribution

    n = check_int(n_clients, "n_clients", minimum=1)
    if participation is None:
        return moments_from_subsets(np.ones((1, n), dtype=bool), np.ones(1))
    if hasattr(participation, "n_clients"):
        if participation.n_clients != n:
            raise ValueError(f"participation has {participation.n_clients} clients, "
                             f"n_clients is {n}")
        return moments_from_subsets(*subset_distribution(participation))
    mask = np.asarray(participation)
    if mask.dtype != bool or mask.shape != (n,):
        raise ValueError(f"participation must be None, a process, or a bool vector of "
                         f"length n_clients={n}")
    return moments_from_subsets(mask[None, :], np.ones(1))
