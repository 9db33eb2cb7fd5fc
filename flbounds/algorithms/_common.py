"""Validation and problem dispatch shared by the FedAvg / FOCUS family of algorithms."""

from __future__ import annotations

import numpy as np

from flbounds._validate import as_float_array, check_int, check_positive
from flbounds.kernels import focus_local
from flbounds.problems import LogisticL2, NonconvexLogistic, Quadratic, Ridge, ScalarPL


def _readonly(a) -> np.ndarray:
    """A read-only C-contiguous float64 view: every problem's data reach the kernels with the
    same array types, so each kernel compiles once (numba types read-only arrays apart)."""
    view = np.ascontiguousarray(a, dtype=np.float64).view()
    view.flags.writeable = False
    return view


_DUMMY3 = _readonly(np.zeros((1, 1, 1)))
_DUMMY2 = _readonly(np.zeros((1, 1)))


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
            raise ValueError("plan must hold booleans (or 0/1)")
        arr = arr.astype(bool)
    return np.ascontiguousarray(arr)


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


def kernel_data(problem):
    """Arguments ``(kind, A, b, features, targets, lam, rho)`` of the compiled round loops, or
    None when the problem has no compiled gradient (then the NumPy path is used)."""
    if isinstance(problem, Quadratic):
        return (focus_local.QUADRATIC, _readonly(problem.A), _readonly(problem.b), _DUMMY3,
                _DUMMY2, 0.0, 0.0)
    if isinstance(problem, Ridge):
        return (focus_local.RIDGE, _DUMMY3, _DUMMY2, _readonly(problem.features),
                _readonly(problem.targets), float(problem.lam), 0.0)
    if isinstance(problem, LogisticL2 | NonconvexLogistic):
        return (focus_local.LOGISTIC, _DUMMY3, _DUMMY2, _readonly(problem.features),
                _readonly(problem.labels), float(problem.lam), float(problem.rho))
    if isinstance(problem, ScalarPL):
        return (focus_local.SCALAR_PL, _DUMMY3, _readonly(problem.c[:, None]), _DUMMY3,
                _DUMMY2, 0.0, 0.0)
    return None
