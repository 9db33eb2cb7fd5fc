"""The gradient kernels as they were before vectorization (scalar fixed-order sums), kept only
as the baseline of ``python -m benchmarks vec_kernels``; identical code, so identical bits.

Quadratic and logistic: four rows per pass with sixteen scalar partial sums (:func:`_dot4`);
ridge: each visit copies the client's features transposed into a scratch array, then
vectorizable axpys. Not used by flbounds itself.
"""

import numpy as np
from numba import njit

from flbounds.kernels._simd_exp import expit as _expit


@njit(cache=True, fastmath=False)
def _dot(M, c, k, z):
    """``M[c, k, :] @ z`` with four independent partial sums (a fixed summation order that
    keeps the floating-point pipeline busy; fastmath stays off)."""
    d = z.shape[0]
    s0 = s1 = s2 = s3 = 0.0
    p = 0
    while p + 4 <= d:
        s0 += M[c, k, p] * z[p]
        s1 += M[c, k, p + 1] * z[p + 1]
        s2 += M[c, k, p + 2] * z[p + 2]
        s3 += M[c, k, p + 3] * z[p + 3]
        p += 4
    while p < d:
        s0 += M[c, k, p] * z[p]
        p += 1
    return (s0 + s1) + (s2 + s3)


@njit(cache=True, fastmath=False, inline="always")
def _dot4(M, c, k, z):
    """``M[c, k:k + 4, :] @ z``: :func:`_dot` of four rows at once (16 independent partial
    sums, each row summed in exactly :func:`_dot`'s order, so the same bits)."""
    d = z.shape[0]
    a0 = a1 = a2 = a3 = b0 = b1 = b2 = b3 = 0.0
    c0 = c1 = c2 = c3 = e0 = e1 = e2 = e3 = 0.0
    p = 0
    while p + 4 <= d:
        z0, z1, z2, z3 = z[p], z[p + 1], z[p + 2], z[p + 3]
        a0 += M[c, k, p] * z0
        a1 += M[c, k, p + 1] * z1
        a2 += M[c, k, p + 2] * z2
        a3 += M[c, k, p + 3] * z3
        b0 += M[c, k + 1, p] * z0
        b1 += M[c, k + 1, p + 1] * z1
        b2 += M[c, k + 1, p + 2] * z2
        b3 += M[c, k + 1, p + 3] * z3
        c0 += M[c, k + 2, p] * z0
        c1 += M[c, k + 2, p + 1] * z1
        c2 += M[c, k + 2, p + 2] * z2
        c3 += M[c, k + 2, p + 3] * z3
        e0 += M[c, k + 3, p] * z0
        e1 += M[c, k + 3, p + 1] * z1
        e2 += M[c, k + 3, p + 2] * z2
        e3 += M[c, k + 3, p + 3] * z3
        p += 4
    while p < d:
        zp = z[p]
        a0 += M[c, k, p] * zp
        b0 += M[c, k + 1, p] * zp
        c0 += M[c, k + 2, p] * zp
        e0 += M[c, k + 3, p] * zp
        p += 1
    return ((a0 + a1) + (a2 + a3), (b0 + b1) + (b2 + b3), (c0 + c1) + (c2 + c3),
            (e0 + e1) + (e2 + e3))


@njit(cache=True, fastmath=False)
def _quadratic(A, b, c, z, out):
    """:math:`A_c z - b_c`, four rows per pass (:func:`_dot4`), the last ``d % 4`` by
    :func:`_dot`; every row's sum in :func:`_dot`'s order."""
    d = z.shape[0]
    p = 0
    while p + 4 <= d:
        s0, s1, s2, s3 = _dot4(A, c, p, z)
        out[p] = s0 - b[c, p]
        out[p + 1] = s1 - b[c, p + 1]
        out[p + 2] = s2 - b[c, p + 2]
        out[p + 3] = s3 - b[c, p + 3]
        p += 4
    while p < d:
        out[p] = _dot(A, c, p, z) - b[c, p]
        p += 1


@njit(cache=True, fastmath=False)
def _ridge(features, targets, lam, c, ft, z, resid, out):
    r""":math:`X_c^\top (X_c z - y_c)/n + \lambda z` with ``ft`` = ``features[c]`` transposed.

    The residual is d axpys over the n samples (four coordinates per pass, coordinate order
    from :math:`-y_c`); the gradient is axpys over the d coordinates, four samples per pass,
    added in sample order. Every inner loop vectorizes without reassociation.
    """
    n, d = ft.shape[1], z.shape[0]
    for k in range(n):
        resid[k] = -targets[c, k]
    p = 0
    while p + 4 <= d:
        z0, z1, z2, z3 = z[p], z[p + 1], z[p + 2], z[p + 3]
        for k in range(n):
            resid[k] = (((resid[k] + ft[p, k] * z0) + ft[p + 1, k] * z1)
                        + ft[p + 2, k] * z2) + ft[p + 3, k] * z3
        p += 4
    while p < d:
        zp = z[p]
        for k in range(n):
            resid[k] += ft[p, k] * zp
        p += 1
    for q in range(d):
        out[q] = 0.0
    k = 0
    while k + 4 <= n:
        r0, r1, r2, r3 = resid[k], resid[k + 1], resid[k + 2], resid[k + 3]
        for q in range(d):
            out[q] = (((out[q] + r0 * features[c, k, q]) + r1 * features[c, k + 1, q])
                      + r2 * features[c, k + 2, q]) + r3 * features[c, k + 3, q]
        k += 4
    while k < n:
        rk = resid[k]
        for q in range(d):
            out[q] += rk * features[c, k, q]
        k += 1
    for q in range(d):
        out[q] = out[q] / n + lam * z[q]


@njit(cache=True, fastmath=False)
def _logistic(features, labels, lam, rho, c, z, out):
    n, d = features.shape[1], z.shape[0]
    for p in range(d):
        out[p] = 0.0
    k = 0
    while k + 4 <= n:
        s0, s1, s2, s3 = _dot4(features, c, k, z)
        y0, y1, y2, y3 = labels[c, k], labels[c, k + 1], labels[c, k + 2], labels[c, k + 3]
        w0, w1 = -y0 * _expit(-y0 * s0), -y1 * _expit(-y1 * s1)
        w2, w3 = -y2 * _expit(-y2 * s2), -y3 * _expit(-y3 * s3)
        for p in range(d):
            out[p] = (((out[p] + w0 * features[c, k, p]) + w1 * features[c, k + 1, p])
                      + w2 * features[c, k + 2, p]) + w3 * features[c, k + 3, p]
        k += 4
    while k < n:
        y = labels[c, k]
        w = -y * _expit(-y * _dot(features, c, k, z))
        for p in range(d):
            out[p] += w * features[c, k, p]
        k += 1
    for p in range(d):
        g = out[p] / n + lam * z[p]
        if rho != 0.0:
            s = 1.0 + z[p] * z[p]
            g += 2.0 * rho * z[p] / (s * s)
        out[p] = g


@njit(cache=True, fastmath=False)
def transpose_client(features, c, ft):
    """The per-visit copy ``ft = features[c].T`` of the old ridge kernel."""
    n, d = features.shape[1], features.shape[2]
    for k in range(n):
        for p in range(d):
            ft[p, k] = features[c, k, p]


def scratch_of(features):
    """Scratch of the old ridge kernel: (transposed copy, residual)."""
    return np.empty((features.shape[2], features.shape[1])), np.empty(features.shape[1])
