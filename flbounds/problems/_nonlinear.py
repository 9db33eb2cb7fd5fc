"""L2-logistic, non-convex logistic and the scalar PL example."""


from functools import cached_property

import numpy as np
from scipy.special import expit

from flbounds.kernels import losses as _kernels
from flbounds.kernels._layout import line_aligned
from flbounds.kernels.gradients import LogisticData, ScalarPLData, gradients_at
from flbounds.validation import (
    as_float_array,
    check_nonnegative,
    check_positive,
)

from ._base import (
    NEWTON_RTOL,
    _frozen,
    _newton_minimize,
    _Problem,
)
from ._quadratic import _data_arrays, _gram_eigenvalues


class _LogisticBase(_Problem):
    """Logistic loss + (lam/2)||x||^2 + rho sum_p x_p^2/(1 + x_p^2); shared data handling."""

    L_is_bound = True

    def _init_logistic(self, features, labels, lam, rho, weights):
        features, labels = _data_arrays(features, labels, "labels")
        if not np.all(np.abs(labels) == 1.0):
            raise ValueError("labels must be -1 or +1")
        n_clients, n_samples, dim = features.shape
        self._set_sizes(n_clients, dim, weights)
        self.features, self.labels = line_aligned(features), line_aligned(labels)
        self.lam, self.rho = lam, rho
        top = _gram_eigenvalues(features)[1][:, -1]
        self.client_L = _frozen(top / 4.0 + lam + 2.0 * rho)
        self.L = float(self.client_L.max())
        # Every per-sample gradient of the loss has norm <= ||a_k||, and the penalty gradient
        # has entries <= 0.65 rho: Newton's gradient tolerance is relative to this scale.
        norms = np.linalg.norm(features, axis=2)
        self._grad_scale = float(norms.mean() + rho * np.sqrt(dim))

    def client_hessians(self, X, *, clients=None):
        r"""Per-client Hessians :math:`\frac1n \sum_k \sigma'(a_k^\top x) a_k a_k^\top +
        \lambda I + \rho\, \mathrm{diag}(2(1 - 3x^2)/(1 + x^2)^3)`, shape (m, d, d)."""
        X, idx = self._points(X, clients)
        F = self.features[idx]
        margins = np.einsum("jkp,jp->jk", F, X)
        weights = expit(margins) * expit(-margins) / F.shape[1]
        H = np.einsum("jk,jkp,jkq->jpq", weights, F, F)
        diag = np.full(X.shape, self.lam)
        if self.rho != 0.0:
            diag += 2.0 * self.rho * (1.0 - 3.0 * X**2) / (1.0 + X**2) ** 3
        H[:, np.arange(self.dim), np.arange(self.dim)] += diag
        return H

    def hessian(self, x):
        """Hessian of :math:`F` at ``x``, shape (d, d)."""
        return self._mean(self.client_hessians(self._stack(x)))

    def _minimize(self, x0, tol):
        gtol = tol * self._grad_scale
        return _newton_minimize(self.loss, self.gradient, self.hessian, x0, gtol=gtol)

    def _losses_into(self, X, idx, out):
        _kernels.logistic_losses(self.features, self.labels, self.lam, self.rho, X, idx, out)

    @property
    def kernel_data(self) -> LogisticData:
        """The compiled kernels' container of this problem (read-only arrays)."""
        return LogisticData(self.features, self.labels, float(self.lam), float(self.rho))

    def _gradients_into(self, X, idx, out):
        gradients_at(self.kernel_data, X, idx, out)


class LogisticL2(_LogisticBase):
    r"""L2-regularized logistic regression, labels :math:`y_k \in \{-1, +1\}`.

    .. math:: f_i(x) = \frac1n \sum_{k=1}^n \log(1 + e^{-y_k a_k^\top x})
              + \frac{\lambda}{2}\|x\|^2

    Parameters
    ----------
    features : array_like, shape (N, n, d)
    labels : array_like, shape (N, n), entries -1 or +1
    lam : float, > 0
    weights : array_like, shape (N,), optional
        Client weights :math:`p_i` of :math:`F = \sum_i p_i f_i` (default uniform).

    Attributes
    ----------
    x_star : Newton's method on :math:`F` (Cholesky solves, backtracking) until
        :math:`\|\nabla F\| \le 10^{-12} \cdot \mathrm{mean}_k\|a_k\|`; computed on first use,
        ``RuntimeError`` if it does not converge.
    mu, client_mu : :math:`\lambda`, a valid lower bound, not exact (``mu_is_bound = True``).
    client_L : :math:`\lambda_{\max}(X_i^\top X_i)/(4n) + \lambda`, an upper bound
        (``L_is_bound = True``); ``L`` is their max.
    """

    mu_is_bound = True

    def __init__(self, features, labels, lam, *, weights=None):
        self._init_logistic(features, labels, check_positive(lam, "lam"), 0.0, weights)
        self.mu = self.lam
        self.client_mu = _frozen(np.full(self.n_clients, self.lam))

    def _reweighted(self, weights):
        return LogisticL2(self.features, self.labels, self.lam, weights=weights)

    @cached_property
    def x_star(self):
        return _frozen(self._minimize(np.zeros(self.dim), NEWTON_RTOL))

    @cached_property
    def F_star(self):
        return self.loss(self.x_star)


