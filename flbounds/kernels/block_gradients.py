r"""Gradients of one client at a block of points: the replicate-batched form of
:func:`flbounds.kernels.gradients.client_gradient`.

``block_gradient(data, c, Z, nb, scratch, out)`` writes :math:`\nabla f_c(Z_{:,j})` into
``out[:, j]`` for the first ``nb`` columns of ``Z`` (d, B): one column per replicate. The
client's data is read once per call for all ``nb`` columns, and the residual and gradient are
small matrix products (ridge: :math:`X_c Z` then :math:`X_c^\top R`) whose innermost loop runs
over the columns. Quadratic and logistic blocks use the explicit vector multiply-adds of
:mod:`flbounds.kernels._simd` with the columns as the lanes (measured 1.2-2.6x faster than the
compiler's own vectorization of these loops at 8-64 columns); ridge keeps plain loops.

Bit for bit: every column is computed by the same floating-point expression, in the same order,
as the one-point gradient of :mod:`flbounds.kernels.gradients` (same partial sums, same
association, no reassociation across columns, fastmath off); only the loop nest differs. So
column j equals ``client_gradient(data, c, Z[:, j], ...)`` exactly, which the tests check for
every problem kind. If the one-point order changes, the two must change together.

Protocol (compiled only): ``scratch = block_scratch(data, B)`` once per thread (it holds the
one-point scratch of :func:`~flbounds.kernels.gradients.client_scratch`), then
``load_block_client(data, c, scratch[0])`` once per client (ridge and logistic: the client's
features transposed, (d, n); a one-point logistic gradient needs no such copy), then
``block_gradient``. Memory per call:
O(n B + d B) besides the data (logistic: (4 + n) x B weights and partial sums); no
(N, B, d) arrays. No RNG, no validation.
"""

import math

import numpy as np
from numba import njit
from numba.extending import overload

from flbounds.kernels._simd import madd_rows, madd_rows4, transpose_into
from flbounds.kernels._simd_exp import block_weights
from flbounds.kernels.gradients import (
    CACHED,
    LogisticData,
    QuadraticData,
    RidgeData,
    ScalarPLData,
    _kind,
    client_scratch,
    load_client,
)


@njit(cache=True, fastmath=False)
def _quadratic_block(A, b, c, Z, nb, acc, out):
    """``out[p, j] = A[c, p] @ Z[:, j] - b[c, p]`` in the order of
    :mod:`flbounds.kernels.gradients` (four partial sums over the coordinates mod 4, the tail
    into the first); ``acc`` (4, B) holds them for the columns, which are the vector
    lanes."""
    d, width = Z.shape[0], Z.shape[1]
    blocked = d // 4
    for p in range(d):
        acc[:, :nb] = 0.0
        row = (c * d + p) * d
        madd_rows4(acc, 0, acc.shape[1], nb, Z, 0, width, A, row, blocked)
        madd_rows(acc, 0, nb, Z, 4 * blocked * width, width, A, row + 4 * blocked,
                  d - 4 * blocked)
        for j in range(nb):
            out[p, j] = ((acc[0, j] + acc[1, j]) + (acc[2, j] + acc[3, j])) - b[c, p]


@njit(cache=True, fastmath=False)
def _ridge_block(features, targets, lam, c, ft, Z, nb, resid, out):
    r""":math:`X_c^\top (X_c Z - y_c)/n + \lambda Z` per column, in the order of
    :func:`flbounds.kernels.gradients._ridge` (``ft`` = ``features[c]`` transposed,
    ``resid`` (n, B)). Plain loops, which LLVM vectorizes over the columns with
    four samples' chains in flight (the explicit vector code, one chain per output row, was not
    faster here at 8 to 64 columns)."""
    n, d = ft.shape[1], Z.shape[0]
    for k in range(n):
        t = -targets[c, k]
        for j in range(nb):
            resid[k, j] = t
    p = 0
    while p + 4 <= d:
        for k in range(n):
            a0, a1, a2, a3 = ft[p, k], ft[p + 1, k], ft[p + 2, k], ft[p + 3, k]
            for j in range(nb):
                resid[k, j] = (((resid[k, j] + a0 * Z[p, j]) + a1 * Z[p + 1, j])
                               + a2 * Z[p + 2, j]) + a3 * Z[p + 3, j]
        p += 4
    while p < d:
        for k in range(n):
            a0 = ft[p, k]
            for j in range(nb):
                resid[k, j] += a0 * Z[p, j]
        p += 1
    out[:, :nb] = 0.0
    k = 0
    while k + 4 <= n:
        for q in range(d):
            f0, f1 = features[c, k, q], features[c, k + 1, q]
            f2, f3 = features[c, k + 2, q], features[c, k + 3, q]
            for j in range(nb):
                out[q, j] = (((out[q, j] + resid[k, j] * f0) + resid[k + 1, j] * f1)
                             + resid[k + 2, j] * f2) + resid[k + 3, j] * f3
        k += 4
    while k < n:
        for q in range(d):
            f0 = features[c, k, q]
            for j in range(nb):
                out[q, j] += resid[k, j] * f0
        k += 1
    for q in range(d):
        for j in range(nb):
            out[q, j] = out[q, j] / n + lam * Z[q, j]


