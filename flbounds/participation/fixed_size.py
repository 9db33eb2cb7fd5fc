"""Fixed-size processes: uniform and weighted m-of-N sampling, round-robin."""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from flbounds.validation import (
    as_float_array,
    check_int,
)

from ._base import (
    MAX_CLIENTS_WEIGHTED,
    _mask_from_indices,
    _Process,
    all_masks,
)


class UniformWithoutReplacement(_Process):
    r"""m of the N clients uniformly without replacement (Case 3a of [1]).

    :math:`\pi_i = m/N` and :math:`q_i = \pi_i / m = 1/N` (the paper's "q_i = 1/m" is wrong).

    Parameters
    ----------
    n_clients : int
    m : int
        Clients per round, 1 <= m <= n_clients.

    References
    ----------
    [1] Ying, Li, Yang (NeurIPS 2025), Case 3a; spec/002_focus.md section 1.5.
    """

    def __init__(self, n_clients: int, m: int):
        self.n_clients = check_int(n_clients, "n_clients", minimum=1)
        self.m = check_int(m, "m", minimum=1, maximum=self.n_clients)

    def _plan(self, rng, n_rounds):
        keys = rng.random((n_rounds, self.n_clients))
        chosen = np.argpartition(keys, self.m - 1, axis=1)[:, : self.m]
        return _mask_from_indices(chosen, self.n_clients)

    _inclusion = property(lambda self: np.full(self.n_clients, self.m / self.n_clients))
    _aggregation = property(lambda self: np.full(self.n_clients, 1.0 / self.n_clients))
    _empty = 0.0

    def _subset_probabilities(self):
        sizes = all_masks(self.n_clients).sum(axis=1)
        return np.where(sizes == self.m, 1.0 / math.comb(self.n_clients, self.m), 0.0)


# ---------------------------------------------------------------------------- weighted m-of-N
def _successive_sampling_dp(w: np.ndarray, m: int) -> np.ndarray:
    r"""f[T] = P(the first |T| draws are the set T), all |T| <= m (0 beyond), by the recursion

    .. math:: f(T) = \sum_{j \in T} f(T \setminus j)\, w_j / w(\overline{T \setminus j}).

    The remaining weight w(complement) is summed directly (no cancellation).
    """
    n = w.size
    wsum = np.zeros(1 << n)
    size = np.zeros(1 << n, dtype=np.int64)
    for j in range(n):
        wsum[1 << j : 2 << j] = wsum[: 1 << j] + w[j]
        size[1 << j : 2 << j] = size[: 1 << j] + 1
    full = (1 << n) - 1
    f = np.zeros(1 << n)
    f[0] = 1.0
    for k in range(1, m + 1):
        layer = np.flatnonzero(size == k)
        for j in range(n):
            sets = layer[(layer >> j) & 1 == 1]
            before = sets ^ (1 << j)
            f[sets] += f[before] * (w[j] / wsum[full ^ before])
    f[size != m] = 0.0
    return f


class WeightedWithoutReplacement(_Process):
    r"""Successive sampling: m draws without replacement, each proportional to the weights of
    the clients not yet drawn (Case 3 of [1]).

    Plans use exponential keys [2]: the m clients with the smallest :math:`E_i / w_i`,
    :math:`E_i \sim \mathrm{Exp}(1)`, have exactly the law of
    ``rng.choice(N, size=m, replace=False, p=w / w.sum())``, vectorized over rounds.
    :math:`\pi_i` is exact, by a dynamic program over subsets (cost ~ 2^N N, so N <= 22) or,
    for larger N, over the counts drawn from each group of equal weights
    (:func:`successive_class_counts`: any N when the weights take few distinct values), and
    :math:`q_i = \pi_i / m`, which differs from :math:`w_i / \sum w` (spec caveat).

    Parameters
    ----------
    weights : array_like, shape (n_clients,)
        Nonnegative, not all zero; at least m of them positive.
    m : int
        Draws per round.

    References
    ----------
    [1] Ying, Li, Yang (NeurIPS 2025), Case 3; spec/002_focus.md section 1.5.
    [2] Efraimidis, Spirakis (2006).
    """

    def __init__(self, weights, m: int):
        w = as_float_array(weights, "weights", ndim=1, copy=True)
        if np.any(w < 0.0) or not np.any(w > 0.0):
            raise ValueError("weights must be nonnegative and not all zero")
        w.setflags(write=False)
        self.weights = w
        self.n_clients = int(w.size)
        self.m = check_int(m, "m", minimum=1, maximum=int(np.count_nonzero(w)))

    def _plan(self, rng, n_rounds):
        e = rng.standard_exponential((n_rounds, self.n_clients))
        keys = np.divide(e, self.weights, out=np.full_like(e, np.inf), where=self.weights > 0)
        chosen = np.argpartition(keys, self.m - 1, axis=1)[:, : self.m]
        return _mask_from_indices(chosen, self.n_clients)

    @cached_property
    def _first_m(self):
        if self.n_clients > MAX_CLIENTS_WEIGHTED:
            raise ValueError(
                f"exact weighted inclusion probabilities need n_clients <= "
                f"{MAX_CLIENTS_WEIGHTED} (subset recursion), got n_clients={self.n_clients}"
            )
        return _successive_sampling_dp(self.weights, self.m)

    @cached_property
    def _inclusion(self):
        if self.n_clients <= MAX_CLIENTS_WEIGHTED:
            return _inclusion_from_subsets(self._first_m)
        values, labels = np.unique(self.weights, return_inverse=True)
        sizes = np.bincount(labels, minlength=values.size)
        if math.prod(int(min(n, self.m)) + 1 for n in sizes) > MAX_CLASS_STATES:
            raise ValueError(
                f"exact weighted inclusion probabilities need n_clients <= "
                f"{MAX_CLIENTS_WEIGHTED} (subset recursion) or few distinct weights (class "
                f"recursion: at most {MAX_CLASS_STATES} count vectors); got "
                f"n_clients={self.n_clients} with {values.size} distinct weights")
        counts, probs = successive_class_counts(sizes, values, self.m)
        return (probs @ counts / sizes)[labels]

    _aggregation = property(lambda self: self._inclusion / self.m)
    _empty = 0.0

    def _subset_probabilities(self):
        return self._first_m


