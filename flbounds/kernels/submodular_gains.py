r"""Numba kernels for facility-location marginal gains and values.

All kernels take contiguous float64/int64 arrays, write into caller-owned outputs and draw no
random numbers. They take the *transposed* dissimilarity ``dissim_t[j, i] = d_ij``
(representative j, client i) so that scoring a candidate reads one contiguous row. With
``cur[i]`` the current distance of client ``i`` to the selected set (its phantom offset
:math:`C_i` when nothing covers it yet),

.. math:: \Delta(e \mid S) = \sum_i \max(0, \mathrm{cur}_i - d_{ie}).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from flbounds.kernels._arrays import copy_into


@njit(cache=True, fastmath=False)
def fl_gain_one(dissim_t, cur, e):
    """The single gain ``sum_i max(0, cur[i] - dissim_t[e, i])``."""
    total = 0.0
    row = dissim_t[e]
    for i in range(row.shape[0]):
        diff = cur[i] - row[i]
        if diff > 0.0:
            total += diff
    return total


@njit(cache=True, fastmath=False)
def fl_gains(dissim_t, cur, candidates, out):
    """``out[c] = sum_i max(0, cur[i] - dissim_t[candidates[c], i])``."""
    for c in range(candidates.shape[0]):
        out[c] = fl_gain_one(dissim_t, cur, candidates[c])


@njit(cache=True, fastmath=False)
def fl_update(dissim_t, cur, e):
    """In place: ``cur[i] = min(cur[i], dissim_t[e, i])`` after adding ``e`` to the set."""
    row = dissim_t[e]
    for i in range(row.shape[0]):
        if row[i] < cur[i]:
            cur[i] = row[i]


@njit(cache=True, fastmath=False)
def fl_values(dissim_t, offsets, index_sets, sizes, out):
    r"""Values of many sets: ``out[m] = sum_i (C_i - min(C_i, min_{s < sizes[m]} d_{i, set_s}))``.

    ``index_sets`` is (M, k) int64; row ``m`` uses its first ``sizes[m]`` entries.
    """
    n = offsets.shape[0]
    best = np.empty(n)
    for m in range(index_sets.shape[0]):
        copy_into(best, offsets)
        for s in range(sizes[m]):
            fl_update(dissim_t, best, index_sets[m, s])
        total = 0.0
        for i in range(n):
            total += offsets[i] - best[i]
        out[m] = total


@njit(cache=True, fastmath=False)
def naive_fl_greedy(dissim_t, offsets, k, selected, gains_out):
    """Plain greedy on phantom facility location: every step re-scores every candidate.

    Writes the chosen indices into ``selected`` (length k) and the gain of each step into
    ``gains_out``; ties go to the lowest index. Used as the benchmark's baseline.
    """
    n = dissim_t.shape[0]
    cur = offsets.copy()
    taken = np.zeros(n, dtype=np.bool_)
    for step in range(k):
        best_e = -1
        best_gain = -np.inf
        for e in range(n):
            if taken[e]:
                continue
            g = fl_gain_one(dissim_t, cur, e)
            if g > best_gain:
                best_gain = g
                best_e = e
        taken[best_e] = True
        selected[step] = best_e
        gains_out[step] = best_gain
        fl_update(dissim_t, cur, best_e)


@njit(cache=True, fastmath=False)
def _masked_pairwise(weights, row, size, lo, n):
    """NumPy's pairwise sum (8 accumulators; n <= 128, where NumPy does not split the row)
    of ``v[lo:lo + n]``, where ``v[c] = weights[row[c]]`` for ``c < size`` and 0.0 beyond."""
    if n < 8:
        res = 0.0
        for c in range(lo, lo + n):
            res += weights[row[c]] if c < size else 0.0
        return res
    acc = np.empty(8)
    for j in range(8):
        c = lo + j
        acc[j] = weights[row[c]] if c < size else 0.0
    full = n - n % 8
    for i in range(8, full, 8):
        for j in range(8):
            c = lo + i + j
            acc[j] += weights[row[c]] if c < size else 0.0
    res = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
    for c in range(lo + full, lo + n):
        res += weights[row[c]] if c < size else 0.0
    return res


@njit(cache=True, fastmath=False)
def weight_sums(weights, index_sets, sizes, out):
    """``out[m] = np.where(valid, weights[index_sets], 0.0).sum(axis=1)[m]`` with ``valid``
    the first ``sizes[m]`` columns of row m: the same numbers, summed in NumPy's pairwise
    order over the whole padded row, without the (M, k) gather and mask. Rows of at most
    128 columns (NumPy halves longer rows; callers sum those with NumPy)."""
    k = index_sets.shape[1]
    for m in range(index_sets.shape[0]):
        out[m] = 0.0 + _masked_pairwise(weights, index_sets[m], sizes[m], 0, k)