@njit(cache=True, fastmath=False)
def _logistic_block(features, labels, lam, rho, c, ft, Z, nb, acc, out):
    """Per column the order of :func:`flbounds.kernels.gradients._logistic`; rows 0-3 of
    ``acc`` (4 + n, B) hold the four partial sums of a margin, row 4 + k the weight of sample
    k; the columns are the vector lanes."""
    n, d, width, stride = features.shape[1], Z.shape[0], Z.shape[1], acc.shape[1]
    blocked = d // 4
    for k in range(n):
        acc[:4, :nb] = 0.0
        row = (c * n + k) * d
        madd_rows4(acc, 0, stride, nb, Z, 0, width, features, row, blocked)
        madd_rows(acc, 0, nb, Z, 4 * blocked * width, width, features, row + 4 * blocked,
                  d - 4 * blocked)
        block_weights(acc, stride, nb, labels[c, k], (4 + k) * stride)
    for p in range(d):
        out[p, :nb] = 0.0
        madd_rows(out, p * out.shape[1], nb, acc, 4 * stride, stride, ft, p * n, n)
        if rho == 0.0:     # the branch outside the loop (as in gradients._logistic)
            for j in range(nb):
                out[p, j] = out[p, j] / n + lam * Z[p, j]
            continue
        for j in range(nb):
            z = Z[p, j]
            s = 1.0 + z * z
            out[p, j] = (out[p, j] / n + lam * z) + 2.0 * rho * z / (s * s)


def block_scratch(data, n_cols):
    """Per-thread scratch of :func:`block_gradient` for up to ``n_cols`` columns (compiled
    only)."""
    raise NotImplementedError("block_scratch is only callable from compiled code")


def load_block_client(data, c, scratch):
    """Prepare the one-point part ``scratch`` of a block scratch for client ``c`` (compiled
    only)."""
    raise NotImplementedError("load_block_client is only callable from compiled code")


def block_gradient(data, c, Z, nb, scratch, out):
    r"""Write :math:`\nabla f_c(Z_{:,j})` into ``out[:, j]``, j < nb (compiled only)."""
    raise NotImplementedError("block_gradient is only callable from compiled code")


@overload(block_scratch, jit_options=CACHED)
def _block_scratch(data, n_cols):
    if _kind(data) is RidgeData:
        def impl(data, n_cols):
            return client_scratch(data), np.empty((data.features.shape[1], n_cols))
        return impl
    if _kind(data) is LogisticData:
        def impl(data, n_cols):
            return client_scratch(data), np.empty((4 + data.features.shape[1], n_cols))
        return impl
    if _kind(data) in (QuadraticData, ScalarPLData):
        def impl(data, n_cols):
            return client_scratch(data), np.empty((4, n_cols))
        return impl
    return None


@overload(load_block_client, jit_options=CACHED)
def _load_block_client(data, c, scratch):
    if _kind(data) in (RidgeData, LogisticData):
        def impl(data, c, scratch):
            transpose_into(scratch[0], data.features, c)
        return impl
    return lambda data, c, scratch: load_client(data, c, scratch)


@overload(block_gradient, jit_options=CACHED)
def _block_gradient(data, c, Z, nb, scratch, out):
    kind = _kind(data)
    if kind is QuadraticData:
        def impl(data, c, Z, nb, scratch, out):
            _quadratic_block(data.A, data.b, c, Z, nb, scratch[1], out)
        return impl
    if kind is RidgeData:
        def impl(data, c, Z, nb, scratch, out):
            _ridge_block(data.features, data.targets, data.lam, c, scratch[0][0], Z, nb,
                         scratch[1], out)
        return impl
    if kind is LogisticData:
        def impl(data, c, Z, nb, scratch, out):
            _logistic_block(data.features, data.labels, data.lam, data.rho, c, scratch[0][0],
                            Z, nb, scratch[1], out)
        return impl
    if kind is ScalarPLData:
        def impl(data, c, Z, nb, scratch, out):
            for j in range(nb):
                z = Z[0, j]
                out[0, j] = 2.0 * z + 3.0 * math.sin(2.0 * z) + data.c[c]
        return impl
    return None


@njit(cache=True, fastmath=False)
def block_gradients_at(data, Z, c, out):
    """``out[:, j] = grad f_c(Z[:, j])`` for every column (the tests' entry point)."""
    scratch = block_scratch(data, Z.shape[1])
    load_block_client(data, c, scratch[0])
    block_gradient(data, c, Z, Z.shape[1], scratch, out)
