r"""FedAvg under arbitrary client participation ([002], eqs. (2a)-(2c))."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.algorithms._common import (
    check_compiled,
    check_hyper,
    check_plan,
    check_problem,
    problem_data,
    round_settings,
    start_point,
)
from flbounds.kernels.rounds import run_fedavg


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
        Runs in the compiled loop :func:`flbounds.kernels.rounds.fedavg_rounds` (a round with
        enough work runs its participants in parallel on ``numba.get_num_threads()``
        threads; the iterates do not depend on the thread count).
    plan : array_like of bool, shape (n_rounds, n_clients)
        Row r is the participation mask of :math:`S_r`.
    step : float
        :math:`\eta > 0`.
    local_steps : int
        :math:`\tau \ge 1`.
    x0 : array_like, shape (d,), optional
        Start (default 0).
    compiled : bool, default True
        Must be True (kept for the signature): the compiled loop is the one implementation.

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
    check_compiled(compiled)
    data = problem_data(problem)
    x = start_point(problem, x0)
    xs = np.empty((plan.shape[0] + 1, problem.dim))
    run_fedavg(data, plan, round_settings(step, local_steps, data=data), x, xs)
    return FedAvgTrace(xs)
