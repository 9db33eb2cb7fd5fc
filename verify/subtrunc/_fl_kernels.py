r"""Compiled element-wise steps of the FedAvg runs' softmax gradients
(:mod:`verify.subtrunc.fl_experiment`), with NumPy's rounding.

The products stay NumPy's (BLAS) and the exponential stays ``np.exp``; what is compiled here
are the exact steps around them, which NumPy spends a call each on a short last axis: the
row maximum and its subtraction, the row sum (in NumPy's pairwise order, so the same bits as
``Z.sum(axis=-1)``), the division, the label's ``-1``, the mask and the local step's update.
Each is one IEEE operation per element in the order the NumPy form applies them, and no
``fastmath`` (no contraction to fused multiply-add), so the numbers are NumPy's bit for bit
(``tests/verify/subtrunc/test_fast_paths.py`` pins it).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: NumPy's pairwise summation unrolls by 8 and splits rows above 128 elements in halves
#: (rows that long are not needed here: :func:`residuals` refuses them)
_UNROLL, _BLOCK = 8, 128


@njit(cache=True, fastmath=False)
def _pairwise_sum(row, lo, n):
    """``np.add.reduce`` of ``row[lo:lo + n]`` in NumPy's pairwise order, n <= 128."""
    if n < _UNROLL:
        res = 0.0
        for i in range(n):
            res += row[lo + i]
        return res
    r0, r1, r2, r3 = row[lo], row[lo + 1], row[lo + 2], row[lo + 3]
    r4, r5, r6, r7 = row[lo + 4], row[lo + 5], row[lo + 6], row[lo + 7]
    full = n - n % _UNROLL
    for i in range(_UNROLL, full, _UNROLL):
        r0 += row[lo + i]
        r1 += row[lo + i + 1]
        r2 += row[lo + i + 2]
        r3 += row[lo + i + 3]
        r4 += row[lo + i + 4]
        r5 += row[lo + i + 5]
        r6 += row[lo + i + 6]
        r7 += row[lo + i + 7]
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(full, n):
        res += row[lo + i]
    return res


@njit(cache=True, fastmath=False)
def shift_rows(Z):
    """``Z -= Z.max(axis=-1, keepdims=True)`` in place, ``Z`` (a, b, C) C-contiguous."""
    for i in range(Z.shape[0]):
        for j in range(Z.shape[1]):
            peak = Z[i, j, 0]
            for c in range(1, Z.shape[2]):
                if Z[i, j, c] > peak:
                    peak = Z[i, j, c]
            for c in range(Z.shape[2]):
                Z[i, j, c] -= peak


@njit(cache=True, fastmath=False, error_model="numpy")
def normalize_rows(E, labels, mask, picked):
    """From ``E = exp(Z - max)``: the probabilities ``E / E.sum(-1)``, each row's probability
    of its label into ``picked`` (a, b) (unless ``picked`` is empty), then in place the
    cross-entropy residual ``(P - onehot(labels)) * mask[..., None]``."""
    want = picked.size > 0
    for i in range(E.shape[0]):
        for j in range(E.shape[1]):
            row = E[i, j]
            total = _pairwise_sum(row, 0, row.size)
            for c in range(row.size):
                row[c] = row[c] / total
            if want:
                picked[i, j] = row[labels[i, j]]
            row[labels[i, j]] -= 1.0
            weight = mask[i, j]
            for c in range(row.size):
                row[c] *= weight
    return E


@njit(cache=True, fastmath=False, error_model="numpy")
def local_update(local, products, count, step, reg):
    """``local -= step * (products / count[:, None, None] + reg * local)`` in place."""
    for i in range(local.shape[0]):
        for j in range(local.shape[1]):
            for c in range(local.shape[2]):
                local[i, j, c] -= step * (products[i, j, c] / count[i] + reg * local[i, j, c])
    return local


def residuals(logits: np.ndarray, labels: np.ndarray, mask: np.ndarray, picked=None):
    """``(softmax_rows(logits) - onehot(labels)) * mask[..., None]``, computed in place in
    ``logits`` (a fresh C-contiguous float64 product) with the numbers of the NumPy form; the
    label's probabilities go to ``picked`` when given."""
    if not 0 < logits.shape[-1] <= _BLOCK:
        raise ValueError(f"logits must have 1 to {_BLOCK} classes, got {logits.shape[-1]}")
    shift_rows(logits)
    np.exp(logits, out=logits)
    return normalize_rows(logits, labels, mask,
                          np.empty((0, 0)) if picked is None else picked)
