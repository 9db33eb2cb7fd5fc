r"""Further set functions: the test families of spec V2 and the combinators of Props 1-2.

- :class:`Modular` :math:`F(S) = \sum_{i\in S} w_i` (weights of any sign, for the controls),
- :class:`ConcaveOfModular` :math:`g(\sum_{i\in S} w_i)` with :math:`w \ge 0`, g concave,
- :class:`WeightedCoverage` :math:`\sum_{u \in \cup_{i \in S} A_i} c_u`,
- :class:`PartitionMatroidRank` :math:`\sum_p \min(|S \cap P_p|, \mathrm{cap}_p)`,
- :class:`Truncated` :math:`\min(g(S), b)` (Prop 1), :class:`LinearCombination`
  :math:`\sum_m \alpha_m g_m(S)` (Prop 2), :class:`Composed` :math:`\psi(g(S))` (the intro's
  "concave of submodular" claim), :class:`TableFunction` (a value per bitmask).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from flbounds.validation import as_float_array, check_nonnegative, check_positive

from .base import SetFunction

CONCAVE = {"sqrt": np.sqrt, "log1p": np.log1p}


def _valid(index_sets, sizes) -> np.ndarray:
    return np.arange(index_sets.shape[1])[None, :] < np.asarray(sizes)[:, None]


class Modular(SetFunction):
    """:math:`F(S) = \\sum_{i \\in S} w_i`; weights may be negative (negative controls).

    Parameters
    ----------
    weights : array_like, shape (n,)
        :math:`w`, finite.
    """

    def __init__(self, weights):
        w = np.asarray(weights, dtype=float)
        self.n = w.size
        self.weights = as_float_array(w, "weights", shape=(self.n,))

    def _value(self, idx):
        return float(self.weights[idx].sum())

    def values(self, index_sets, sizes):
        return np.where(_valid(index_sets, sizes), self.weights[index_sets], 0.0).sum(axis=1)


class ConcaveOfModular(SetFunction):
    """:math:`g(\\sum_{i\\in S} w_i)` with nonnegative w and g in {sqrt, log1p, min(., c)}.

    Parameters
    ----------
    weights : array_like, shape (n,)
        :math:`w \\ge 0`.
    concave : {"sqrt", "log1p", "min"}
        g.
    cap : float, optional
        c of ``"min"`` (required there), at least 0.
    """

    def __init__(self, weights, concave="sqrt", cap: float | None = None):
        w = np.asarray(weights, dtype=float)
        self.n = w.size
        self.weights = as_float_array(w, "weights", shape=(self.n,), nonnegative=True)
        if concave == "min":
            c = check_nonnegative(cap, "cap")
            self.concave = lambda x: np.minimum(x, c)
        elif concave in CONCAVE:
            self.concave = CONCAVE[concave]
        else:
            raise ValueError(f"concave must be 'sqrt', 'log1p' or 'min', got {concave!r}")

    def _value(self, idx):
        return float(self.concave(self.weights[idx].sum()))

    def values(self, index_sets, sizes):
        total = np.where(_valid(index_sets, sizes), self.weights[index_sets], 0.0).sum(axis=1)
        return self.concave(total) - self.concave(0.0)


class WeightedCoverage(SetFunction):
    """:math:`\\sum_u c_u 1[u \\in \\cup_{i \\in S} A_i]`: the weight of the items S covers.

    Parameters
    ----------
    covers : array_like of bool, shape (n, m)
        Row i marks the items :math:`A_i` element i covers.
    weights : array_like, shape (m,)
        :math:`c_u \\ge 0`, one per item.
    """

    def __init__(self, covers, weights):
        cov = np.asarray(covers)
        if cov.ndim != 2 or cov.dtype != bool:
            raise ValueError(f"covers must be a boolean (n, m) array, got {cov.dtype} "
                             f"{cov.shape}")
        self.covers = cov
        self.n = cov.shape[0]
        self.weights = as_float_array(weights, "weights", shape=(cov.shape[1],), nonnegative=True)

    def _value(self, idx):
        return float(self.weights[self.covers[idx].any(axis=0)].sum())

    def values(self, index_sets, sizes):
        hit = self.covers[index_sets] & _valid(index_sets, sizes)[:, :, None]
        return hit.any(axis=1).astype(float) @ self.weights


class PartitionMatroidRank(SetFunction):
    """Rank of a partition matroid: :math:`\\sum_p \\min(|S \\cap P_p|, \\mathrm{cap}_p)`.

    Parameters
    ----------
    groups : array_like of int, shape (n,)
        The part :math:`P_p` of each element (indices into ``caps``).
    caps : array_like, shape (n_parts,)
        Each part's capacity, at least 0.
    """

    def __init__(self, groups, caps):
        g = np.asarray(groups, dtype=np.int64)
        self.n = g.size
        self.groups = g
        self.caps = np.asarray(caps, dtype=float)
        if g.min() < 0 or g.max() >= self.caps.size or np.any(self.caps < 0):
            raise ValueError("groups must index caps, and caps must be nonnegative")

    def _value(self, idx):
        counts = np.bincount(self.groups[idx], minlength=self.caps.size)
        return float(np.minimum(counts, self.caps).sum())

    def values(self, index_sets, sizes):
        valid = _valid(index_sets, sizes)
        onehot = (self.groups[index_sets][:, :, None] == np.arange(self.caps.size)) & \
            valid[:, :, None]
        return np.minimum(onehot.sum(axis=1), self.caps).sum(axis=1).astype(float)


class Truncated(SetFunction):
    """SubTrunc's Proposition 1: :math:`\\min(g(S), b)`.

    Parameters
    ----------
    g : SetFunction
        The function truncated.
    b : float
        The truncation level, positive.

    References
    ----------
    .. [1] A. C. Castillo J., E. C. Kaya, L. Ye, A. Hashemi. Submodular Maximization
       Approaches for Equitable Client Selection in Federated Learning. arXiv:2408.13683
       (2024), Proposition 1.
    """

    def __init__(self, g: SetFunction, b: float):
        self.g, self.n = g, g.n
        self.b = check_positive(b, "b")

    def _value(self, idx):
        return min(self.b, self.g._value(idx))

    def values(self, index_sets, sizes):
        return np.minimum(self.b, self.g.values(index_sets, sizes))


class LinearCombination(SetFunction):
    """SubTrunc's Proposition 2: :math:`\\sum_m \\alpha_m g_m(S)` (coefficients of any sign
    are allowed here).

    Parameters
    ----------
    terms : sequence of (float, SetFunction)
        The pairs :math:`(\\alpha_m, g_m)`, non-empty, on one ground set.

    References
    ----------
    .. [1] A. C. Castillo J., E. C. Kaya, L. Ye, A. Hashemi. Submodular Maximization
       Approaches for Equitable Client Selection in Federated Learning. arXiv:2408.13683
       (2024), Proposition 2.
    """

    def __init__(self, terms: Sequence[tuple[float, SetFunction]]):
        if not terms or len({f.n for _, f in terms}) != 1:
            raise ValueError("terms must be non-empty and share one ground set size n")
        self.terms = [(float(a), f) for a, f in terms]
        self.n = terms[0][1].n

    def _value(self, idx):
        return sum(a * f._value(idx) for a, f in self.terms)

    def values(self, index_sets, sizes):
        return sum(a * f.values(index_sets, sizes) for a, f in self.terms)


class Composed(SetFunction):
    """:math:`\\psi(g(S))` for a scalar function ``psi`` (no shape constraint on psi).

    Parameters
    ----------
    psi : callable
        Applied to g's values (scalars or arrays).
    g : SetFunction
        The inner set function.
    """

    def __init__(self, psi: Callable, g: SetFunction):
        self.psi, self.g, self.n = psi, g, g.n

    def _value(self, idx):
        return float(self.psi(self.g._value(idx)))

    def values(self, index_sets, sizes):
        return np.asarray(self.psi(self.g.values(index_sets, sizes)), dtype=float)


class TableFunction(SetFunction):
    """A set function given by its value on every bitmask (``values_by_mask[mask]``).

    Parameters
    ----------
    values_by_mask : array_like, shape (2^n,)
        Entry k is the value of the set whose bit i is set iff i is in it.
    """

    def __init__(self, values_by_mask):
        table = np.asarray(values_by_mask, dtype=float)
        n = int(np.log2(table.size))
        if table.ndim != 1 or table.size != 1 << n:
            raise ValueError("values_by_mask must have length 2^n")
        self.table, self.n = table, n

    def _value(self, idx):
        return float(self.table[int(np.sum(1 << idx))])

    def values(self, index_sets, sizes):
        bits = np.where(_valid(index_sets, sizes), 1 << index_sets, 0).sum(axis=1)
        return self.table[bits]
