r"""Per-client losses of the synthetic problems in :mod:`flbounds.problems`.

Common signature: the problem data, then ``X`` of shape ``(m, d)`` (row ``j`` is the point of
client ``clients[j]``), ``clients`` an int64 array of length ``m``, and ``out`` of shape
``(m,)``, which the kernel overwrites. The gradients live in :mod:`flbounds.kernels.gradients`.
"""

import math

from numba import njit


@njit(cache=True, fastmath=False)
def quadratic_losses(A, b, X, clients, out):
    r""":math:`f_i(x) = \tfrac12 x^\top A_i x - b_i^\top x`; A: (N, d, d), b: (N, d)."""
    d = X.shape[1]
    for j in range(clients.shape[0]):
        c = clients[j]
        acc = 0.0
        for p in range(d):
            ax = 0.0
            for q in range(d):
                ax += A[c, p, q] * X[j, q]
            acc += X[j, p] * (0.5 * ax - b[c, p])
        out[j] = acc


@njit(cache=True, fastmath=False)
def _squared_norm(X, j):
    acc = 0.0
    for p in range(X.shape[1]):
        acc += X[j, p] * X[j, p]
    return acc


@njit(cache=True, fastmath=False)
def _row_dot(F, c, k, X, j):
    """``F[c, k, :] @ X[j, :]`` (a feature row times a point)."""
    acc = 0.0
    for p in range(X.shape[1]):
        acc += F[c, k, p] * X[j, p]
    return acc


@njit(cache=True, fastmath=False)
def ridge_losses(features, targets, lam, X, clients, out):
    r""":math:`f_i(x) = \frac{1}{2n}\|X_i x - y_i\|^2 + \frac{\lambda}{2}\|x\|^2`.

    features: (N, n, d), targets: (N, n).
    """
    n = features.shape[1]
    for j in range(clients.shape[0]):
        c = clients[j]
        acc = 0.0
        for k in range(n):
            r = _row_dot(features, c, k, X, j) - targets[c, k]
            acc += r * r
        out[j] = acc / (2.0 * n) + 0.5 * lam * _squared_norm(X, j)


@njit(cache=True, fastmath=False)
def _softplus(z):
    """``log(1 + exp(z))`` without overflow or loss of tiny values."""
    if z > 0.0:
        return z + math.log1p(math.exp(-z))
    return math.log1p(math.exp(z))


@njit(cache=True, fastmath=False)
def _penalty(X, j):
    r""":math:`\sum_p x_p^2 / (1 + x_p^2)`."""
    acc = 0.0
    for p in range(X.shape[1]):
        s = X[j, p] * X[j, p]
        acc += s / (1.0 + s)
    return acc


@njit(cache=True, fastmath=False)
def logistic_losses(features, labels, lam, rho, X, clients, out):
    r""":math:`f_i(x) = \frac1n \sum_k \log(1 + e^{-y_k a_k^\top x})
    + \frac{\lambda}{2}\|x\|^2 + \rho \sum_p \frac{x_p^2}{1 + x_p^2}`.

    features: (N, n, d), labels: (N, n) in {-1, +1}; ``rho = 0`` is L2-logistic regression.
    """
    n = features.shape[1]
    for j in range(clients.shape[0]):
        c = clients[j]
        acc = 0.0
        for k in range(n):
            acc += _softplus(-labels[c, k] * _row_dot(features, c, k, X, j))
        total = acc / n + 0.5 * lam * _squared_norm(X, j)
        if rho != 0.0:
            total += rho * _penalty(X, j)
        out[j] = total


@njit(cache=True, fastmath=False)
def scalar_pl_losses(c, X, clients, out):
    r""":math:`f_i(x) = x^2 + 3\sin^2 x + c_i x`; c: (N,), X: (m, 1)."""
    for j in range(clients.shape[0]):
        x = X[j, 0]
        s = math.sin(x)
        out[j] = x * x + 3.0 * s * s + c[clients[j]] * x


