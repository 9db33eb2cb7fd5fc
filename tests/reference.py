"""Slow pure-NumPy twins of the numba kernels in ``flbounds.kernels``.

Each twin takes the same data as its kernel (minus ``out``) and returns the result.
"""

import numpy as np
from scipy.special import expit


def quadratic_losses(A, b, X, clients):
    A, b = A[clients], b[clients]
    return 0.5 * np.einsum("jp,jpq,jq->j", X, A, X) - np.einsum("jp,jp->j", b, X)


def quadratic_gradients(A, b, X, clients):
    return np.einsum("jpq,jq->jp", A[clients], X) - b[clients]


def _residuals(features, targets, X, clients):
    return np.einsum("jkp,jp->jk", features[clients], X) - targets[clients]


def ridge_losses(features, targets, lam, X, clients):
    r = _residuals(features, targets, X, clients)
    return 0.5 * np.mean(r**2, axis=1) + 0.5 * lam * np.sum(X**2, axis=1)


def ridge_gradients(features, targets, lam, X, clients):
    r = _residuals(features, targets, X, clients)
    n = features.shape[1]
    return np.einsum("jkp,jk->jp", features[clients], r) / n + lam * X


def _margins(features, labels, X, clients):
    return labels[clients] * np.einsum("jkp,jp->jk", features[clients], X)


def logistic_losses(features, labels, lam, rho, X, clients):
    m = _margins(features, labels, X, clients)
    penalty = np.sum(X**2 / (1.0 + X**2), axis=1)
    return np.logaddexp(0.0, -m).mean(axis=1) + 0.5 * lam * np.sum(X**2, axis=1) + rho * penalty


def logistic_gradients(features, labels, lam, rho, X, clients):
    m = _margins(features, labels, X, clients)
    weights = -labels[clients] * expit(-m) / features.shape[1]
    data = np.einsum("jkp,jk->jp", features[clients], weights)
    return data + lam * X + 2.0 * rho * X / (1.0 + X**2) ** 2


def scalar_pl_losses(c, X, clients):
    x = X[:, 0]
    return x**2 + 3.0 * np.sin(x) ** 2 + c[clients] * x


def scalar_pl_gradients(c, X, clients):
    x = X[:, 0]
    return (2.0 * x + 6.0 * np.sin(x) * np.cos(x) + c[clients])[:, None]
