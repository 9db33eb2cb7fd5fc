"""Random problem generators; every one takes an explicit ``rng``."""

import warnings

import numpy as np
from scipy.special import expit

from flbounds.validation import (
    check_int,
    check_nonnegative,
    check_positive,
    check_rng,
)

from ._nonlinear import LogisticL2, ScalarPL
from ._quadratic import Quadratic, Ridge


def _orthogonal(rng, dim):
    """Haar-random orthogonal matrix: QR of a Gaussian matrix with the signs fixed."""
    q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
    return q * np.where(np.diag(r) < 0.0, -1.0, 1.0)


def _sizes_and_spectrum(rng, n_clients, dim, mu, L):
    check_rng(rng)
    n_clients = check_int(n_clients, "n_clients", minimum=1)
    dim = check_int(dim, "dim", minimum=1)
    mu, L = check_positive(mu, "mu"), check_positive(L, "L")
    if mu > L:
        raise ValueError(f"mu must be <= L, got mu = {mu}, L = {L}")
    if dim == 1 and mu != L:
        raise ValueError("mu: with dim = 1 a spectrum containing both mu and L needs mu == L")
    return n_clients, dim, mu, L


def _offsets(rng, n_clients, dim, scale):
    """b_i = common N(0, I) vector + scale * independent N(0, I) vectors."""
    return rng.standard_normal(dim) + scale * rng.standard_normal((n_clients, dim))


def random_quadratics(rng, n_clients, dim, *, mu, L, heterogeneity=1.0):
    r"""Heterogeneous :class:`Quadratic` with ``problem.mu == mu`` and ``problem.L == L``.

    :math:`A_i = \mu v v^\top + U_i \mathrm{diag}(\lambda_i) U_i^\top`: the unit vector
    :math:`v` is shared, :math:`U_i` is a random orthonormal basis of :math:`v^\perp` and
    :math:`\lambda_i` is uniform on :math:`[\mu, L]^{d-1}`, with client 0's largest set to
    :math:`L`; so :math:`\lambda_{\min}(\bar A) = \mu` and :math:`\max_i \lambda_{\max}(A_i) = L`
    (up to rounding). :math:`b_i = \bar b + h \xi_i` with :math:`\bar b, \xi_i \sim N(0, I)`.

    Parameters
    ----------
    rng : numpy.random.Generator
    n_clients, dim : int, >= 1
    mu, L : float, 0 < mu <= L (mu == L if dim == 1)
    heterogeneity : float, >= 0
        :math:`h`, spread of the :math:`b_i`.

    Returns
    -------
    Quadratic
    """
    n_clients, dim, mu, L = _sizes_and_spectrum(rng, n_clients, dim, mu, L)
    h = check_nonnegative(heterogeneity, "heterogeneity")
    basis = _orthogonal(rng, dim)
    v, rest = basis[:, :1], basis[:, 1:]
    A = np.empty((n_clients, dim, dim))
    for i in range(n_clients):
        lam = rng.uniform(mu, L, size=dim - 1)
        if i == 0 and dim > 1:
            lam[np.argmax(lam)] = L
        U = rest @ _orthogonal(rng, dim - 1) if dim > 1 else rest
        A[i] = mu * (v @ v.T) + (U * lam) @ U.T
    return Quadratic(0.5 * (A + A.transpose(0, 2, 1)), _offsets(rng, n_clients, dim, h))


def shared_hessian_quadratics(rng, n_clients, dim, *, mu, L, heterogeneity=None, spread=None):
    r""":class:`Quadratic` with one Hessian :math:`A_i = A` for all clients.

    :math:`A = Q \mathrm{diag}(\mu, L, \lambda_3, \dots) Q^\top`, :math:`Q` random orthogonal,
    :math:`\lambda_j` uniform on :math:`[\mu, L]`; :math:`b_i = \bar b + h \xi_i`.

    Parameters
    ----------
    rng : numpy.random.Generator
    n_clients, dim : int, >= 1
    mu, L : float, 0 < mu <= L (mu == L if dim == 1)
    heterogeneity : float, >= 0
        :math:`h`, spread of the :math:`b_i` (default 1), as in :func:`random_quadratics`.
    spread : float, >= 0
        The former name of ``heterogeneity``; still accepted with a ``DeprecationWarning``.

    Returns
    -------
    Quadratic
    """
    if spread is not None:
        if heterogeneity is not None:
            raise ValueError("spread: the former name of heterogeneity; give only one of them")
        warnings.warn("shared_hessian_quadratics(spread=) is now heterogeneity=, as in "
                      "random_quadratics", DeprecationWarning, stacklevel=2)
        heterogeneity = spread
    heterogeneity = 1.0 if heterogeneity is None else heterogeneity
    n_clients, dim, mu, L = _sizes_and_spectrum(rng, n_clients, dim, mu, L)
    s = check_nonnegative(heterogeneity, "heterogeneity")
    spectrum = np.concatenate([[mu, L][:dim], rng.uniform(mu, L, size=max(dim - 2, 0))])
    Q = _orthogonal(rng, dim)
    A = (Q * spectrum) @ Q.T
    A = np.broadcast_to(0.5 * (A + A.T), (n_clients, dim, dim))
    return Quadratic(A, _offsets(rng, n_clients, dim, s))


