r"""Numba kernels for facility-location marginal gains and values.

All kernels take contiguous float64/int64 arrays, write into caller-owned outputs and draw no
random numbers. With ``cur[i]`` the current distance of row ``i`` to the selected set (its
phantom offset :math:`C_i` when nothing covers it yet),

.. math:: \Delta(e \mid S) = \sum_i \max(0, \mathrm{cur}_i - d_{ie}).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, fastmath=False)
def fl_gains(dissim, cur, candidates, out):
    """``out[c] = sum_i max(0, cur[i] - dissim[i, candidates[c]])``."""
    n = dissim.shape[0]
    for c in range(candidates.shape[0]):
        e = candidates[c]
        total = 0.0
        for i in range(n):
            diff = cur[i] - dissim[i, e]
            if diff > 0.0:
                total += diff
        out[c] = total


@njit(cache=True, fastmath=False)
def fl_gain_one(dissim, cur, e):
    """The single gain ``sum_i max(0, cur[i] - dissim[i, e])`` (lazy greedy's re-evaluation)."""
    total = 0.0
    for i in range(dissim.shape[0]):
        diff = cur[i] - dissim[i, e]
        if diff > 0.0:
            total += diff
    return total


@njit(cache=True, fastmath=False)
def fl_update(dissim, cur, e):
    """In place: ``cur[i] = min(cur[i], dissim[i, e])`` after adding ``e`` to the set."""
    for i in range(dissim.shape[0]):
        if dissim[i, e] < cur[i]:
            cur[i] = dissim[i, e]


@njit(cache=True, fastmath=False)
def fl_values(dissim, offsets, index_sets, sizes, out):
    r"""Values of many sets: ``out[m] = sum_i (C_i - min(C_i, min_{s < sizes[m]} d_{i, set_s}))``.

    ``index_sets`` is (M, k) int64; row ``m`` uses its first ``sizes[m]`` entries.
    """
    n = dissim.shape[0]
    for m in range(index_sets.shape[0]):
        total = 0.0
        for i in range(n):
            best = offsets[i]
            for s in range(sizes[m]):
                d = dissim[i, index_sets[m, s]]
                if d < best:
                    best = d
            total += offsets[i] - best
        out[m] = total


@njit(cache=True, fastmath=False)
def naive_fl_greedy(dissim, offsets, k, selected, gains_out):
    """Plain greedy on phantom facility location: every step re-scores every candidate.

    Writes the chosen indices into ``selected`` (length k) and the gain of each step into
    ``gains_out``; ties go to the lowest index. Used as the benchmark's baseline.
    """
    n = dissim.shape[1]
    cur = offsets.copy()
    taken = np.zeros(n, dtype=np.bool_)
    for step in range(k):
        best_e = -1
        best_gain = -np.inf
        for e in range(n):
            if taken[e]:
                continue
            g = fl_gain_one(dissim, cur, e)
            if g > best_gain:
                best_gain = g
                best_e = e
        taken[best_e] = True
        selected[step] = best_e
        gains_out[step] = best_gain
        fl_update(dissim, cur, best_e)
