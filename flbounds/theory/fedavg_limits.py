r"""Exact limits of FedAvg under arbitrary participation, for quadratic clients (FOCUS).

Clients :math:`f_i(x) = \tfrac12 x^\top A_i x - b_i^\top x`. After :math:`\tau` local GD steps
of size :math:`\eta` from :math:`x`, client i holds the affine map

.. math:: \Phi_i(x) = M_i x + c_i, \qquad M_i = (I - \eta A_i)^\tau, \qquad
          c_i = \eta \sum_{t=0}^{\tau-1} (I - \eta A_i)^t b_i,

and one FedAvg round is :math:`x \mapsto M_S x + c_S` with :math:`M_S, c_S` the means over
:math:`S` (identity and 0 when :math:`S = \emptyset`, the skipped round). Since :math:`S_r` is
independent of :math:`x_r`, :math:`E x_{r+1} = (P_\emptyset I + \sum_i q_i M_i) E x_r +
\sum_i q_i c_i` with :math:`q_i = E[1\{i\in S\}/|S|; S \ne \emptyset]`, whose fixed point is
:func:`fedavg_fixed_point`. The paper only says FedAvg converges to "a distorted,
participation-weighted" point; these formulas are derived in spec/002_focus.md section 3 and
checked by Monte Carlo in ``verify/focus``.
"""

from __future__ import annotations

import numpy as np

from flbounds.tolerances import CONDITION_LIMIT, EPS, TINY
from flbounds.validation import (
    as_float_array,
    check_int,
    check_positive,
    check_probability_vector,
    check_symmetric,
)


def _check_quadratics(A, b, *, convex=True):
    A = as_float_array(A, "A", ndim=3)
    n_clients, dim, dim2 = A.shape
    if n_clients == 0 or dim == 0 or dim != dim2:
        raise ValueError(f"A must have shape (N, d, d) with N, d >= 1, got {A.shape}")
    check_symmetric(A, "A")
    A = 0.5 * (A + A.transpose(0, 2, 1))
    if convex:
        eig = np.linalg.eigvalsh(A)
        tol = 16 * dim * EPS * np.abs(eig).max(axis=1)
        bad = np.flatnonzero(eig[:, 0] < -tol)
        if bad.size:
            raise ValueError(f"A must be positive semidefinite (convex clients); A[{bad[0]}] "
                             f"has eigenvalue {eig[bad[0], 0]:.3g}")
    b = as_float_array(b, "b", shape=(n_clients, dim))
    return A, b


def _check_weights(q, n_clients):
    q = as_float_array(q, "q", shape=(n_clients,))
    if np.any(q < 0) or not np.any(q > 0):
        raise ValueError("q must be nonnegative and not all zero")
    return q


def local_maps(A, b, *, step, local_steps):
    r"""The affine maps :math:`(M_i, c_i)` of :math:`\tau` local GD steps (module docstring).

    Returns
    -------
    M : (N, d, d), c : (N, d)
    """
    A, b = _check_quadratics(A, b, convex=False)
    step = check_positive(step, "step")
    # the maps are built by one matrix product per step: capped as the algorithms cap it
    local_steps = check_int(local_steps, "local_steps", minimum=1, maximum=10**6)
    n_clients, dim = b.shape
    step_map = np.eye(dim) - step * A
    M = np.broadcast_to(np.eye(dim), A.shape).copy()
    c = np.zeros_like(b)
    for _ in range(local_steps):  # Phi(x) after t+1 steps = (I - eta A)(Phi_t(x)) + eta b
        c = np.einsum("ipq,iq->ip", step_map, c) + step * b
        M = step_map @ M
    return M, c


def fedavg_fixed_point(A, b, q, *, step, local_steps) -> np.ndarray:
    r"""FedAvg's mean limit :math:`\bar x = [\sum_i q_i (I - M_i)]^{-1} \sum_i q_i c_i`.

    Parameters
    ----------
    A : array_like, shape (N, d, d)
        Symmetric positive semidefinite client Hessians.
    b : array_like, shape (N, d)
    q : array_like, shape (N,)
        Expected aggregation weights :math:`E[1\{i \in S\}/|S|; S \ne \emptyset]` (use the
        exact ``aggregation_weights()`` of a participation process); any positive scaling
        gives the same point.
    step : float, > 0
    local_steps : int, >= 1

    Returns
    -------
    numpy.ndarray, shape (d,)

    Raises
    ------
    ValueError
        Bad shapes, non-symmetric or indefinite ``A``, or a singular
        :math:`\sum_i q_i (I - M_i)` (no unique fixed point).
    """
    A, b = _check_quadratics(A, b)
    q = _check_weights(q, b.shape[0])
    M, c = local_maps(A, b, step=step, local_steps=local_steps)
    lhs = np.einsum("i,ipq->pq", q, np.eye(b.shape[1]) - M)
    return _solve(lhs, q @ c, "q, A, step: sum_i q_i (I - M_i)")


def weighted_minimizer(A, b, q) -> np.ndarray:
    r""":math:`\arg\min_x \sum_i q_i f_i(x) = (\sum_i q_i A_i)^{-1} \sum_i q_i b_i`.

    This is FedAvg's limit for :math:`\tau = 1` (any :math:`\eta`) and its limit as
    :math:`\eta \to 0` for any fixed :math:`\tau` (since :math:`I - M_i = \tau\eta A_i +
    O(\eta^2)` and :math:`c_i = \tau\eta b_i + O(\eta^2)`).
    """
    A, b = _check_quadratics(A, b)
    q = _check_weights(q, b.shape[0])
    return _solve(np.einsum("i,ipq->pq", q, A), q @ b, "q, A: sum_i q_i A_i")


