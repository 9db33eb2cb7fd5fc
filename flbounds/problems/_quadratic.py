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
    weights : array_like, shape (N,), optional
        Client weights :math:`p_k` (nonnegative, summing to 1; default uniform): the objective
        is :math:`F = \sum_k p_k f_k` and :math:`\bar A = \sum_k p_k A_k`,
        :math:`\bar b = \sum_k p_k b_k`.

    Attributes
    ----------
    x_star : :math:`\bar A^{-1} \bar b`.
    mu : :math:`\lambda_{\min}(\bar A)` (exact).
    L : :math:`\max_i \lambda_{\max}(A_i)` (exact).
    client_mu, client_L : :math:`\lambda_{\min}(A_i)`, :math:`\lambda_{\max}(A_i)`, shape (N,).
    F_star : :math:`F(x^\star) = -\tfrac12 \bar b^\top x^\star`.
    heterogeneity_gap : :math:`\Gamma = F^\star - \sum_k p_k f_k^\star` (Li et al., ICLR 2020),
        :math:`f_k^\star = -\tfrac12 b_k^\top A_k^{-1} b_k`; None unless every client of
        positive weight is strongly convex.
    heterogeneity_gradient : :math:`\sum_k p_k \|\nabla f_k(x^\star)\|^2`.
    """

    def __init__(self, A, b, *, weights=None):
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
        self._set_sizes(n_clients, dim, weights)
        A_mean = self._mean(A)
        eig_mean = np.linalg.eigvalsh(A_mean)
        if eig_mean[0] <= _eig_atol(dim, eig_mean[-1]):
            raise ValueError("A: the mean Hessian sum_i p_i A_i must be positive definite (F "
                             f"strongly convex), got lambda_min = {eig_mean[0]:.3g}")
        self.A, self.b = line_aligned(A), line_aligned(b)
        self.client_mu = _frozen(np.maximum(eig[:, 0], 0.0))
        self.client_L = _frozen(eig[:, -1].copy())
        self.mu, self.L = float(eig_mean[0]), float(self.client_L.max())
        self.x_star = _frozen(_solve_pd(A_mean, self._mean(b)))
        self.F_star = self.loss(self.x_star)

    def _reweighted(self, weights):
        return Quadratic(self.A, self.b, weights=weights)

    @cached_property
    def heterogeneity_gap(self):
        return _gap(self, self.A, self.b, 0.0)

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


def _gap(problem, H, r, offsets):
    r""":math:`F^\star - \sum_k p_k f_k^\star` for :math:`f_k = \tfrac12 x^\top H_k x - r_k^\top x
    + c_k` (``offsets`` :math:`c_k`), or None if a client of positive weight has a singular
    :math:`H_k` (its minimum may be :math:`-\infty`)."""
    w = problem.weights
    live = w > 0.0
    if np.any(problem.client_mu[live] <= _eig_atol(problem.dim, problem.client_L[live])):
        return None
    minima = np.zeros(problem.n_clients)
    for k in np.flatnonzero(live):
        minima[k] = -0.5 * r[k] @ _solve_pd(H[k], r[k])
    return float(problem.F_star - problem._mean(minima + offsets))


def _data_arrays(features, second, second_name):
    """Validate features (N, n, d) and a per-sample array (N, n); read-only copies on a cache
    line (one copy each, however large)."""
    features = as_float_array(features, "features", ndim=3)
    if min(features.shape) == 0:
        raise ValueError(f"features must have N, n, d >= 1, got shape {features.shape}")
    second = as_float_array(second, second_name, shape=features.shape[:2])
    return line_aligned(features, copy=True), line_aligned(second, copy=True)


def _gram_eigenvalues(features, mean=None):
    """Eigenvalues (ascending) of X_i'X_i / n per client, and of their (weighted) ``mean``
    (default the plain mean)."""
    grams = np.einsum("ikp,ikq->ipq", features, features) / features.shape[1]
    avg = grams.mean(axis=0) if mean is None else mean(grams)
    return grams, np.linalg.eigvalsh(grams), np.linalg.eigvalsh(avg)


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
        :math:`G_i = X_i^\top X_i / n`, :math:`\bar G = \sum_i p_i G_i`, must be positive
        definite.
    weights : array_like, shape (N,), optional
        Client weights :math:`p_i` of :math:`F = \sum_i p_i f_i` (default uniform).

    Attributes
    ----------
    x_star : normal equations :math:`(\bar G + \lambda I)^{-1} \sum_i p_i X_i^\top y_i / n`.
    mu : :math:`\lambda_{\min}(\bar G) + \lambda` (exact).
    client_mu, client_L : :math:`\lambda_{\min/\max}(G_i) + \lambda` (exact); ``L`` their max.
    heterogeneity_gap, heterogeneity_gradient : as in :class:`Quadratic`.
    """

    def __init__(self, features, targets, lam, *, weights=None):
        features, targets = _data_arrays(features, targets, "targets")
        self.lam = check_nonnegative(lam, "lam")
        n_clients, n_samples, dim = features.shape
        self._set_sizes(n_clients, dim, weights)
        grams, eig, eig_mean = _gram_eigenvalues(features, self._mean)
        if eig_mean[0] + self.lam <= _eig_atol(dim, eig_mean[-1] + self.lam):
            raise ValueError("features: the mean Hessian sum_i p_i X_i'X_i/n + lam I must be "
                             "positive definite (use lam > 0 or more samples)")
        self.features, self.targets = line_aligned(features), line_aligned(targets)
        self._grams = grams
        self._moments = np.einsum("ikp,ik->ip", features, targets) / n_samples
        self.client_mu = _frozen(np.maximum(eig[:, 0], 0.0) + self.lam)
        self.client_L = _frozen(eig[:, -1] + self.lam)
        self.mu = float(max(eig_mean[0], 0.0) + self.lam)
        self.L = float(self.client_L.max())
        hess = self._mean(grams) + self.lam * np.eye(dim)
        self.x_star = _frozen(_solve_pd(hess, self._mean(self._moments)))
        self.F_star = self.loss(self.x_star)

    def _reweighted(self, weights):
        return Ridge(self.features, self.targets, self.lam, weights=weights)

    @cached_property
    def heterogeneity_gap(self):
        H = self._grams + self.lam * np.eye(self.dim)
        offsets = np.einsum("ik,ik->i", self.targets, self.targets) / (2 * self.targets.shape[1])
        return _gap(self, H, self._moments, offsets)

    def as_quadratic(self):
        r"""The same problem as a :class:`Quadratic`: :math:`A_i = G_i + \lambda I`,
        :math:`b_i = X_i^\top y_i / n`.

        Gradients, ``x_star`` and the constants agree; each client loss differs by the constant
        :math:`\|y_i\|^2 / (2n)`.
        """
        eye = np.eye(self.dim)
        return Quadratic(self._grams + self.lam * eye, self._moments, weights=self._weights)

    def _losses_into(self, X, idx, out):
        _kernels.ridge_losses(self.features, self.targets, self.lam, X, idx, out)

    @property
    def kernel_data(self) -> RidgeData:
        """The compiled kernels' container of this problem (read-only arrays)."""
        return RidgeData(self.features, self.targets, float(self.lam))

    def _gradients_into(self, X, idx, out):
        gradients_at(self.kernel_data, X, idx, out)


