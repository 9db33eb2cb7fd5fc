"""Shared plumbing of the problems: validation, Newton's method, F as a weighted mean."""

from functools import cached_property

import numpy as np
import scipy.linalg

from flbounds.tolerances import EPS
from flbounds.validation import (
    as_float_array,
    as_index_array,
    check_probability_vector,
)

SYMMETRY_RTOL = 1e-12  # A_i is symmetric if max|A_i - A_i'| <= 1e-12 max|A_i|
NEWTON_RTOL = 1e-12  # ||grad F|| <= 1e-12 * gradient scale (see _LogisticBase)
NEWTON_MAX_ITER = 100


def _eig_atol(dim, norm):
    """Rounding of eigvalsh (backward stable): about dim eps ||M||_2; 16x safety factor."""
    return 16.0 * dim * EPS * norm


def _frozen(a):
    a.flags.writeable = False
    return a


def _solve_pd(H, r):
    return scipy.linalg.solve(H, r, assume_a="pos")


def _newton_direction(H, g):
    """Newton step; if H is not positive definite, use |eigenvalues| floored at 1e-8 max."""
    try:
        return -scipy.linalg.cho_solve(scipy.linalg.cho_factor(H), g)
    except np.linalg.LinAlgError:
        w, V = np.linalg.eigh(H)
        floor = 1e-8 * max(np.abs(w).max(), np.finfo(np.float64).tiny)
        return -V @ ((V.T @ g) / np.maximum(np.abs(w), floor))


def _backtrack(fun, x, step, slope):
    """Armijo backtracking; the slack 8 eps |F| keeps full steps at rounding level."""
    f0 = fun(x)
    slack = 8.0 * EPS * abs(f0)
    t = 1.0
    for _ in range(60):
        x_new = x + t * step
        if fun(x_new) <= f0 + 1e-4 * t * slope + slack:
            return x_new
        t *= 0.5
    raise RuntimeError("Newton line search found no decrease")


def _newton_minimize(fun, grad, hess, x0, *, gtol):
    """Damped Newton until ||grad|| <= gtol; RuntimeError after NEWTON_MAX_ITER steps."""
    x = x0
    for _ in range(NEWTON_MAX_ITER):
        g = grad(x)
        if np.linalg.norm(g) <= gtol:
            return x
        step = _newton_direction(hess(x), g)
        x = _backtrack(fun, x, step, float(g @ step))
    norm = np.linalg.norm(grad(x))
    if norm <= gtol:
        return x
    raise RuntimeError(f"Newton did not converge in {NEWTON_MAX_ITER} iterations: "
                       f"||grad F|| = {norm:.3g} > {gtol:.3g}")


def client_weights(weights, n_clients):
    """``weights`` as read-only float64 (N,), nonnegative and summing to 1 (to
    :func:`flbounds.tolerances.probability_sum_tolerance`), or None for uniform weights.

    Weights that are all equal are uniform: None, so that :math:`F` is the plain mean (the
    same bits as without weights)."""
    if weights is None:
        return None
    w = check_probability_vector(weights, "weights", n=n_clients)
    if np.all(w == w[0]):
        return None
    return _frozen(w.copy())


class _Problem:
    """Plumbing shared by all problems: point validation, the client weights and F as their
    weighted mean of the f_i."""

    mu_is_bound = False
    L_is_bound = False
    _weights = None
    heterogeneity_gap = None   # F_star - sum_k p_k min f_k where it is computed exactly

    def _set_sizes(self, n_clients, dim, weights=None):
        self.n_clients = n_clients
        self.dim = dim
        self._all_clients = _frozen(np.arange(n_clients, dtype=np.int64))
        self._weights = client_weights(weights, n_clients)

    @property
    def weights(self):
        r"""Client weights :math:`p_k` of :math:`F = \sum_k p_k f_k`, shape (N,) (a fresh
        array; uniform :math:`1/N` when none were given)."""
        if self._weights is None:
            return np.full(self.n_clients, 1.0 / self.n_clients)
        return self._weights.copy()

    @property
    def uniform_weights(self) -> bool:
        """Whether :math:`F` is the plain mean of the client losses."""
        return self._weights is None

    def _mean(self, rows):
        r""":math:`\sum_k p_k` ``rows[k]`` (the plain mean when the weights are uniform)."""
        if self._weights is None:
            return rows.mean(axis=0)
        return np.tensordot(self._weights, rows, axes=1)

    def with_weights(self, weights):
        r"""The same clients with the objective :math:`\sum_k p_k f_k`, ``weights`` = p
        (None: uniform); a new problem, constants recomputed."""
        return self._reweighted(weights)

    @cached_property
    def heterogeneity_gradient(self):
        r""":math:`\zeta_\star^2 = \sum_k p_k \|\nabla f_k(x^\star)\|^2`, the spread of the
        client gradients at the minimiser of :math:`F` (None without ``x_star``)."""
        if self.x_star is None:
            return None
        G = self.client_gradients(self._stack(self.x_star))
        return float(self._mean(np.einsum("ip,ip->i", G, G)))

    def _points(self, X, clients):
        if clients is None:
            idx = self._all_clients
        else:
            # a read-only view, as ``_all_clients``: the kernels compile for one array type
            idx = _frozen(as_index_array(clients, "clients", self.n_clients).view())
        return as_float_array(X, "X", shape=(idx.size, self.dim)), idx

    def _stack(self, x):
        rows = np.empty((self.n_clients, self.dim))
        rows[:] = as_float_array(x, "x", shape=(self.dim,))   # np.tile, at a quarter the cost
        return rows

    def client_losses(self, X, *, clients=None):
        """Per-client losses :math:`f_i(x_i)`.

        Parameters
        ----------
        X : array_like, shape (m, dim)
            Row ``j`` is the point of client ``clients[j]``.
        clients : array_like of int, shape (m,), optional
            Client indices (repeats allowed); default all clients, ``m = n_clients``.

        Returns
        -------
        numpy.ndarray, shape (m,)
        """
        X, idx = self._points(X, clients)
        out = np.empty(idx.size)
        self._losses_into(X, idx, out)
        return out

    def client_gradients(self, X, *, clients=None):
        """Per-client gradients :math:`\\nabla f_i(x_i)`, shape ``(m, dim)``; arguments as in
        :meth:`client_losses`."""
        X, idx = self._points(X, clients)
        out = np.empty((idx.size, self.dim))
        self._gradients_into(X, idx, out)
        return out

    def loss(self, x):
        """:math:`F(x) = \\sum_k p_k f_k(x)` (client weights :attr:`weights`) at one point ``x``
        of shape (dim,)."""
        return float(self._mean(self.client_losses(self._stack(x))))

    def gradient(self, x):
        """:math:`\\nabla F(x)`, shape (dim,)."""
        return self._mean(self.client_gradients(self._stack(x)))


