r"""Public facade: the set functions of [004] (SubTrunc / UnionFL) and their maximizers.

.. math::

    G(S) = \sum_i \bigl(\max_j d_{ij} - \min_{j \in S} d_{ij}\bigr),\quad G(\emptyset) = 0,
    \qquad W(S) = G(S) + \lambda \min\Bigl(b, \sum_{i\in S}\phi(f_i)\Bigr),
    \qquad h_t(S) = G(S) - \mu |U_t \cap S|.

The implementation lives in :mod:`flbounds.setfunctions`; this module validates the inputs of
the three constructors the architecture names and re-exports the rest.
"""

from __future__ import annotations

import numpy as np

from flbounds.setfunctions import (
    Composed,
    ConcaveOfModular,
    FacilityLocation,
    GreedyTrace,
    LinearCombination,
    Modular,
    PartitionMatroidRank,
    SubTruncObjective,
    TableFunction,
    Truncated,
    UnionFLObjective,
    WeightedCoverage,
    brute_force_max,
    distorted_greedy,
    greedy,
    greedy_trace,
    lazy_greedy,
    lazy_greedy_trace,
    phi_values,
    stochastic_greedy,
    stochastic_greedy_plan,
    stochastic_sample_size,
)
from flbounds.setfunctions.base import check_dissim, check_vector

__all__ = ["Composed", "ConcaveOfModular", "FacilityLocation", "GreedyTrace",
           "LinearCombination", "Modular", "PartitionMatroidRank", "SubTruncObjective",
           "TableFunction", "Truncated", "UnionFLObjective", "WeightedCoverage",
           "brute_force_max", "distorted_greedy", "facility_location", "greedy",
           "greedy_trace", "lazy_greedy", "lazy_greedy_trace", "phi_values",
           "stochastic_greedy", "stochastic_greedy_plan", "stochastic_sample_size",
           "subtrunc", "unionfl"]


def facility_location(dissim) -> FacilityLocation:
    """DivFL's G with the phantom-client offset :math:`C_i = \\max_j d_{ij}` (spec 004 s.1.3).

    Parameters
    ----------
    dissim : (n, n) array
        Square, finite, nonnegative dissimilarities (e.g. gradient distances).
    """
    return FacilityLocation(check_dissim(dissim))


def subtrunc(dissim, losses, *, lam, b, phi="log1p") -> SubTruncObjective:
    r"""SubTrunc's objective :math:`W(S) = G(S) + \lambda\min(b, \sum_{i\in S}\phi(f_i))`.

    Parameters
    ----------
    dissim : (n, n) array
    losses : (n,) array
        Client losses :math:`f_i(w) \ge 0` (Assumption 2).
    lam : float, ``>= 0``
    b : float, ``> 0``
        Truncation level.
    phi : "log1p", "identity", "sqrt" or callable
        Must map the losses to nonnegative values (Prop 3 needs :math:`\phi(f_i) \ge 0`).
    """
    d = check_dissim(dissim)
    f = check_vector(losses, d.shape[0], "losses", nonnegative=True)
    weights = phi_values(f, phi)
    if weights.shape != f.shape or not np.all(np.isfinite(weights)):
        raise ValueError("phi(losses) must be finite with the shape of losses")
    if np.any(weights < 0):
        raise ValueError("phi(losses) must be >= 0 (Prop 3's monotone submodularity needs it)")
    return SubTruncObjective(d, weights, lam=lam, b=b)


def unionfl(dissim, recent, *, mu) -> UnionFLObjective:
    r"""UnionFL's objective :math:`h_t(S) = G(S) - \mu |U_t \cap S|`, eq. (14).

    Parameters
    ----------
    dissim : (n, n) array
    recent : (n,) bool array or iterable of indices
        :math:`U_t`, the clients selected within the look-back window.
    mu : float, ``>= 0``
    """
    d = check_dissim(dissim)
    n = d.shape[0]
    arr = np.asarray(recent)
    if arr.dtype != bool and arr.dtype.kind not in "iu" and arr.size:
        raise ValueError(f"recent must be a boolean mask or integer indices, got dtype "
                         f"{arr.dtype}")
    if arr.dtype != bool:
        idx = arr.astype(np.int64).ravel()
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ValueError(f"recent must hold client indices in [0, {n})")
        arr = np.zeros(n, dtype=bool)
        arr[idx] = True
    return UnionFLObjective(d, arr, mu=mu)
