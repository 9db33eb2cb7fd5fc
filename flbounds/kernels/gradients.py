r"""Per-client gradients of the synthetic problems: one implementation per problem kind.

A problem reaches the compiled code as a small typed container (a NamedTuple of arrays and
scalars), one class per kind; numba compiles each caller once per container type and
:func:`client_gradient` dispatches on that type at compile time:

- :class:`QuadraticData` ``(A (N, d, d), b (N, d))``:
  :math:`\nabla f_i(z) = A_i z - b_i`;
- :class:`RidgeData` ``(features (N, n, d), targets (N, n), lam)``:
  :math:`\nabla f_i(z) = X_i^\top (X_i z - y_i)/n + \lambda z`;
- :class:`LogisticData` ``(features (N, n, d), labels (N, n) in {-1, +1}, lam, rho)``:
  :math:`-\frac1n\sum_k y_k\sigma(-y_k a_k^\top z)a_k + \lambda z + 2\rho z/(1 + z^2)^2`;
- :class:`ScalarPLData` ``(c (N,))``: :math:`f_i'(z) = 2z + 3\sin 2z + c_i` (d = 1).

Protocol (all compiled-only): ``scratch = client_scratch(data)`` once per thread,
``load_client(data, c, scratch)`` once before a run of gradients of client ``c`` (ridge copies
the client's features transposed to (d, n), so the residual is d vectorizable axpys over the n
samples; the other kinds do nothing), then ``client_gradient(data, c, z, scratch, out)``.
Quadratic and logistic gradients take four rows (samples) per pass (:func:`_dot4`, sixteen
independent partial sums instead of one chain of four, and one pass over ``out`` per four
samples), each row summed in :func:`_dot`'s order, so the bits are those of one row at a time.
:func:`client_work` is the multiply-add count of one gradient (for the parallel threshold).
:func:`gradients_at` evaluates many (point, client) pairs through the same three calls; it is
what :meth:`flbounds.problems.Quadratic.client_gradients` and the other problems run, so the
round loops and the problems' gradients are one implementation. No RNG, no validation.
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from flbounds.kernels.losses import _expit


class QuadraticData(NamedTuple):
    """Clients :math:`f_i(z) = z^\\top A_i z/2 - b_i^\\top z`."""

    A: np.ndarray
    b: np.ndarray


class RidgeData(NamedTuple):
    """Clients :math:`\\|X_i z - y_i\\|^2/(2n) + \\lambda\\|z\\|^2/2`."""

    features: np.ndarray
    targets: np.ndarray
    lam: float


class LogisticData(NamedTuple):
    """Logistic clients with the L2 term and the non-convex penalty weight ``rho``."""

    features: np.ndarray
    labels: np.ndarray
    lam: float
    rho: float


class ScalarPLData(NamedTuple):
    """Scalar PL clients :math:`z^2 + 3\\sin^2 z + c_i z`."""

    c: np.ndarray


def _kind(data):
    """The container class of a numba type (None for anything else)."""
    return getattr(data, "instance_class", None)


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


def client_scratch(data):
    """Per-thread scratch of :func:`client_gradient` (compiled only)."""
    raise NotImplementedError("client_scratch is only callable from compiled code")


def load_client(data, c, scratch):
    """Prepare ``scratch`` for gradients of client ``c`` (compiled only)."""
    raise NotImplementedError("load_client is only callable from compiled code")


def client_gradient(data, c, z, scratch, out):
    r"""Write :math:`\nabla f_c(z)` into ``out`` (d,) (compiled only)."""
    raise NotImplementedError("client_gradient is only callable from compiled code")


def client_work(data):
    """Multiply-adds of one gradient (compiled only)."""
    raise NotImplementedError("client_work is only callable from compiled code")


@overload(client_scratch, jit_options={"fastmath": False})
def _client_scratch(data):
    if _kind(data) is RidgeData:
        def impl(data):
            n, d = data.features.shape[1], data.features.shape[2]
            return np.empty((d, n)), np.empty(n)
        return impl
    if _kind(data) in (QuadraticData, LogisticData, ScalarPLData):
        def impl(data):
            return np.empty((1, 1)), np.empty(1)
        return impl
    return None


@overload(load_client, jit_options={"fastmath": False})
def _load_client(data, c, scratch):
    if _kind(data) is RidgeData:
        def impl(data, c, scratch):
            ft = scratch[0]
            n, d = data.features.shape[1], data.features.shape[2]
            for k in range(n):
                for p in range(d):
                    ft[p, k] = data.features[c, k, p]
        return impl
    if _kind(data) in (QuadraticData, LogisticData, ScalarPLData):
        def impl(data, c, scratch):
            pass
        return impl
    return None


@overload(client_gradient, jit_options={"fastmath": False})
def _client_gradient(data, c, z, scratch, out):
    kind = _kind(data)
    if kind is QuadraticData:
        def impl(data, c, z, scratch, out):
            _quadratic(data.A, data.b, c, z, out)
        return impl
    if kind is RidgeData:
        def impl(data, c, z, scratch, out):
            _ridge(data.features, data.targets, data.lam, c, scratch[0], z, scratch[1], out)
        return impl
    if kind is LogisticData:
        def impl(data, c, z, scratch, out):
            _logistic(data.features, data.labels, data.lam, data.rho, c, z, out)
        return impl
    if kind is ScalarPLData:
        def impl(data, c, z, scratch, out):
            out[0] = 2.0 * z[0] + 3.0 * math.sin(2.0 * z[0]) + data.c[c]
        return impl
    return None


@overload(client_work, jit_options={"fastmath": False})
def _client_work(data):
    kind = _kind(data)
    if kind is QuadraticData:
        return lambda data: data.A.shape[1] * data.A.shape[2]
    if kind in (RidgeData, LogisticData):
        return lambda data: data.features.shape[1] * data.features.shape[2]
    if kind is ScalarPLData:
        return lambda data: 1
    return None


@njit(cache=True, fastmath=False)
def gradients_at(data, X, clients, out):
    """``out[j] = grad f_{clients[j]}(X[j])`` for every row j."""
    scratch = client_scratch(data)
    for j in range(clients.shape[0]):
        load_client(data, clients[j], scratch)
        client_gradient(data, clients[j], X[j], scratch, out[j])


def population(data):
    r"""The container of :math:`F = \frac1N \sum_i f_i` as a single client (index 0).

    Quadratics average :math:`A_i, b_i`; ridge and logistic clients have the same number of
    samples each, so F is the same loss on all samples pooled; scalar PL averages :math:`c_i`.
    Plain Python (glue): it builds arrays once per run.
    """
    if isinstance(data, QuadraticData):
        return QuadraticData(data.A.mean(axis=0)[None], data.b.mean(axis=0)[None])
    if isinstance(data, RidgeData):
        d = data.features.shape[2]
        return RidgeData(data.features.reshape(1, -1, d), data.targets.reshape(1, -1),
                         data.lam)
    if isinstance(data, LogisticData):
        d = data.features.shape[2]
        return LogisticData(data.features.reshape(1, -1, d), data.labels.reshape(1, -1),
                            data.lam, data.rho)
    if isinstance(data, ScalarPLData):
        return ScalarPLData(np.array([data.c.mean()]))
    raise ValueError(f"data must be a container of flbounds.kernels.gradients, got {data!r}")