class NonconvexLogistic(_LogisticBase):
    r"""Logistic regression with the non-convex penalty of Antoniadis et al.

    .. math:: f_i(x) = \frac1n \sum_{k} \log(1 + e^{-y_k a_k^\top x})
              + \frac{\lambda}{2}\|x\|^2 + \rho \sum_{p=1}^d \frac{x_p^2}{1 + x_p^2}

    Not convex for :math:`\rho > 0`: ``x_star``, ``F_star``, ``mu`` and ``client_mu`` are
    ``None``; use :meth:`stationary_point`. ``client_L`` bounds :math:`\|\nabla^2 f_i\|`:
    :math:`\lambda_{\max}(X_i^\top X_i)/(4n) + \lambda + 2\rho` (the penalty's curvature lies
    in :math:`[-\rho/2, 2\rho]`).

    Parameters
    ----------
    features : array_like, shape (N, n, d)
    labels : array_like, shape (N, n), entries -1 or +1
    lam : float, >= 0
    rho : float, >= 0
    weights : array_like, shape (N,), optional
        Client weights :math:`p_i` of :math:`F = \sum_i p_i f_i` (default uniform).
    """

    x_star = None
    F_star = None
    mu = None
    client_mu = None

    def __init__(self, features, labels, lam, rho, *, weights=None):
        lam, rho = check_nonnegative(lam, "lam"), check_nonnegative(rho, "rho")
        self._init_logistic(features, labels, lam, rho, weights)

    def _reweighted(self, weights):
        return NonconvexLogistic(self.features, self.labels, self.lam, self.rho,
                                 weights=weights)

    def stationary_point(self, x0=None, tol=1e-12):
        r"""A stationary point of :math:`F` (a local minimizer in practice).

        Newton's method with eigenvalue-modified Hessians and backtracking, stopped when
        :math:`\|\nabla F(x)\| \le \mathrm{tol} \cdot (\mathrm{mean}_k\|a_k\| + \rho\sqrt d)`.

        Parameters
        ----------
        x0 : array_like, shape (d,), optional
            Start; default 0.
        tol : float, > 0

        Raises
        ------
        RuntimeError
            If the tolerance is not reached.
        """
        x0 = np.zeros(self.dim) if x0 is None else as_float_array(x0, "x0", shape=(self.dim,))
        return self._minimize(x0.copy(), check_positive(tol, "tol"))


class ScalarPL(_Problem):
    r"""One-dimensional PL but non-convex problem of Karimi et al. (2016).

    .. math:: f_i(x) = x^2 + 3\sin^2 x + c_i x, \qquad \sum_i p_i c_i = 0,
              \qquad F(x) = \sum_i p_i f_i(x) = x^2 + 3\sin^2 x

    :math:`F` satisfies the Polyak-Lojasiewicz inequality
    :math:`\tfrac12 |F'(x)|^2 \ge \beta (F(x) - F^\star)` with ``beta = 1/32``; it is not convex,
    so ``mu`` and ``client_mu`` are ``None``. ``x_star = [0.]``, ``F_star = 0``, ``L = 8``
    (exact: :math:`f_i'' = 2 + 6\cos 2x`).

    Parameters
    ----------
    c : array_like, shape (N,)
        Linear terms; :math:`|\sum_i p_i c_i| \le 10^{-12} \sum_i p_i |c_i|` is required.
    weights : array_like, shape (N,), optional
        Client weights :math:`p_i` (default uniform, then the condition reads
        :math:`|\sum_i c_i| \le 10^{-12} \sum_i |c_i|` as before).

    References
    ----------
    H. Karimi, J. Nutini, M. Schmidt, "Linear convergence of gradient and proximal-gradient
    methods under the Polyak-Lojasiewicz condition", ECML-PKDD 2016.
    """

    mu = None
    client_mu = None
    beta = 1.0 / 32.0
    L = 8.0
    F_star = 0.0

    def __init__(self, c, *, weights=None):
        c = as_float_array(c, "c", ndim=1, copy=True)
        if c.size == 0:
            raise ValueError("c must have at least one client")
        self._set_sizes(c.size, 1, weights)
        if self._weights is None:
            if abs(c.sum()) > 1e-12 * np.abs(c).sum():
                raise ValueError(f"c must sum to 0 (to 1e-12 sum|c_i|), got sum {c.sum():.3g}")
        elif abs(self._weights @ c) > 1e-12 * (self._weights @ np.abs(c)):
            raise ValueError("c must have weighted sum 0 (to 1e-12 sum p_i|c_i|), got "
                             f"sum p_i c_i = {self._weights @ c:.3g}")
        self.c = _frozen(c)
        self.client_L = _frozen(np.full(c.size, self.L))
        self.x_star = _frozen(np.zeros(1))

    def _reweighted(self, weights):
        return ScalarPL(self.c, weights=weights)

    def _losses_into(self, X, idx, out):
        _kernels.scalar_pl_losses(self.c, X, idx, out)

    @property
    def kernel_data(self) -> ScalarPLData:
        """The compiled kernels' container of this problem (read-only arrays)."""
        return ScalarPLData(self.c)

    def _gradients_into(self, X, idx, out):
        gradients_at(self.kernel_data, X, idx, out)


# --------------------------------------------------------------------------- generators


