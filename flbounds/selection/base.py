r"""The set-function protocol shared by every objective and maximizer.

A set function on the ground set :math:`\{0, \dots, n-1\}` exposes ``n``, ``value(S)`` and the
incremental interface the maximizers use::

    state = f.start()                  # the empty set
    f.gains(state, candidates)         # Delta(e | S) for every e in candidates
    f.push(state, e)                   # S <- S + {e}, in place

The default incremental interface recomputes ``value`` (correct for any function); the
facility-location family overrides it with numba kernels. ``values(index_sets, sizes)``
evaluates many sets at once (brute force, exhaustive checks).
"""

from __future__ import annotations

import numpy as np

from flbounds.validation import as_float_array, as_index_set, check_int


def check_dissim(dissim, name: str = "dissim") -> np.ndarray:
    """A non-empty square, finite, nonnegative float64 matrix, C-contiguous."""
    arr = as_float_array(dissim, name, ndim=2, nonnegative=True)
    if arr.shape[0] != arr.shape[1] or arr.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty square (n, n) matrix, got shape "
                         f"{arr.shape}")
    return arr


def check_k(k, n: int, name: str = "k") -> int:
    """An integer budget with ``0 <= k <= n``."""
    k = check_int(k, name)
    if not 0 <= k <= n:
        raise ValueError(f"{name} must satisfy 0 <= {name} <= n = {n}, got {k}")
    return k


class SetState:
    """The incremental state of the default interface: the chosen set and its value."""

    __slots__ = ("selected", "value")

    def __init__(self, value: float = 0.0):
        self.selected: list[int] = []
        self.value = float(value)


class SetFunction:
    """Base class: subclasses define ``n`` and ``_value(idx)`` (``idx`` an int64 array)."""

    n: int

    def value(self, S) -> float:
        """f(S) for an iterable of distinct indices."""
        return float(self._value(as_index_set(S, "S", self.n)))

    def _value(self, idx: np.ndarray) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def start(self):
        return SetState(self._value(np.empty(0, dtype=np.int64)))

    def gains(self, state, candidates) -> np.ndarray:
        """Marginal gains Delta(e | S) for each candidate e (not in S)."""
        base = np.asarray(state.selected, dtype=np.int64)
        out = np.empty(len(candidates))
        for c, e in enumerate(candidates):
            out[c] = self._value(np.append(base, e)) - state.value
        return out

    def push(self, state, e: int) -> None:
        state.selected.append(int(e))
        state.value = self._value(np.asarray(state.selected, dtype=np.int64))

    def values(self, index_sets: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """f of many sets: row m of ``index_sets`` restricted to its first ``sizes[m]`` entries."""
        return np.array([self._value(np.asarray(row[:s], dtype=np.int64))
                         for row, s in zip(index_sets, sizes, strict=True)])


def all_subsets_values(f: SetFunction) -> np.ndarray:
    """f(S) for every S, indexed by bitmask (``n <= 20``).

    Parameters
    ----------
    f : SetFunction
        The set function.

    Returns
    -------
    numpy.ndarray, shape (2^n,)
        Entry k is f of the set whose bit i is set iff i is in it.
    """
    n = f.n
    if n > 20:
        raise ValueError(f"all_subsets_values needs n <= 20, got n = {n}")
    masks = np.arange(1 << n, dtype=np.int64)
    bits = (masks[:, None] >> np.arange(n)) & 1
    sizes = bits.sum(axis=1)
    order = np.argsort(-bits, axis=1, kind="stable")  # set members first, ascending index
    return f.values(np.ascontiguousarray(order, dtype=np.int64), sizes.astype(np.int64))
