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

from flbounds.kernels.isp_round import PAIRWISE_BLOCK, numpy_block_sum

#: the row sums are NumPy's pairwise sums of the library's kernels, one block long
#: (:func:`flbounds.kernels.isp_round.numpy_block_sum`: :func:`residuals` refuses longer rows,
#: so the halving of :func:`~flbounds.kernels.isp_round.numpy_sum` and its per-row call cost
#: are not needed)
_BLOCK = PAIRWISE_BLOCK


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
            total = numpy_block_sum(row, 0, row.size)
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
