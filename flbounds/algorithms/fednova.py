r"""FedNova (Wang, Liu, Liang, Joshi, Poor, NeurIPS 2020): normalized averaging.

Client i runs :math:`\tau_i` local GD steps from :math:`x_r` (``local_steps`` may differ per
client) and reports its normalized update, the average gradient of its local phase,

.. math:: d_i = \frac{x_r - z_{\tau_i,i}}{\eta_r \tau_i}
          \quad(\lVert a_i\rVert_1 = \tau_i \text{ for plain local SGD}).

With weights :math:`w_i = p_i / \sum_{S_r} p_j` over the participants (:math:`p` the problem's
client weights) the server steps with the effective number of steps
:math:`\tau_{\mathrm{eff}} = \sum_{S_r} w_i \tau_i`,

.. math:: x_{r+1} = x_r - \eta_g\,\eta_r\,\tau_{\mathrm{eff}} \sum_{S_r} w_i d_i.

With equal :math:`\tau_i`, :math:`\eta_g = 1` and uniform weights this is FedAvg; with unequal
:math:`\tau_i` it removes FedAvg's bias toward the clients that run more steps (the paper's
objective inconsistency). An empty round leaves :math:`x` unchanged. With full participation
this is the authors' code (``github.com/JYWa/FedNova``, ``distoptim/FedNova.py``, momentum 0,
no proximal term, no server momentum), checked in
``tests/flbounds/algorithms/test_authors_code.py``.

References
----------
J. Wang, Q. Liu, H. Liang, G. Joshi, H. V. Poor. Tackling the Objective Inconsistency Problem
in Heterogeneous Federated Optimization. NeurIPS 2020, eqs. (6)-(7), Section 4.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.algorithms import schedules
from flbounds.algorithms._common import MAX_LOCAL_STEPS, check_plan, check_problem, start_point
from flbounds.validation import check_positive


class FedNovaTrace(NamedTuple):
    r"""Trace of :func:`fednova`.

    Attributes
    ----------
    x : ndarray, shape (n_rounds + 1, d)
        Server iterates.
    updates : ndarray, shape (n_rounds, N, d)
        The normalized updates :math:`d_i` of the participants (NaN rows for the others).
    tau_eff : ndarray, shape (n_rounds,)
        :math:`\tau_{\mathrm{eff}}` (NaN for an empty round).

    References
    ----------
    J. Wang, Q. Liu, H. Liang, G. Joshi and H. V. Poor, Tackling the objective inconsistency
    problem in heterogeneous federated optimization (FedNova), NeurIPS 2020.
    """

    x: np.ndarray
    updates: np.ndarray
    tau_eff: np.ndarray


def _check_local_steps(local_steps, n_clients):
    arr = np.asarray(local_steps)
    if arr.ndim == 0:
        arr = np.full(n_clients, arr)
    if arr.shape != (n_clients,) or arr.dtype.kind not in "iu" or np.any(arr < 1) \
            or np.any(arr > MAX_LOCAL_STEPS):
        raise ValueError(f"local_steps must be an integer in [1, {MAX_LOCAL_STEPS}] or one per "
                         f"client (shape ({n_clients},)), got {local_steps!r}")
    return arr.astype(np.int64)


def fednova(problem, plan, *, step, local_steps, x0=None, server_step=1.0) -> FedNovaTrace:
    r"""FedNova with the participation sets of ``plan`` (module docstring gives the update).

    Parameters
    ----------
    problem : flbounds.problems problem
        Its ``weights`` are the :math:`p_i`.
    plan : array_like of bool, shape (n_rounds, n_clients)
        Row r is the participation mask of :math:`S_r`.
    step : float, Schedule or array
        Local step :math:`\eta > 0`, or one per round (:mod:`flbounds.algorithms.schedules`).
    local_steps : int or array_like of int, shape (N,)
        :math:`\tau_i \ge 1`, the same for every client or one per client.
    x0 : array_like, shape (d,), optional
        Start (default 0).
    server_step : float, default 1
        :math:`\eta_g > 0`.

    Returns
    -------
    FedNovaTrace
    """
    check_problem(problem)
    plan = check_plan(plan, problem.n_clients)
    taus = _check_local_steps(local_steps, problem.n_clients)
    steps = schedules.resolve(step, plan.shape[0], int(taus.max()),
                              per_local_step=False)[1][:, 0]
    server_step = check_positive(server_step, "server_step")
    x = start_point(problem, x0)
    p = np.asarray(getattr(problem, "weights", np.full(problem.n_clients,
                                                       1.0 / problem.n_clients)))
    xs = np.empty((plan.shape[0] + 1, problem.dim))
    xs[0] = x
    updates = np.full((plan.shape[0], problem.n_clients, problem.dim), np.nan)
    tau_eff = np.full(plan.shape[0], np.nan)
    for r, mask in enumerate(plan):
        idx = np.flatnonzero(mask)
        if idx.size:
            Z = np.empty((idx.size, x.size))
            Z[:] = x
            for t in range(int(taus[idx].max())):
                moving = taus[idx] > t
                G = problem.client_gradients(Z[moving], clients=idx[moving])
                Z[moving] -= steps[r] * G
            d = (x - Z) / (steps[r] * taus[idx])[:, None]
            w = p[idx] / p[idx].sum()
            tau_eff[r] = w @ taus[idx]
            updates[r, idx] = d
            x = x - server_step * steps[r] * tau_eff[r] * (w @ d)
        xs[r + 1] = x
    return FedNovaTrace(xs, updates, tau_eff)