def _client_data(rng, n_clients, n_samples, dim, h):
    """Gaussian features with client mean shifts h m_i; client parameters w_bar + h delta_i."""
    shift = h * rng.standard_normal((n_clients, 1, dim))
    features = rng.standard_normal((n_clients, n_samples, dim)) + shift
    w = rng.standard_normal(dim) + h * rng.standard_normal((n_clients, dim))
    return features, np.einsum("ikp,ip->ik", features, w)


def _data_sizes(rng, n_clients, n_samples, dim, heterogeneity):
    check_rng(rng)
    return (check_int(n_clients, "n_clients", minimum=1),
            check_int(n_samples, "n_samples", minimum=1),
            check_int(dim, "dim", minimum=1),
            check_nonnegative(heterogeneity, "heterogeneity"))


def random_ridge(rng, n_clients, n_samples, dim, *, lam, noise=0.1, heterogeneity=1.0):
    r""":class:`Ridge` with Gaussian features :math:`a \sim N(h m_i, I)` and targets
    :math:`y = a^\top w_i + \sigma \varepsilon`, :math:`w_i = \bar w + h \delta_i`
    (:math:`m_i, \bar w, \delta_i, \varepsilon` standard normal).

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of every draw.
    n_clients, n_samples, dim : int
        N, samples per client and d, each at least 1.
    lam : float
        The L2 regularisation :math:`\lambda`.
    noise : float
        :math:`\sigma \ge 0`.
    heterogeneity : float
        :math:`h \ge 0`.

    Returns
    -------
    Ridge
    """
    n_clients, n_samples, dim, h = _data_sizes(rng, n_clients, n_samples, dim, heterogeneity)
    noise = check_nonnegative(noise, "noise")
    features, signal = _client_data(rng, n_clients, n_samples, dim, h)
    targets = signal + noise * rng.standard_normal(signal.shape)
    return Ridge(features, targets, lam)


def random_logistic(rng, n_clients, n_samples, dim, *, lam, heterogeneity=1.0):
    r""":class:`LogisticL2` with features as in :func:`random_ridge` and labels
    :math:`y = +1` with probability :math:`\sigma(a^\top w_i)`, else :math:`-1`.

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of every draw.
    n_clients, n_samples, dim : int
        N, samples per client and d, each at least 1.
    lam : float
        The L2 regularisation :math:`\lambda`.
    heterogeneity : float
        :math:`h \ge 0`.

    Returns
    -------
    LogisticL2
    """
    n_clients, n_samples, dim, h = _data_sizes(rng, n_clients, n_samples, dim, heterogeneity)
    features, margins = _client_data(rng, n_clients, n_samples, dim, h)
    labels = np.where(rng.random(margins.shape) < expit(margins), 1.0, -1.0)
    return LogisticL2(features, labels, lam)


def random_scalar_pl(rng, n_clients, *, scale=1.0):
    r""":class:`ScalarPL` with :math:`c = s(z - \bar z)`, :math:`z \sim N(0, I_N)`.

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of the draw.
    n_clients : int
        N, at least 1.
    scale : float
        :math:`s \ge 0`.

    Returns
    -------
    ScalarPL
    """
    check_rng(rng)
    n_clients = check_int(n_clients, "n_clients", minimum=1)
    z = check_nonnegative(scale, "scale") * rng.standard_normal(n_clients)
    return ScalarPL(z - z.mean())
