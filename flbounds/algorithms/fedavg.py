r"""FedAvg under arbitrary client participation ([002], eqs. (2a)-(2c))."""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from flbounds.algorithms._common import (
    check_hyper,
    check_plan,
    check_problem,
    kernel_data,
    start_point,
)
from flbounds.kernels import scale_ridge
from flbounds.kernels.focus_local import fedavg_rounds
from flbounds.kernels.scale_ridge import fedavg_ridge_rounds
from flbounds.problems import Ridge


def _max_participants(plan) -> int:
    """Rows of the per-round scratch of the ridge kernel (at least 1)."""
    return max(int(plan.sum(axis=-1).max(initial=0)), 1)


class FedAvgTrace(NamedTuple):
    """Server iterates of FedAvg: ``x`` has shape (n_rounds + 1, d), ``x[0] = x0``."""

    x: np.ndarray


def fedavg(problem, plan, *, step, local_steps, x0=None, compiled=True) -> FedAvgTrace:
    r"""FedAvg with the participation sets given by ``plan``.

    Round r: every :math:`i \in S_r` pulls :math:`x_r`, runs :math:`\tau` gradient steps

    .. math:: x^{(r)}_{t+1,i} = x^{(r)}_{t,i} - \eta \nabla f_i(x^{(r)}_{t,i}),
              \qquad t = 0, \dots, \tau - 1,

    and the server averages, :math:`x_{r+1} = |S_r|^{-1} \sum_{i \in S_r} x^{(r)}_{\tau,i}`.
    An empty round leaves :math:`x` unchanged (the reference code skips it).

    Parameters
    ----------
    problem : flbounds.problems problem
        Any problem with ``client_gradients``; :class:`~flbounds.problems.Quadratic` and
        :class:`~flbounds.problems.Ridge` run in a compiled loop (ridge: parallel over the
        participants of a round with ``numba.get_num_threads()`` threads; the iterates do
        not depend on the thread count).
    plan : array_like of bool, shape (n_rounds, n_clients)
        Row r is the participation mask of :math:`S_r`.
    step : float
        :math:`\eta > 0`.
    local_steps : int
        :math:`\tau \ge 1`.
    x0 : array_like, shape (d,), optional
        Start (default 0).
    compiled : bool, default True
        Use the compiled loop when available; False forces the NumPy path (same numbers up to
        rounding).

    Returns
    -------
    FedAvgTrace
        ``x`` (n_rounds + 1, d).

    References
    ----------
    [002] Ying, Li, Yang, NeurIPS 2025, Section 2, eqs. (2a)-(2c).
    """
    check_problem(problem)
    plan = check_plan(plan, problem.n_clients)
    step, local_steps = check_hyper(step, local_steps)
    x = start_point(problem, x0)
    xs = np.empty((plan.shape[0] + 1, problem.dim))
    if compiled and isinstance(problem, Ridge):
        _, _, _, features, targets, lam, _ = kernel_data(problem)
        fedavg_ridge_rounds(features, targets, lam, plan, step, local_steps, x, xs,
                            np.empty(problem.n_clients, dtype=np.int64),
                            np.empty((_max_participants(plan), problem.dim)),
                            numba.get_num_threads(),
                            scale_ridge.PARALLEL_MIN_WORK)
        return FedAvgTrace(xs)
    data = kernel_data(problem) if compiled else None
    if data is not None:
        fedavg_rounds(*data, plan, step, local_steps, x, xs)
        return FedAvgTrace(xs)
    xs[0] = x
    for r, mask in enumerate(plan):
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            xs[r + 1] = xs[r]
            continue
        Z = np.tile(xs[r], (idx.size, 1))
        for _ in range(local_steps):
            Z -= step * problem.client_gradients(Z, clients=idx)
        xs[r + 1] = Z.mean(axis=0)
    return FedAvgTrace(xs)
