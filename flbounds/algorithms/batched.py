r"""FedAvg and FOCUS over a replicate axis: many participation plans in one compiled call.

For Monte Carlo over participation patterns: ``plans`` has shape (n_reps, n_rounds, n_clients)
and replicate b is exactly ``fedavg(problem, plans[b], ...)`` (resp. ``focus``), bit for bit.
FedAvg is replicate-batched (:func:`flbounds.kernels.replicates.fedavg_replicates`): per
round, each client runs its local steps once for all replicates it serves, as a block (its
data read once, the gradient a small matrix product); groups of replicates run in parallel
and a replicate's numbers do not depend on the thread count. FOCUS runs its round loop per
replicate, in parallel over replicates (``focus_replicates``). Memory: the server traces
(R + 1, d) per replicate, O(B d) blocks and a copy of the plans for FedAvg, and for FOCUS
the stored gradients (N, d) per replicate.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.algorithms import schedules
from flbounds.algorithms._common import (
    MAX_LOCAL_STEPS,
    check_hyper,
    check_problem,
    problem_data,
    round_settings,
    start_point,
)
from flbounds.algorithms.fedavg import fedavg
from flbounds.algorithms.focus import INITS
from flbounds.kernels._layout import line_aligned
from flbounds.kernels.replicates import focus_replicates, run_fedavg_replicates
from flbounds.kernels.rounds import FocusRecord, FocusState
from flbounds.kernels.scheduled import focus_scheduled_replicates
from flbounds.validation import check_int


class BatchedFedAvgTrace(NamedTuple):
    """``x`` (n_reps, n_rounds + 1, d): replicate b's server iterates."""

    x: np.ndarray


class BatchedFocusTrace(NamedTuple):
    """``x``, ``y`` (n_reps, n_rounds + 1, d) and final stored gradients ``g``
    (n_reps, N, d)."""

    x: np.ndarray
    y: np.ndarray
    g: np.ndarray


def check_plans(plans, n_clients: int) -> np.ndarray:
    """Plans as a C-contiguous bool array of shape (n_reps, n_rounds, n_clients)."""
    arr = np.asarray(plans)
    if arr.ndim != 3 or arr.shape[2] != n_clients or arr.shape[0] < 1:
        raise ValueError(f"plans must have shape (n_reps >= 1, n_rounds, {n_clients}) "
                         f"(replicates x rounds x clients), got {arr.shape}")
    if arr.dtype != bool:
        if arr.dtype.kind not in "biuf" or not np.all((arr == 0) | (arr == 1)):
            raise ValueError("plans must hold booleans (or 0/1)")
        arr = arr.astype(bool)
    return np.ascontiguousarray(arr)


def _constant_or_schedule(step, plans, local_steps, per_local_step=True):
    """``(scalar, steps)`` of :func:`flbounds.algorithms.schedules.resolve` over the plans'
    rounds (the schedule checked before any work)."""
    local_steps = check_int(local_steps, "local_steps", minimum=1, maximum=MAX_LOCAL_STEPS)
    return schedules.resolve(step, plans.shape[1], local_steps, per_local_step=per_local_step)


def fedavg_batched(problem, plans, *, step, local_steps, x0=None) -> BatchedFedAvgTrace:
    r"""FedAvg (:func:`~flbounds.algorithms.fedavg`) for every plan in ``plans``.

    Parameters
    ----------
    problem : flbounds.problems problem
    plans : array_like of bool, shape (n_reps, n_rounds, n_clients)
        ``plans[b]`` is replicate b's participation plan.
    step, local_steps, x0
        As in :func:`~flbounds.algorithms.fedavg`, shared by all replicates; a schedule with
        one step per round runs in the same replicate-batched kernel (round r's step in
        every replicate), one that changes within a round runs the replicates one after the
        other through :func:`~flbounds.algorithms.fedavg`.

    Returns
    -------
    BatchedFedAvgTrace
        ``x[b]`` equals ``fedavg(problem, plans[b], ...).x`` exactly.
    """
    check_problem(problem)
    plans = check_plans(plans, problem.n_clients)
    constant, steps = _constant_or_schedule(step, plans, local_steps)
    if constant is None and steps.shape[1] > 1:
        return BatchedFedAvgTrace(np.array([fedavg(problem, plan, step=step,
                                                   local_steps=local_steps, x0=x0).x
                                            for plan in plans]))
    step, local_steps = check_hyper(steps[0, 0] if constant is None else constant, local_steps)
    data = problem_data(problem)
    x = start_point(problem, x0)
    xs = np.empty((plans.shape[0], plans.shape[1] + 1, problem.dim))
    run_fedavg_replicates(data, plans,
                          round_settings(step, local_steps, parallel=False, data=data), x, xs,
                          None if constant is not None else np.ascontiguousarray(steps[:, 0]))
    return BatchedFedAvgTrace(xs)


def focus_batched(problem, plans, *, step, local_steps, x0=None,
                  init="zero") -> BatchedFocusTrace:
    r"""FOCUS (:func:`~flbounds.algorithms.focus`) for every plan in ``plans``.

    Parameters
    ----------
    problem : flbounds.problems problem
    plans : array_like of bool, shape (n_reps, n_rounds, n_clients)
    step, local_steps, x0, init
        As in :func:`~flbounds.algorithms.focus`, shared by all replicates (a schedule whose
        steps differ runs every replicate's scheduled loop in the same parallel kernel).

    Returns
    -------
    BatchedFocusTrace
        ``x[b], y[b], g[b]`` equal those of ``focus(problem, plans[b], ...)`` exactly.
    """
    check_problem(problem)
    plans = check_plans(plans, problem.n_clients)
    constant, steps = _constant_or_schedule(step, plans, local_steps, per_local_step=False)
    step, local_steps = check_hyper(steps[0, 0] if constant is None else constant, local_steps)
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    data = problem_data(problem)
    x = start_point(problem, x0)
    n_reps, n_rounds, n_clients = plans.shape
    dim = problem.dim
    if init == "zero":
        g0 = np.zeros((n_clients, dim))
    else:
        g0 = problem.client_gradients(np.tile(x, (n_clients, 1)))
    # every replicate's stored gradients, on a cache line: one allocation, one copy of g0
    g = line_aligned(np.broadcast_to(g0, (n_reps, n_clients, dim)), writeable=True, copy=True)
    states = FocusState(np.repeat(x[None], n_reps, axis=0),
                        np.repeat(g0.sum(axis=0)[None], n_reps, axis=0),
                        g, np.empty((n_reps, 0, dim)))
    records = FocusRecord(np.empty((n_reps, n_rounds + 1, dim)),
                          np.empty((n_reps, n_rounds + 1, dim)), np.empty((n_reps, 0, dim)))
    settings = round_settings(step, local_steps, parallel=False, data=data)
    if constant is None:
        focus_scheduled_replicates(data, plans, settings, steps, states, records)
    else:
        focus_replicates(data, plans, settings, states, records)
    return BatchedFocusTrace(records.xs, records.ys, states.g)
