r"""Printed formulas of K-Vib evaluated literally, to be checked against the library.

The library computes the optimal ISP probabilities by water-filling
(:func:`flbounds.sampling.optimal_isp_probabilities`); the functions here follow the printed
index rule of Lemma 2.2 instead, so the two can be compared.
"""

from __future__ import annotations

import numpy as np

from flbounds.validation import as_vector, check_budget


def lemma22_split(a: np.ndarray, k: float) -> tuple[np.ndarray, int]:
    r"""Sorted weights and the index l of Lemma 2.2 as printed, computed independently of
    :mod:`flbounds.sampling`: the largest l with :math:`0<K+l-N\le\sum_{i\le l}a_{(i)}/a_{(l)}`
    (ascending order)."""
    s = np.sort(np.asarray(a, dtype=float))
    n = s.size
    cs = np.cumsum(s)
    for l in range(n, 0, -1):
        if 0 < k + l - n <= cs[l - 1] / s[l - 1]:
            return s, l
    raise ValueError("no admissible l (needs a > 0 and 0 < K <= N)")


def lemma22_printed_formula(a, k) -> np.ndarray:
    r"""The printed closed form of [003, Lemma 2.2, eq. (4)], evaluated literally.

    Sort :math:`a_{(1)}\le\dots\le a_{(N)}`; :math:`l` is the **largest** integer with
    :math:`0 < k+l-N \le \sum_{i\le l}a_{(i)}/a_{(l)}`; then
    :math:`p_{(i)} = (k+l-N)a_{(i)}/\sum_{j\le l}a_{(j)}` for :math:`i\le l` and 1 otherwise.
    Requires positive ``a``. A plain O(N) scan after the sort; used to check the paper's
    formula against :func:`flbounds.sampling.optimal_isp_probabilities`.
    """
    a = as_vector(a, "a", nonnegative=True)
    if np.any(a <= 0):
        raise ValueError("a must be positive for the printed formula of Lemma 2.2")
    n = a.size
    k = check_budget(k, n)
    order = np.argsort(a, kind="stable")
    s, ell = lemma22_split(a, k)
    csum = np.cumsum(s)
    p_sorted = np.ones(n)
    p_sorted[:ell] = (k + ell - n) * s[:ell] / csum[ell - 1]
    p = np.empty(n)
    p[order] = p_sorted
    return p
