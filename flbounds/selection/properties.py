r"""Checks of submodularity and monotonicity: exhaustive (small n) and sampled (large n).

Exhaustive checks use the local characterization: f is submodular iff
:math:`f(S+e) + f(S+e') - f(S+e+e') - f(S) \ge 0` for every S and distinct
:math:`e, e' \notin S`; monotone iff :math:`f(S+e) - f(S) \ge 0`. Sampled checks draw triples
:math:`A \subseteq B`, :math:`e \notin B` and measure :math:`\Delta(e|A) - \Delta(e|B)`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .base import all_subsets_values


class Margins(NamedTuple):
    """Smallest diminishing-returns and monotonicity margins, with a witness for each.

    Attributes
    ----------
    dr_min, dr_max : float
        The smallest and largest diminishing-returns margin: ``dr_min < 0`` is a
        submodularity violation, ``dr_max > 0`` a supermodularity one.
    mono_min : float
        The smallest monotonicity margin (below 0: a monotonicity violation).
    dr_witness : tuple
        Where ``dr_min`` is attained, as (S, e, e') (exhaustive) or (A, B, e) (sampled).
    mono_witness : tuple
        Where ``mono_min`` is attained, as (S, e).
    n_checks : int
        The margins evaluated.
    """

    dr_min: float
    dr_max: float
    mono_min: float
    dr_witness: tuple
    mono_witness: tuple
    n_checks: int


def _members(mask: int, n: int) -> list[int]:
    return [i for i in range(n) if mask >> i & 1]


def exhaustive_margins(f) -> Margins:
    """All local DR margins and monotonicity margins of f (``n <= 14``).

    Parameters
    ----------
    f : SetFunction
        The set function checked.

    Returns
    -------
    Margins
    """
    n = f.n
    table = all_subsets_values(f)
    masks = np.arange(1 << n)
    dr_min, dr_max, dr_wit, checks = np.inf, -np.inf, (), 0
    for e in range(n):
        for e2 in range(e + 1, n):
            S = masks[((masks >> e) & 1 == 0) & ((masks >> e2) & 1 == 0)]
            margin = table[S | 1 << e] + table[S | 1 << e2] - table[S | 1 << e | 1 << e2] \
                - table[S]
            checks += S.size
            j = int(np.argmin(margin))
            if margin[j] < dr_min:
                dr_min, dr_wit = float(margin[j]), (_members(int(S[j]), n), e, e2)
            dr_max = max(dr_max, float(margin.max()))
    mono_min, mono_wit = np.inf, ()
    for e in range(n):
        S = masks[(masks >> e) & 1 == 0]
        margin = table[S | 1 << e] - table[S]
        j = int(np.argmin(margin))
        if margin[j] < mono_min:
            mono_min, mono_wit = float(margin[j]), (_members(int(S[j]), n), e)
    if n < 2:
        dr_min = dr_max = 0.0
    return Margins(float(dr_min), float(dr_max), float(mono_min), dr_wit, mono_wit, checks)


def sampled_margins(f, rng: np.random.Generator, n_triples: int) -> Margins:
    """DR margins :math:`\\Delta(e|A) - \\Delta(e|B)` and :math:`\\Delta(e|B)` on random triples.

    B has a uniform size in ``[0, n-1]``; A keeps each element of B with probability 1/2;
    e is uniform outside B.

    Parameters
    ----------
    f : SetFunction
        The set function checked.
    rng : numpy.random.Generator
        The source of the triples.
    n_triples : int
        The triples drawn.

    Returns
    -------
    Margins
    """
    n = f.n
    keys = rng.random((n_triples, n))
    order = np.argsort(keys, axis=1)
    size_b = rng.integers(0, n, size=n_triples)
    keep = rng.random((n_triples, n)) < 0.5
    e = order[np.arange(n_triples), size_b]  # the element just after B in the random order
    cols = np.arange(n)[None, :]
    in_b = cols < size_b[:, None]
    in_a = in_b & keep
    # Pack A (members first) and B (order prefix); append e for the "+e" sets.
    a_order = np.argsort(~in_a, axis=1, kind="stable")
    a_sets = np.take_along_axis(order, a_order, axis=1)
    size_a = in_a.sum(axis=1)
    vals = {}
    for name, sets, sizes in (("A", a_sets, size_a), ("B", order, size_b)):
        base = np.ascontiguousarray(sets)
        plus = base.copy()
        plus[np.arange(n_triples), np.minimum(sizes, n - 1)] = e
        vals[name] = f.values(base, sizes)
        vals[name + "e"] = f.values(plus, sizes + 1)
    gain_a = vals["Ae"] - vals["A"]
    gain_b = vals["Be"] - vals["B"]
    margin = gain_a - gain_b
    j, m = int(np.argmin(margin)), int(np.argmin(gain_b))
    return Margins(float(margin.min()), float(margin.max()), float(gain_b.min()),
                   (a_sets[j, :size_a[j]].tolist(), order[j, :size_b[j]].tolist(), int(e[j])),
                   (order[m, :size_b[m]].tolist(), int(e[m])), n_triples)
