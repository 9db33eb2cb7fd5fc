r"""FedAvg under arbitrary client participation (FOCUS, eqs. (2a)-(2c))."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.algorithms import schedules
from flbounds.algorithms._common import (
    MAX_LOCAL_STEPS,
    check_compiled,
    check_counts_plan,
    check_problem,
    problem_data,
    round_settings,
    start_point,
)
from flbounds.algorithms.aggregation import check_aggregation
from flbounds.kernels.rounds import run_fedavg
from flbounds.kernels.scheduled import fedavg_general_loop
from flbounds.validation import check_int


class FedAvgTrace(NamedTuple):
    """Server iterates of FedAvg: ``x`` has shape (n_rounds + 1, d), ``x[0] = x0``."""

    x: np.ndarray


def fedavg(problem, plan, *, step, local_steps, x0=None, aggregation=None,
           compiled=True) -> FedAvgTrace:
    r"""FedAvg with the participation sets given by ``plan``.

    Round r: every :math:`i \in S_r` pulls :math:`x_r`, runs :math:`\tau` gradient steps

    .. math:: x^{(r)}_{t+1,i} = x^{(r)}_{t,i} - \eta_{r,t} \nabla f_i(x^{(r)}_{t,i}),
              \qquad t = 0, \dots, \tau - 1,

    and the server averages, :math:`x_{r+1} = |S_r|^{-1} \sum_{i \in S_r} x^{(r)}_{\tau,i}`
    (or by the rule ``aggregation``, :mod:`flbounds.algorithms.aggregation`). An empty round
    leaves :math:`x` unchanged (the reference code skips it).

    Parameters
    ----------
    problem : flbounds.problems problem
        Runs in the compiled loop :func:`flbounds.kernels.rounds.fedavg_rounds` (a round with
        enough work runs its participants in parallel on ``numba.get_num_threads()``
        threads; the iterates do not depend on the thread count).
    plan : array_like of bool or int, shape (n_rounds, n_clients)
        Row r is the participation mask of :math:`S_r`, or the counts of a plan drawn with
        replacement (:class:`flbounds.participation.WithReplacement`): a client drawn
        :math:`c` times runs its local phase once and enters the aggregate with
        multiplicity :math:`c`.
    step : float, Schedule or array
        :math:`\eta > 0`, or a schedule (:mod:`flbounds.algorithms.schedules`): one step per
        round, or per local step (:math:`\eta_{r,t}`).
    local_steps : int
        :math:`\tau \ge 1`.
    x0 : array_like, shape (d,), optional
        Start (default 0).
    aggregation : Aggregation, optional
        The server's rule (default :func:`~flbounds.algorithms.aggregation.uniform`).
    compiled : bool, default True
        Must be True (kept for the signature): the compiled loop is the one implementation.
        A constant step, a mask and the uniform rule run in
        :func:`~flbounds.kernels.rounds.fedavg_rounds`; anything else in the serial
        :func:`~flbounds.kernels.scheduled.fedavg_general_loop`.

    Returns
    -------
    FedAvgTrace
        ``x`` (n_rounds + 1, d).

    References
    ----------
    FOCUS: Ying, Li, Yang, NeurIPS 2025, Section 2, eqs. (2a)-(2c).
    """
    check_problem(problem)
    plan, is_counts = check_counts_plan(plan, problem.n_clients)
    local_steps = check_int(local_steps, "local_steps", minimum=1, maximum=MAX_LOCAL_STEPS)
    scalar, steps = schedules.resolve(step, plan.shape[0], local_steps)
    rule = check_aggregation(aggregation)
    coefficients = rule.client_coefficients(problem)
    check_compiled(compiled)
    data = problem_data(problem)
    x = start_point(problem, x0)
    xs = np.empty((plan.shape[0] + 1, problem.dim))
    if scalar is not None and not is_counts and coefficients is None:
        run_fedavg(data, plan, round_settings(scalar, local_steps, data=data), x, xs)
        return FedAvgTrace(xs)
    counts = plan if is_counts else plan.astype(np.int64)
    fedavg_general_loop(data, counts, steps, local_steps,
                        np.empty(0) if coefficients is None else coefficients, rule.code, x, xs)
    return FedAvgTrace(xs)