def shared_hessian_fixed_point(A, b, q) -> np.ndarray:
    r"""Shared Hessian :math:`A_i \equiv A`: :math:`\bar x = A^{-1} \sum_i q_i b_i / \sum_i q_i`
    for every :math:`\eta` and :math:`\tau` (no client drift, only sampling bias).

    Parameters
    ----------
    A : array_like, shape (d, d), symmetric positive definite
    b : array_like, shape (N, d)
    q : array_like, shape (N,)
    """
    A = as_float_array(A, "A", ndim=2)
    b = as_float_array(b, "b", ndim=2)
    if A.shape != (b.shape[1], b.shape[1]):
        raise ValueError(f"A must have shape ({b.shape[1]}, {b.shape[1]}), got {A.shape}")
    _check_quadratics(A[None], b[:1])
    q = _check_weights(q, b.shape[0])
    return _solve(A, q @ b / q.sum(), "A")


def _solve(lhs, rhs, name):
    scale = max(np.abs(lhs).max(), TINY)
    if np.linalg.cond(lhs / scale) > CONDITION_LIMIT:
        raise ValueError(f"{name} is singular (condition number > {CONDITION_LIMIT:g}); "
                         "no unique fixed point")
    return np.linalg.solve(lhs, rhs)


def _round_maps(A, b, masks, probs, step, local_steps):
    """Per-subset round maps (M_S, c_S) with their probabilities (zero-probability sets dropped)."""
    M, c = local_maps(A, b, step=step, local_steps=local_steps)
    masks = np.asarray(masks, dtype=bool)
    if masks.ndim != 2 or masks.shape[1] != b.shape[0]:
        raise ValueError(f"masks must have shape (n_subsets, {b.shape[0]}), got {masks.shape}")
    probs = check_probability_vector(probs, "probs", n=masks.shape[0])
    keep = probs > 0
    masks, probs = masks[keep], probs[keep]
    sizes = masks.sum(axis=1)
    weights = np.divide(masks, sizes[:, None], out=np.zeros(masks.shape), where=sizes[:, None] > 0)
    M_S = np.einsum("si,ipq->spq", weights, M)
    c_S = weights @ c
    M_S[sizes == 0] = np.eye(b.shape[1])
    return M_S, c_S, probs


def fedavg_stationary_moments(A, b, masks, probs, *, step, local_steps):
    r"""Exact stationary mean :math:`m` and second moment :math:`\Sigma_2 = E[x x^\top]` of
    FedAvg's server iterate, by enumerating the participation subsets.

    .. math:: m = E[M_S] m + E[c_S], \qquad
              \mathrm{vec}\,\Sigma_2 = (I - E[M_S \otimes M_S])^{-1}
              \mathrm{vec}\, E[M_S m c_S^\top + c_S m^\top M_S^\top + c_S c_S^\top].

    Parameters
    ----------
    A, b : quadratic clients (as in :func:`fedavg_fixed_point`)
    masks : bool (n_subsets, N); probs : (n_subsets,)
        The i.i.d. per-round law of :math:`S_r`
        (``flbounds.participation.subset_distribution``).

    Returns
    -------
    (m, second) : (d,), (d, d)

    Raises
    ------
    ValueError
        If the second-moment recursion is not contracting (no stationary law).
    """
    A, b = _check_quadratics(A, b)
    M_S, c_S, probs = _round_maps(A, b, masks, probs, step, local_steps)
    dim = b.shape[1]
    mean_M = np.einsum("s,spq->pq", probs, M_S)
    m = _solve(np.eye(dim) - mean_M, probs @ c_S, "E[M_S] - I")
    kron = np.einsum("s,sac,sbd->abcd", probs, M_S, M_S).reshape(dim * dim, dim * dim)
    if np.max(np.abs(np.linalg.eigvals(kron))) >= 1.0:
        raise ValueError("step, local_steps: E[M_S kron M_S] has spectral radius >= 1 "
                         "(FedAvg's second moment does not converge)")
    Mm = np.einsum("spq,q->sp", M_S, m)
    forcing = np.einsum("s,sa,sb->ab", probs, Mm, c_S)
    forcing = forcing + forcing.T + np.einsum("s,sa,sb->ab", probs, c_S, c_S)
    second = np.linalg.solve(np.eye(dim * dim) - kron, forcing.ravel()).reshape(dim, dim)
    return m, 0.5 * (second + second.T)


def stationary_error(m, second, x_star) -> float:
    r""":math:`E\|x - x^\star\|^2 = \mathrm{tr}\,\Sigma_2 - 2 x^{\star\top} m + \|x^\star\|^2`."""
    return float(np.trace(second) - 2 * x_star @ m + x_star @ x_star)


def virtual_phase_errors(A, b, q, m, second, x_star, *, step, local_steps) -> np.ndarray:
    r"""Stationary :math:`E\|\bar x_{r\tau+t} - x^\star\|^2`, t = 0..tau-1, of the virtual
    average :math:`\bar x = \sum_i \hat q_i \Phi_i^{(t)}(x_r)` (FOCUS (41)-(43), Theorem 3),
    :math:`\hat q = q / \sum q`, given the server's stationary moments ``(m, second)``.
    Entry 0 is the server's own error."""
    A, b = _check_quadratics(A, b)
    q = _check_weights(q, b.shape[0])
    q = q / q.sum()
    out = np.empty(local_steps)
    for t in range(local_steps):
        if t == 0:
            P, d = np.eye(b.shape[1]), np.zeros(b.shape[1])
        else:
            M, c = local_maps(A, b, step=step, local_steps=t)
            P, d = np.einsum("i,ipq->pq", q, M), q @ c
        shift = d - x_star
        out[t] = np.trace(P @ second @ P.T) + 2 * shift @ (P @ m) + shift @ shift
    return out
