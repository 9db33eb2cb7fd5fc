"""Validation and kernel inputs shared by the FedAvg / FOCUS family of algorithms."""

from __future__ import annotations

import numba
import numpy as np

from flbounds.algorithms import schedules
from flbounds.kernels import rounds
from flbounds.kernels.gradients import hint_ahead
from flbounds.kernels.rounds import RoundSettings
from flbounds.validation import as_float_array, check_int, check_positive


def check_problem(problem) -> None:
    """The problem must expose ``n_clients``, ``dim`` and ``client_gradients``."""
    for attr in ("n_clients", "dim", "client_gradients"):
        if not hasattr(problem, attr):
            raise ValueError(f"problem must have attribute {attr!r} (see flbounds.problems)")


def check_plan(plan, n_clients: int) -> np.ndarray:
    """A participation plan: bool (or 0/1) array of shape (n_rounds, n_clients)."""
    arr = np.asarray(plan)
    if arr.ndim != 2 or arr.shape[1] != n_clients:
        raise ValueError(f"plan must have shape (n_rounds, {n_clients}) (rounds x clients), "
                         f"got {arr.shape}")
    if arr.dtype != bool:
        if arr.dtype.kind not in "biuf" or not np.all((arr == 0) | (arr == 1)):
            if arr.dtype.kind in "iu" and np.all(arr >= 0):
                raise ValueError("plan holds counts (entries > 1, a plan drawn with "
                                 "replacement): this algorithm takes a participation mask; "
                                 "fedavg aggregates by counts")
            raise ValueError("plan must hold booleans (or 0/1)")
        arr = arr.astype(bool)
    return np.ascontiguousarray(arr)


def check_counts_plan(plan, n_clients: int) -> tuple[np.ndarray, bool]:
    """A plan of masks or of counts, shape (n_rounds, n_clients): ``(plan, is_counts)``; a
    bool or 0/1 plan is a mask (bool array), an integer plan with an entry above 1 holds the
    counts (int64, entries >= 0) of a plan drawn with replacement."""
    arr = np.asarray(plan)
    if arr.ndim != 2 or arr.shape[1] != n_clients:
        raise ValueError(f"plan must have shape (n_rounds, {n_clients}) (rounds x clients), "
                         f"got {arr.shape}")
    if arr.dtype == bool or (arr.dtype.kind in "biuf" and np.all((arr == 0) | (arr == 1))):
        return check_plan(arr, n_clients), False
    if arr.dtype.kind not in "iu":
        raise ValueError("plan must hold booleans (a mask) or nonnegative integer counts, got "
                         f"dtype {arr.dtype} with entries other than 0/1")
    if np.any(arr < 0):
        raise ValueError(f"plan: counts must be >= 0, got min {arr.min()}")
    return np.ascontiguousarray(arr, dtype=np.int64), True


#: local steps run one by one in every round: beyond this a call would not finish
MAX_LOCAL_STEPS = 10**6


def check_hyper(step, local_steps) -> tuple[float, int]:
    """``step > 0`` (finite) and ``1 <= local_steps <= MAX_LOCAL_STEPS``."""
    return check_positive(step, "step"), check_int(local_steps, "local_steps", minimum=1,
                                                   maximum=MAX_LOCAL_STEPS)


def start_point(problem, x0) -> np.ndarray:
    """``x0`` as a fresh float64 vector of shape (dim,); default zeros."""
    if x0 is None:
        return np.zeros(problem.dim)
    return as_float_array(x0, "x0", shape=(problem.dim,), copy=True)


def checked_run(problem, plan, step, local_steps, x0, *, per_local_step=True):
    """The checked inputs of a run over participation masks, checked in this order:
    ``(plan, steps, local_steps, x)`` with ``steps`` the (n_rounds, 1) or (n_rounds, tau)
    array of :func:`flbounds.algorithms.schedules.resolve` and ``x`` the start
    (:func:`start_point`)."""
    check_problem(problem)
    plan = check_plan(plan, problem.n_clients)
    local_steps = check_int(local_steps, "local_steps", minimum=1, maximum=MAX_LOCAL_STEPS)
    steps = schedules.resolve(step, plan.shape[0], local_steps,
                              per_local_step=per_local_step)[1]
    return plan, steps, local_steps, start_point(problem, x0)


def problem_data(problem):
    """The problem's container for the compiled kernels (:mod:`flbounds.kernels.gradients`);
    every problem of :mod:`flbounds.problems` has one."""
    data = getattr(problem, "kernel_data", None)
    if data is None:
        raise ValueError("problem must be a flbounds.problems problem (Quadratic, Ridge, "
                         "LogisticL2, NonconvexLogistic, ScalarPL): the algorithms run "
                         "compiled kernels on its kernel_data")
    return data


def round_settings(step, local_steps, *, parallel=True, data=None) -> RoundSettings:
    """Kernel settings: the caller's numba thread count sets the chunking; ``parallel=False``
    keeps every round serial (for callers that parallelize over replicates); ``data`` (the
    kernel container) decides whether the loops hint client data ahead."""
    min_work = rounds.PARALLEL_MIN_WORK if parallel else -1
    return RoundSettings(float(step), int(local_steps), numba.get_num_threads(), min_work,
                         hint_ahead(data))


def check_compiled(value, name: str = "compiled") -> None:
    """``compiled`` (``fast``) is kept for the signature; there is one compiled
    implementation per algorithm."""
    if value is not True:
        raise ValueError(f"{name} must be True: every algorithm has one compiled "
                         "implementation (the NumPy twins are the tests' references)")
