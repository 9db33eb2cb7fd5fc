r"""Sample moments of least-squares datasets, summed in sample order.

``X`` of shape ``(T, n, d)`` holds ``T`` datasets of ``n`` points, ``y`` of shape ``(T, n)``
their targets. Every entry is a plain sum over the ``n`` samples, taken in order: the same
numbers, bit for bit, as ``np.einsum("tni,tnj->tij", X, X)`` and ``np.einsum("tni,tn->ti",
X, y)`` whenever ``d >= 2`` (numpy's einsum then reduces over the samples in its outer loop),
at 3-6x their speed, the Gram matrix's lower half copied from the upper one (the products
are the same numbers).
"""

import numpy as np
from numba import njit


@njit(cache=True, fastmath=False)
def ridge_moment_sums(X, y, gram, xy):
    r"""``gram[t]`` :math:`= \sum_m x_m x_m^\top` and ``xy[t]`` :math:`= \sum_m y_m x_m` over
    the samples of dataset ``t``; ``gram`` (T, d, d) and ``xy`` (T, d) are overwritten."""
    T, n, d = X.shape
    for t in range(T):
        for i in range(d):
            for j in range(i, d):
                acc = 0.0
                for m in range(n):
                    acc += X[t, m, i] * X[t, m, j]
                gram[t, i, j] = acc
                gram[t, j, i] = acc
            acc = 0.0
            for m in range(n):
                acc += X[t, m, i] * y[t, m]
            xy[t, i] = acc


#: rows shorter than this are summed by numpy's reductions one term after the other (its
#: pairwise summation unrolls by 8): :func:`normalize_rows` is bit-identical below it
SEQUENTIAL_ROW = 8


@njit(cache=True, fastmath=False, error_model="numpy")
def normalize_rows(x):
    r"""Divide each row of ``x`` (m, d) in place by its Euclidean norm, the squares summed in
    order: the same numbers as ``x / np.linalg.norm(x, axis=-1, keepdims=True)`` for
    ``d < SEQUENTIAL_ROW``, at about 3x its speed on short rows."""
    m, d = x.shape
    for r in range(m):
        acc = 0.0
        for j in range(d):
            acc += x[r, j] * x[r, j]
        norm = np.sqrt(acc)
        for j in range(d):
            x[r, j] = x[r, j] / norm


@njit(cache=True, fastmath=False)
def quadratic_forms(theta, gram, out):
    r"""``out[t, k]`` :math:`= \sum_i\sum_j \theta_{tki} G_{tkij} \theta_{tkj}`, the products
    taken left to right and summed in (i, j) order: the numbers of ``np.einsum("tki,tkij,tkj->tk",
    theta, gram, theta)`` (a three-operand einsum sums its products one after the other), at
    about 2.5x its speed; any strides (broadcast views too). ``out`` (T, K) is overwritten."""
    T, K, d = theta.shape
    for t in range(T):
        for k in range(K):
            acc = 0.0
            for i in range(d):
                for j in range(d):
                    acc += theta[t, k, i] * gram[t, k, i, j] * theta[t, k, j]
            out[t, k] = acc


#: (draws x clients) from which :func:`batched_quadratic_forms` takes the compiled loop (below
#: it, loading the loop, a few tenths of a second of CPU once per process, costs more than it
#: saves)
QUAD_KERNEL_MIN = 1 << 14


def batched_quadratic_forms(theta, gram):
    """``np.einsum("tki,tkij,tkj->tk", theta, gram, theta)``, by the compiled loop (the same
    numbers, :func:`quadratic_forms`) for large float64 batches of
    matching shapes."""
    if (isinstance(theta, np.ndarray) and isinstance(gram, np.ndarray) and theta.ndim == 3
            and gram.shape == theta.shape + theta.shape[-1:]
            and theta.dtype == gram.dtype == np.float64
            and theta.shape[0] * theta.shape[1] >= QUAD_KERNEL_MIN):
        out = np.empty(theta.shape[:2])
        quadratic_forms(theta, gram, out)
        return out
    return np.einsum("tki,tkij,tkj->tk", theta, gram, theta)
