"""Quadratic and ridge problems: exact x_star and spectral constants."""



from functools import cached_property

import numpy as np

from flbounds.kernels import losses as _kernels
from flbounds.kernels._layout import line_aligned, rows_last
from flbounds.kernels.gradients import QuadraticData, RidgeData, gradients_at
from flbounds.validation import (
    as_float_array,
    check_nonnegative,
    check_symmetric,
)

from ._base import (
    SYMMETRY_RTOL,
    _eig_atol,
    _frozen,
    _Problem,
    _solve_pd,
)


class Quadratic(_Problem):
    r"""Heterogeneous quadratics :math:`f_i(x) = \tfrac12 x^\top A_i x - b_i^\top x`.

    Parameters
    ----------
    A : array_like, shape (N, d, d)
        Symmetric (to ``SYMMETRY_RTOL``, then symmetrized exactly) and positive semidefinite
        per client; the mean :math:`\bar A = \frac1N\sum_i A_i` must be positive definite.
    b : array_like, shape (N, d)

    Attributes
    ----------
    x_star : :math:`\bar A^{-1} \bar b`.
    mu : :math:`\lambda_{\min}(\bar A)` (exact).
    L : :math:`\max_i \lambda_{\max}(A_i)` (exact).
    client_mu, client_L : :math:`\lambda_{\min}(A_i)`, :math:`\lambda_{\max}(A_i)`, shape (N,).
    F_star : :math:`F(x^\star) = -\tfrac12 \bar b^\top x^\star`.
    """

    def __init__(self, A, b):
        A = as_float_array(A, "A", ndim=3, copy=True)
        check_symmetric(A, "A", rtol=SYMMETRY_RTOL)
        n_clients, dim, _ = A.shape
        if n_clients == 0 or dim == 0:
            raise ValueError(f"A must have N >= 1 clients and d >= 1, got shape {A.shape}")
        A = 0.5 * (A + A.transpose(0, 2, 1))
        b = as_float_array(b, "b", shape=(n_clients, dim), copy=True)
        eig = np.linalg.eigvalsh(A)
        bad = eig[:, 0] < -_eig_atol(dim, np.abs(eig).max(axis=1))
        if np.any(bad):
            i = int(np.argmax(bad))
            raise ValueError(f"A must be positive semidefinite for every client; A[{i}] has "
                             f"eigenvalue {eig[i, 0]:.3g}")
        A_mean = A.mean(axis=0)
        eig_mean = np.linalg.eigvalsh(A_mean)
        if eig_mean[0] <= _eig_atol(dim, eig_mean[-1]):
            raise ValueError("A: the mean Hessian mean_i A_i must be positive definite (F "
                             f"strongly convex), got lambda_min = {eig_mean[0]:.3g}")
        self._set_sizes(n_clients, dim)
        self.A, self.b = line_aligned(A), line_aligned(b)
        self.client_mu = _frozen(np.maximum(eig[:, 0], 0.0))
        self.client_L = _frozen(eig[:, -1].copy())
        self.mu, self.L = float(eig_mean[0]), float(self.client_L.max())
        self.x_star = _frozen(_solve_pd(A_mean, b.mean(axis=0)))
        self.F_star = self.loss(self.x_star)

    def hessians(self):
        """The (read-only) Hessians :math:`A_i`, shape (N, d, d)."""
        return self.A

    def _losses_into(self, X, idx, out):
        _kernels.quadratic_losses(self.A, self.b, X, idx, out)

    @property
    def kernel_data(self) -> QuadraticData:
        """The compiled kernels' container of this problem (read-only arrays)."""
        return QuadraticData(self.A, self.b, self._A_t)

    @cached_property
    def _A_t(self):
        return rows_last(self.A)

    def _gradients_into(self, X, idx, out):
        gradients_at(self.kernel_data, X, idx, out)


def _data_arrays(features, second, second_name):
    """Validate features (N, n, d) and a per-sample array (N, n); read-only copies on a cache
    line (one copy each, however large)."""
    features = as_float_array(features, "features", ndim=3)
    if min(features.shape) == 0:
        raise ValueError(f"features must have N, n, d >= 1, got shape {features.shape}")
    second = as_float_array(second, second_name, shape=features.shape[:2])
    return line_aligned(features, copy=True), line_aligned(second, copy=True)


def _gram_eigenvalues(features):
    """Eigenvalues (ascending) of X_i'X_i / n per client, and of their mean."""
    grams = np.einsum("ikp,ikq->ipq", features, features) / features.shape[1]
    return grams, np.linalg.eigvalsh(grams), np.linalg.eigvalsh(grams.mean(axis=0))


class Ridge(_Problem):
    r"""Federated ridge regression.

    .. math:: f_i(x) = \frac{1}{2n}\|X_i x - y_i\|^2 + \frac{\lambda}{2}\|x\|^2

    Parameters
    ----------
    features : array_like, shape (N, n, d)
        :math:`X_i`, n samples per client.
    targets : array_like, shape (N, n)
        :math:`y_i`.
    lam : float
        :math:`\lambda \ge 0`; the mean Hessian :math:`\bar G + \lambda I`,
        :math:`G_i = X_i^\top X_i / n`, must be positive definite.

    Attributes
    ----------
    x_star : normal equations :math:`(\bar G + \lambda I)^{-1} \frac1N\sum_i X_i^\top y_i / n`.
    mu : :math:`\lambda_{\min}(\bar G) + \lambda` (exact).
    client_mu, client_L : :math:`\lambda_{\min/\max}(G_i) + \lambda` (exact); ``L`` their max.
    """

    def __init__(self, features, targets, lam):
        features, targets = _data_arrays(features, targets, "targets")
        self.lam = check_nonnegative(lam, "lam")
        n_clients, n_samples, dim = features.shape
        grams, eig, eig_mean = _gram_eigenvalues(features)
        if eig_mean[0] + self.lam <= _eig_atol(dim, eig_mean[-1] + self.lam):
            raise ValueError("features: the mean Hessian mean_i X_i'X_i/n + lam I must be "
                             "positive definite (use lam > 0 or more samples)")
        self._set_sizes(n_clients, dim)
        self.features, self.targets = line_aligned(features), line_aligned(targets)
        self._grams = grams
        self._moments = np.einsum("ikp,ik->ip", features, targets) / n_samples
        self.client_mu = _frozen(np.maximum(eig[:, 0], 0.0) + self.lam)
        self.client_L = _frozen(eig[:, -1] + self.lam)
        self.mu = float(max(eig_mean[0], 0.0) + self.lam)
        self.L = float(self.client_L.max())
        hess = grams.mean(axis=0) + self.lam * np.eye(dim)
        self.x_star = _frozen(_solve_pd(hess, self._moments.mean(axis=0)))
        self.F_star = self.loss(self.x_star)

    def as_quadratic(self):
        r"""The same problem as a :class:`Quadratic`: :math:`A_i = G_i + \lambda I`,
        :math:`b_i = X_i^\top y_i / n`.

        Gradients, ``x_star`` and the constants agree; each client loss differs by the constant
        :math:`\|y_i\|^2 / (2n)`.
        """
        eye = np.eye(self.dim)
        return Quadratic(self._grams + self.lam * eye, self._moments)

    def _losses_into(self, X, idx, out):
        _kernels.ridge_losses(self.features, self.targets, self.lam, X, idx, out)

    @property
    def kernel_data(self) -> RidgeData:
        """The compiled kernels' container of this problem (read-only arrays)."""
        return RidgeData(self.features, self.targets, float(self.lam))

    def _gradients_into(self, X, idx, out):
        gradients_at(self.kernel_data, X, idx, out)


