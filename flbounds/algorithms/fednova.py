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
objective inconsistency). An empty round leaves :math:`x` (and the server momentum) unchanged.

**Variants** (the paper's Section 4 and its code). The local step direction :math:`v` of
client i at local step k, from its gradient :math:`g = \nabla f_i(z_k)`:

- local momentum :math:`\rho` (``momentum``): :math:`m_0 = g`, :math:`m_k = \rho m_{k-1} + g`,
  :math:`v = m_k` (heavy ball) or :math:`v = g + \rho m_k` (``nesterov=True``); the buffer
  restarts at every round. :math:`a_{i,k} = (1 - \rho^{\tau_i - k}) / (1 - \rho)`, so
  :math:`\lVert a_i\rVert_1 = \sum_{k=1}^{\tau_i} (1 - \rho^k)/(1 - \rho)`;
- proximal term :math:`\mu` (``prox``, FedProx's local objective): :math:`v \mathrel{+}=
  \mu (z_k - x_r)` (added after the momentum, so it never enters the buffer);
  :math:`\lVert a_i\rVert_1 = \sum_{k=0}^{\tau_i - 1} (1 - \eta_r\mu)^k`;
- with both, :math:`\lVert a_i\rVert_1` follows the code's recurrence (per step
  :math:`c \leftarrow \rho c + 1`, :math:`a \leftarrow (a + c)(1 - \eta_r\mu) + 1`), which is
  not the product of the two rules.

Then :math:`d_i = (x_r - z_{\tau_i,i}) / (\eta_r \lVert a_i\rVert_1)` and
:math:`\tau_{\mathrm{eff}} = \sum_{S_r} w_i \lVert a_i\rVert_1`, except with a proximal term,
where the code takes :math:`\tau_{\mathrm{eff}} = \sum_{S_r} w_i \tau_i` (kept here). Server
momentum :math:`\beta` (``server_momentum``, the code's ``gmf``): with
:math:`\Delta_r = \tau_{\mathrm{eff}} \sum_{S_r} w_i d_i`, :math:`u_0 = \Delta_0`,
:math:`u_r = \beta u_{r-1} + \Delta_r` and :math:`x_{r+1} = x_r - \eta_g \eta_r u_r`.

With full participation each variant is the authors' code (``github.com/JYWa/FedNova``,
``distoptim/FedNova.py``, dampening 0), checked in
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


def normalizer(tau, *, step=1.0, momentum=0.0, prox=0.0) -> float:
    r""":math:`\lVert a_i\rVert_1` of a client running ``tau`` local steps (module docstring):
    the authors' per-step recurrence, so every variant and their combination count as the code
    counts."""
    counter = vec = 0.0
    for _ in range(int(tau)):
        if momentum != 0:
            counter = counter * momentum + 1
            vec += counter
        if step * prox != 0:
            vec = vec * (1 - step * prox) + 1
        if momentum == 0 and step * prox == 0:
            vec += 1
    return vec


def fednova(problem, plan, *, step, local_steps, x0=None, server_step=1.0, momentum=0.0,
            nesterov=False, prox=0.0, server_momentum=0.0) -> FedNovaTrace:
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
    momentum : float in [0, 1), default 0
        Local momentum :math:`\rho` (restarted every round).
    nesterov : bool, default False
        Nesterov's form of the local momentum (needs ``momentum > 0``).
    prox : float >= 0, default 0
        Proximal coefficient :math:`\mu` of the local objective
        :math:`f_i(z) + \frac{\mu}2\lVert z - x_r\rVert^2`; needs :math:`\eta_r\mu < 1`.
    server_momentum : float in [0, 1), default 0
        Server momentum :math:`\beta` (the code's ``gmf``).

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
    for name, value in (("momentum", momentum), ("server_momentum", server_momentum)):
        if not (np.isscalar(value) and 0 <= value < 1):
            raise ValueError(f"{name} must be a number in [0, 1), got {value!r}")
    if not (np.isscalar(prox) and np.isfinite(prox) and prox >= 0):
        raise ValueError(f"prox must be a finite number >= 0, got {prox!r}")
    if nesterov and momentum == 0:
        raise ValueError("nesterov=True needs momentum > 0")
    if prox and np.max(steps) * prox >= 1:
        raise ValueError(f"prox times the step must be below 1, got prox={prox!r} and a step "
                         f"of {np.max(steps)!r}")
    x = start_point(problem, x0)
    p = np.asarray(getattr(problem, "weights", np.full(problem.n_clients,
                                                       1.0 / problem.n_clients)))
    plain = momentum == 0 and prox == 0
    xs = np.empty((plan.shape[0] + 1, problem.dim))
    xs[0] = x
    updates = np.full((plan.shape[0], problem.n_clients, problem.dim), np.nan)
    tau_eff = np.full(plan.shape[0], np.nan)
    buffer = None
    for r, mask in enumerate(plan):
        idx = np.flatnonzero(mask)
        if idx.size:
            Z = np.empty((idx.size, x.size))
            Z[:] = x
            M = np.zeros_like(Z)
            for t in range(int(taus[idx].max())):
                moving = taus[idx] > t
                G = problem.client_gradients(Z[moving], clients=idx[moving])
                if momentum:
                    M[moving] = G if t == 0 else momentum * M[moving] + G
                    G = G + momentum * M[moving] if nesterov else M[moving]
                if prox:
                    G = G + prox * (Z[moving] - x)
                Z[moving] -= steps[r] * G
            w = p[idx] / p[idx].sum()
            if plain:
                norms = taus[idx]
                d = (x - Z) / (steps[r] * norms)[:, None]
                tau_eff[r] = w @ norms
            else:
                distinct, which = np.unique(taus[idx], return_inverse=True)
                norms = np.array([normalizer(tau, step=steps[r], momentum=momentum, prox=prox)
                                  for tau in distinct])[which]
                d = (x - Z) / (steps[r] * norms)[:, None]
                tau_eff[r] = w @ (taus[idx] if prox else norms)
            updates[r, idx] = d
            if server_momentum:
                delta = tau_eff[r] * (w @ d)
                buffer = delta if buffer is None else server_momentum * buffer + delta
                x = x - server_step * steps[r] * buffer
            else:
                x = x - server_step * steps[r] * tau_eff[r] * (w @ d)
        xs[r + 1] = x
    return FedNovaTrace(xs, updates, tau_eff)
