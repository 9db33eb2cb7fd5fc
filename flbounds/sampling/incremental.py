r"""K-Vib with the incremental bookkeeping of K-Vib, Appendix G: the cumulative weights
:math:`\omega` are kept sorted, and each round's K updates are placed by binary search
instead of re-sorting all N weights.

:class:`SortedWeights` holds the values in ascending order with their client ids. An update
of client j finds its new slot with a binary search over the sorted values
(:math:`\lceil\log_2(N+1)\rceil` comparisons at most, counted in ``comparisons``) and shifts
the entries between the old and the new slot (a memory move of at most N entries; the
paper's :math:`O(\log N)` per update would need a balanced tree for that part too).

:class:`KVibIncremental` is :class:`~flbounds.sampling.KVib` whose FTRL step reads the sorted
weights: with the values ascending, the water level of
:math:`\min_p\sum_i w_i/p_i` (:math:`w = \sqrt{\omega+\gamma}` or :math:`\omega+\gamma`) is
found by one linear scan over the number of capped clients, with no sort.
"""

from __future__ import annotations

import numpy as np

from flbounds.kernels.sorted_weights import add_sorted

from .ftrl import KVib


class SortedWeights:
    """Nonnegative weights kept in ascending order (ties: earlier insertions first).

    Parameters
    ----------
    n_clients : int
        Number of weights, all starting at 0.
    """

    def __init__(self, n_clients: int):
        if isinstance(n_clients, bool) or not isinstance(n_clients, int | np.integer) \
                or n_clients < 1:
            raise ValueError(f"n_clients must be a positive integer, got {n_clients!r}")
        self.values = np.zeros(int(n_clients))
        self.clients = np.arange(int(n_clients))
        self.slot = np.arange(int(n_clients))     # slot[client] = its index in ``values``
        self.comparisons = 0          # binary-search comparisons, in total
        self.max_per_update = 0       # and the most spent on one update

    def add(self, client: int, increment: float) -> None:
        """``omega[client] += increment`` (increment >= 0), keeping the order."""
        self.add_many([client], [increment])

    def add_many(self, clients, increments) -> None:
        """:meth:`add` for every ``(clients[j], increments[j])`` in order (one compiled loop:
        the same binary searches and moves); every increment is checked before any is
        added."""
        who = np.asarray(clients, dtype=np.int64).reshape(-1)
        inc = np.asarray(increments, dtype=float).reshape(-1)
        if who.size != inc.size or np.any((who < 0) | (who >= self.values.size)):
            raise ValueError("clients must be client indices, one per increment")
        bad = ~np.isfinite(inc) | (inc < 0)
        if np.any(bad):
            raise ValueError(f"increment must be finite and nonnegative, got "
                             f"{inc[np.argmax(bad)]!r}")
        total, most = add_sorted(self.values, self.clients, self.slot, who, inc)
        self.comparisons += int(total)
        self.max_per_update = max(self.max_per_update, int(most))

    def omega(self) -> np.ndarray:
        """The weights in client order."""
        out = np.empty_like(self.values)
        out[self.clients] = self.values
        return out


def waterfill_sorted(w_sorted, budget: float) -> np.ndarray:
    r"""Minimizer of :math:`\sum_i w_i/p_i` over :math:`\sum p = K`, :math:`0 < p \le 1`,
    for ascending positive ``w_sorted`` (same order out): :math:`p = \min(w/\tau, 1)`.

    With m clients capped (the m largest), :math:`\tau_m = S_{N-m}/(K - m)`, :math:`S_j` the
    sum of the j smallest; the answer is the smallest m with :math:`w_{N-m} \le \tau_m`.
    """
    w = np.asarray(w_sorted, dtype=float)
    n = w.size
    prefix = np.concatenate(([0.0], np.cumsum(w)))
    for m in range(int(np.ceil(budget))):
        tau = prefix[n - m] / (budget - m)
        if w[n - m - 1] <= tau:
            return np.minimum(w / tau, 1.0)
    # m = ceil(K) - 1 always qualifies (tau_m >= S_{N-m} >= w_{N-m}), so this is unreachable
    raise RuntimeError("waterfill_sorted: no water level found")


class KVibIncremental(KVib):
    """:class:`~flbounds.sampling.KVib` with App. G's sorted weights (same parameters, same
    probabilities up to rounding, same draws for the same uniforms)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sorted = SortedWeights(self.n_clients)

    def base_probabilities(self) -> np.ndarray:
        w = self.sorted.values + self.gamma
        p_sorted = waterfill_sorted(np.sqrt(w) if self.variant == "paper" else w, self.budget)
        p = np.empty(self.n_clients)
        p[self.sorted.clients] = p_sorted
        return p

    def update(self, feedback) -> None:
        super().update(feedback)
        increments = np.asarray(feedback.values, dtype=float) ** 2 / feedback.draw.probs
        self.sorted.add_many(feedback.draw.clients, increments)
