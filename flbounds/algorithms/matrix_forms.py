r"""FedAvg and FOCUS as algorithms over a time-varying server-plus-clients graph (FOCUS).

The state is stacked, :math:`\mathbf x_k \in \mathbb R^{(N+1)\times d}`: row 0 the server
(:math:`f_0 \equiv 0`), row i client i. One iteration index :math:`k = r\tau + t`. Mixing is
by the explicit :math:`(N+1)\times(N+1)` matrices of
:mod:`flbounds.participation.matrices`: the pull :math:`R(S)`, the push
:math:`C(S) = R(S)^\top` and the average :math:`A(S)`. These are slow, literal
transcriptions used to check the federated forms
(:func:`~flbounds.algorithms.fedavg`, :func:`~flbounds.algorithms.focus`) on the same plan.

References
----------
FOCUS: Sections 4.1 and 4.2.1, eqs. (6)-(7), (41)-(44), (73)-(74), Appendix E.1;
      spec/002_focus.md sections 1.6 and 1.8 (the consistent 0-indexed schedule).
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms._common import checked_run
from flbounds.participation.matrices import average_matrix, pull_matrix, push_matrix


def stacked_gradient(problem, X) -> np.ndarray:
    r""":math:`\nabla \mathbf f(\mathbf x)`: row 0 (server) is 0, row i is
    :math:`\nabla f_i(x_i)`."""
    out = np.zeros_like(X)
    out[1:] = problem.client_gradients(X[1:])
    return out


def _setup(problem, plan, step, local_steps, x0, per_local_step=True):
    """Checked plan, the steps as a function ``eta(r, t)`` of round and local step, local
    steps and the stacked start."""
    plan, steps, local_steps, x = checked_run(problem, plan, step, local_steps, x0,
                                              per_local_step=per_local_step)

    def eta(r, t):
        return steps[r, t if steps.shape[1] > 1 else 0]

    return plan, eta, local_steps, np.tile(x, (problem.n_clients + 1, 1))


def fedavg_matrix(problem, plan, *, step, local_steps, x0=None) -> np.ndarray:
    r"""FedAvg as (6a)-(6c) with schedule (7).

    .. math:: \mathbf y_k = R_k \mathbf x_k, \quad
              \mathbf y_k^+ = \mathbf y_k - \eta D_k \nabla\mathbf f(\mathbf y_k), \quad
              \mathbf x_{k+1} = A_k \mathbf y_k^+,

    :math:`R_k = R(S_r)` at the first and :math:`A_k = A(S_r)` at the last iteration of round r,
    identity otherwise; :math:`D_k = \mathrm{diag}(0, s_r)`.

    Parameters
    ----------
    problem : flbounds.problems problem
        The clients' functions.
    plan : array_like of bool, shape (n_rounds, n_clients)
        Row r is the participation mask of :math:`S_r`.
    step : float, Schedule or array
        :math:`\eta > 0`, or a schedule (:mod:`flbounds.algorithms.schedules`).
    local_steps : int
        :math:`\tau \ge 1`.
    x0 : array_like, shape (d,), optional
        Every node's start (default 0).

    Returns
    -------
    numpy.ndarray, shape (n_rounds + 1, d)
        The server rows at the round ends.

    References
    ----------
    .. [1] B. Ying, Z. Li, H. Yang. Exact and Linear Convergence for Federated Learning under
       Arbitrary Client Participation is Attainable. NeurIPS 2025. arXiv:2503.20117,
       eqs. (6a)-(6c) and (7).
    """
    plan, eta, local_steps, X = _setup(problem, plan, step, local_steps, x0)
    eye = np.eye(X.shape[0])
    out = [X[0].copy()]
    for r, mask in enumerate(plan):
        D = np.diag(np.concatenate([[0.0], mask.astype(float)]))
        for t in range(local_steps):
            R = pull_matrix(mask) if t == 0 else eye
            A = average_matrix(mask) if t == local_steps - 1 else eye
            Y = R @ X
            X = A @ (Y - eta(r, t) * D @ stacked_gradient(problem, Y))
        out.append(X[0].copy())
    return np.array(out)


def fedavg_virtual(problem, plan, *, step, local_steps, x0=None) -> np.ndarray:
    r"""FedAvg in the "virtual" form (41)-(43): every node steps,
    :math:`\mathbf y_{k+1} = \mathbf x_k - \eta \nabla\mathbf f(\mathbf x_k)`, and at round ends
    :math:`\mathbf x_{k+1} = \mathbb 1 w_S^\top \mathbf y_{k+1}` with :math:`w_S = [0, s/|S|]`
    (rank one, every row equal; example (44)). An empty round uses :math:`w = e_0` (all nodes
    return to the unchanged server model).

    Parameters
    ----------
    problem : flbounds.problems problem
        The clients' functions.
    plan : array_like of bool, shape (n_rounds, n_clients)
        Row r is the participation mask of :math:`S_r`.
    step : float, Schedule or array
        :math:`\eta > 0`, or a schedule (:mod:`flbounds.algorithms.schedules`).
    local_steps : int
        :math:`\tau \ge 1`.
    x0 : array_like, shape (d,), optional
        Every node's start (default 0).

    Returns
    -------
    numpy.ndarray, shape (n_rounds + 1, d)
        The server rows at the round ends.

    References
    ----------
    .. [1] B. Ying, Z. Li, H. Yang. Exact and Linear Convergence for Federated Learning under
       Arbitrary Client Participation is Attainable. NeurIPS 2025. arXiv:2503.20117,
       eqs. (41)-(44).
    """
    plan, eta, local_steps, X = _setup(problem, plan, step, local_steps, x0)
    out = [X[0].copy()]
    for r, mask in enumerate(plan):
        for t in range(local_steps):
            X = X - eta(r, t) * stacked_gradient(problem, X)
            if t == local_steps - 1:
                w = np.concatenate([[0.0], mask / mask.sum()]) if mask.any() else \
                    np.eye(X.shape[0])[0]
                X = np.outer(np.ones(X.shape[0]), w) @ X
        out.append(X[0].copy())
    return np.array(out)


def focus_matrix(problem, plan, *, step, local_steps, x0=None) -> np.ndarray:
    r"""FOCUS as time-varying push-pull, swapped form (73)-(74):

    .. math:: \mathbf y_{k+1} = C_k(\mathbf y_k + \nabla\mathbf f(\mathbf x_k)
              - \nabla\mathbf f(\mathbf x_{k-1})), \qquad
              \mathbf x_{k+1} = R_k(\mathbf x_k - \eta D_k \mathbf y_{k+1}).

    Schedule, :math:`k = r\tau + t`: at :math:`t = 0`, :math:`C_k = C(S_{r-1})` (identity for
    r = 0), :math:`R_k = R(S_r)`, :math:`D_k = e_0 e_0^\top` (server step only); at
    :math:`t \ge 1`, :math:`C_k = R_k = I`, :math:`D_k = \mathrm{diag}(0, s_r)` (local steps).
    All nodes start at :math:`x_0`, :math:`\mathbf y_0 = 0` and the gradient memory
    :math:`\nabla\mathbf f(\mathbf x_{-1})` is 0: Algorithm 1's initialization (any
    :math:`\mathbf x_{-1}` is allowed by the paper's footnote; zero memory is its choice).

    Parameters
    ----------
    problem : flbounds.problems problem
        The clients' functions.
    plan : array_like of bool, shape (n_rounds, n_clients)
        Row r is the participation mask of :math:`S_r`.
    step : float, Schedule or array
        :math:`\eta > 0`, or a schedule (:mod:`flbounds.algorithms.schedules`).
    local_steps : int
        :math:`\tau \ge 1`.
    x0 : array_like, shape (d,), optional
        Every node's start (default 0).

    Returns
    -------
    numpy.ndarray, shape (n_rounds + 1, d)
        The server model after each server step, :math:`\bar x_{r\tau+1}`,
        r = 0..n_rounds, which is Algorithm 1's :math:`x_r`.

    References
    ----------
    .. [1] B. Ying, Z. Li, H. Yang. Exact and Linear Convergence for Federated Learning under
       Arbitrary Client Participation is Attainable. NeurIPS 2025. arXiv:2503.20117,
       eqs. (73)-(74), Algorithm 1.
    """
    plan, eta, local_steps, X = _setup(problem, plan, step, local_steps, x0,
                                       per_local_step=False)
    n_nodes = X.shape[0]
    eye = np.eye(n_nodes)
    Y = np.zeros_like(X)
    memory = np.zeros_like(X)
    server_only = np.zeros((n_nodes, n_nodes))
    server_only[0, 0] = 1.0
    previous = np.zeros(n_nodes - 1, dtype=bool)
    schedule = np.vstack([plan, np.zeros((1, plan.shape[1]), dtype=bool)])
    out = []
    for r, mask in enumerate(schedule):
        clients = np.diag(np.concatenate([[0.0], mask.astype(float)]))
        for t in range(local_steps if r < plan.shape[0] else 1):
            C = push_matrix(previous) if t == 0 else eye
            R = pull_matrix(mask) if t == 0 else eye
            D = server_only if t == 0 else clients
            grad = stacked_gradient(problem, X)
            Y = C @ (Y + grad - memory)
            memory = grad
            # t = 0 closes round r - 1 (its server step), t >= 1 are round r's local moves
            X = R @ (X - eta(max(r - 1, 0) if t == 0 else r, 0) * D @ Y)
            if t == 0:
                out.append(X[0].copy())
        previous = mask
    return np.array(out)
