"""Composition (clients that never participate) and exact subset enumeration."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.validation import (
    as_float_array,
    as_index_array,
    check_int,
    check_probability_vector,
)

from ._base import (
    MAX_CLIENTS_SUBSETS,
    _Process,
    all_masks,
)


class Excluding(_Process):
    r"""Clients ``never`` never participate; the others follow ``base``.

    ``base`` is a process over the n_clients - len(never) remaining clients, taken in
    increasing index order. Plans embed base's plan with False columns; inclusion
    probabilities and aggregation weights embed with zeros; P(empty) is base's.

    Parameters
    ----------
    base : process
        Any process with ``n_clients == n_clients - len(never)``.
    never : array_like of int
        Distinct indices in [0, n_clients) of the clients that never participate.
    n_clients : int
        Total number of clients.
    """

    def __init__(self, base, never, n_clients: int):
        self.n_clients = check_int(n_clients, "n_clients", minimum=1)
        never = as_index_array(np.array(never, ndmin=1), "never", self.n_clients)
        if np.unique(never).size < never.size:
            raise ValueError("never must hold distinct client indices")
        self.never = np.sort(never)
        self.keep = np.setdiff1d(np.arange(self.n_clients), self.never)
        if hasattr(base, "count_means"):
            raise ValueError("base draws plans of counts (with replacement); Excluding embeds "
                             "participation masks")
        if getattr(base, "n_clients", None) != self.keep.size:
            raise ValueError(f"base must be a process over n_clients - len(never) = "
                             f"{self.keep.size} clients")
        self.base = base

    def _embed(self, values: np.ndarray) -> np.ndarray:
        out = np.zeros(values.shape[:-1] + (self.n_clients,), dtype=values.dtype)
        out[..., self.keep] = values
        return out

    def _plan(self, rng, n_rounds):
        return self._embed(self.base.plan(rng, n_rounds))

    _inclusion = property(lambda self: self._embed(self.base.inclusion_probabilities()))
    _aggregation = property(lambda self: self._embed(self.base.aggregation_weights()))
    _empty = property(lambda self: self.base.empty_probability())

    def _subset_probabilities(self):
        _, base_probs = subset_distribution(self.base)
        codes = all_masks(self.keep.size) @ (1 << self.keep)
        probs = np.zeros(1 << self.n_clients)
        probs[codes] = base_probs
        return probs


# ---------------------------------------------------------------------------- subsets
class SubsetWeights(NamedTuple):
    r"""Exact per-round moments of a subset distribution.

    Attributes
    ----------
    inclusion : numpy.ndarray, shape (N,)
        :math:`P(i \in S)`.
    aggregation : numpy.ndarray, shape (N,)
        :math:`E[1\{i \in S\}/|S|;\ S \neq \emptyset]`, the weight of client i in the
        average of a round.
    empty : float
        :math:`P(S = \emptyset)`.
    """

    inclusion: np.ndarray
    aggregation: np.ndarray
    empty: float


def subset_distribution(process) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact law of one round's participating set, for small N.

    For :class:`Cyclic` and :class:`MarkovOnOff` it is the long-run (stationary) frequency.

    Parameters
    ----------
    process : Bernoulli, UniformWithoutReplacement, WeightedWithoutReplacement, Excluding,
        MarkovOnOff or Cyclic, with n_clients <= 16.

    Returns
    -------
    masks : np.ndarray, bool, shape (2^N, N)
        Row k is the binary expansion of k: client i is in subset k iff bit i of k is set.
    probs : np.ndarray, shape (2^N,)
        P(S = subset k); sums to 1.
    """
    if not hasattr(process, "_subset_probabilities"):
        raise ValueError(f"process {process!r} has no exact subset distribution")
    n = process.n_clients
    if n > MAX_CLIENTS_SUBSETS:
        raise ValueError(f"subset_distribution needs n_clients <= {MAX_CLIENTS_SUBSETS}, "
                         f"got n_clients={n}")
    return all_masks(n), np.asarray(process._subset_probabilities(), dtype=np.float64)


def exact_weights_from_subsets(masks, probs) -> SubsetWeights:
    r"""Inclusion probabilities, aggregation weights and P(empty) of an explicit subset law.

    .. math:: \pi_i = \sum_S P(S) 1\{i \in S\}, \quad
              q_i = \sum_{S \ne \emptyset} P(S) 1\{i \in S\} / |S|.

    Parameters
    ----------
    masks : array_like of bool, shape (n_subsets, n_clients)
    probs : array_like, shape (n_subsets,)
        Nonnegative, summing to 1 (to rounding, see
        ``flbounds.validation.check_probability_vector``).

    Returns
    -------
    SubsetWeights
        ``(inclusion, aggregation, empty)``.
    """
    masks = as_float_array(masks, "masks", ndim=2)
    if not np.isin(masks, (0.0, 1.0)).all():
        raise ValueError("masks must hold booleans (or 0/1)")
    probs = check_probability_vector(probs, "probs", n=masks.shape[0])
    sizes = masks.sum(axis=1)
    inv_size = np.divide(1.0, sizes, out=np.zeros_like(sizes), where=sizes > 0)
    return SubsetWeights(probs @ masks, (probs * inv_size) @ masks, float(probs[sizes == 0].sum()))