def _inclusion_from_subsets(probs: np.ndarray) -> np.ndarray:
    """sum_T probs[T] 1{i in T} over subset codes T, without forming the (2^N, N) masks."""
    codes, n_clients = np.flatnonzero(probs), probs.size.bit_length() - 1
    return np.array([probs[codes[(codes >> i) & 1 == 1]].sum() for i in range(n_clients)])


#: the class recursion of :func:`successive_class_counts` holds at most this many count vectors
MAX_CLASS_STATES = 4_000_000


def successive_class_counts(sizes, weights, m: int):
    r"""The exact law of the class counts of successive sampling (m draws without replacement,
    each proportional to the weights of the clients not yet drawn) when the clients of class
    c, ``sizes[c]`` of them, all have the weight ``weights[c]``.

    By symmetry only the counts :math:`k` drawn so far from each class matter: the next draw
    comes from class c with probability :math:`(n_c - k_c) w_c / \sum_d (n_d - k_d) w_d`.
    The recursion runs over the draws, merging equal count vectors; its cost grows with the
    number of count vectors (at most :math:`\prod_c (\min(n_c, m) + 1)`), not with N.

    Parameters
    ----------
    sizes : sequence of int
        Clients per class, each at least 1.
    weights : sequence of float
        One nonnegative weight per class; at least m clients of positive weight.
    m : int
        Draws.

    Returns
    -------
    counts : (M, C) int64 array
        The count vectors of positive probability (each row sums to m).
    probs : (M,) float array
        Their probabilities.
    """
    n = np.asarray(sizes, dtype=np.int64)
    w = np.asarray(weights, dtype=float)
    if n.ndim != 1 or n.size == 0 or np.any(n < 1):
        raise ValueError("sizes must be a non-empty sequence of positive class sizes")
    if w.shape != n.shape or np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError(f"weights must be {n.size} finite nonnegative weights, one per class")
    m = check_int(m, "m", minimum=0, maximum=int(n[w > 0].sum()))
    counts, probs = np.zeros((1, n.size), dtype=np.int64), np.ones(1)
    for _ in range(m):
        left = (n - counts) * w                       # (M, C) weight still in each class
        step = left / left.sum(axis=1, keepdims=True)
        rows, cls = np.nonzero(step > 0)
        nxt = counts[rows].copy()
        nxt[np.arange(rows.size), cls] += 1
        counts, where = np.unique(nxt, axis=0, return_inverse=True)
        probs = np.bincount(where.ravel(), weights=probs[rows] * step[rows, cls],
                            minlength=counts.shape[0])
    return counts, probs


# ---------------------------------------------------------------------------- cyclic
class Cyclic(_Process):
    r"""Deterministic round robin: round r takes clients (offset + r per_round + j) mod N,
    j < per_round. The rng is accepted and ignored.

    Inclusion and aggregation weights are exact averages over one period,
    N / gcd(N, per_round) rounds; they equal per_round / N and 1 / N.

    Parameters
    ----------
    n_clients : int
    per_round : int
        1 <= per_round <= n_clients.
    offset : int, default 0
        First client of round 0.
    """

    def __init__(self, n_clients: int, per_round: int, offset: int = 0):
        self.n_clients = check_int(n_clients, "n_clients", minimum=1)
        self.per_round = check_int(per_round, "per_round", minimum=1, maximum=self.n_clients)
        self.offset = check_int(offset, "offset") % self.n_clients
        self.period = self.n_clients // math.gcd(self.n_clients, self.per_round)

    def plan(self, rng: np.random.Generator | None, n_rounds: int) -> np.ndarray:
        """Deterministic plan, bool (n_rounds, n_clients); ``rng`` is ignored (may be None)."""
        return self._plan(rng, check_int(n_rounds, "n_rounds", minimum=0))

    def _starts(self, n_rounds: int) -> np.ndarray:
        return (self.offset + np.arange(n_rounds, dtype=np.int64) * self.per_round) % self.n_clients

    def _plan(self, rng, n_rounds):
        idx = (self._starts(n_rounds)[:, None] + np.arange(self.per_round)) % self.n_clients
        return _mask_from_indices(idx, self.n_clients)

    @cached_property
    def _inclusion(self):
        n, starts = self.n_clients, self._starts(self.period)
        diff = np.zeros(2 * n + 1)
        np.add.at(diff, starts, 1.0)
        np.add.at(diff, starts + self.per_round, -1.0)
        cover = np.cumsum(diff)[: 2 * n]
        return (cover[:n] + cover[n:]) / self.period

    _aggregation = property(lambda self: self._inclusion / self.per_round)
    _empty = 0.0

    def _subset_probabilities(self):
        codes = self._plan(None, self.period) @ (1 << np.arange(self.n_clients))
        return np.bincount(codes, minlength=1 << self.n_clients) / self.period


# ---------------------------------------------------------------------------- Markov on/off
