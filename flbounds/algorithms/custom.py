r"""FedAvg-family rounds with a user-written local update.

A round is described by four parts, the same names as the worst-case engine's descriptions
(:mod:`flbounds.pep`): the **participation** (a plan of masks or counts from
:mod:`flbounds.participation`), the **local update** (:class:`LocalUpdate`: what a client does
with its gradient at each local step), the **aggregation** (a rule of
:mod:`flbounds.algorithms.aggregation`) and the **server step** (:math:`x_{r+1} = x_r +
\eta_g(\bar z_r - x_r)`, with :math:`\bar z_r` the aggregate; :math:`\eta_g = 1` keeps the
aggregate). :func:`fedavg_family` runs it:

.. math:: z \leftarrow x_r;\quad \text{for } t < \tau:\ g = \nabla f_i(z),\
          \texttt{step}(z, g, x_r, s_i, \eta_{r,t}, \theta)

for every participant :math:`i` (``step`` moves ``z`` and the client's persistent state
:math:`s_i` in place; :math:`\theta` the update's parameters), then the aggregation and the
server step. A numba-compiled ``step`` (``@numba.njit``) runs inside one compiled round loop
(:func:`flbounds.kernels.custom_rounds.custom_rounds`); a plain Python function runs the same
operations in Python, slower, with the same numbers. Built-in updates
(:mod:`flbounds.algorithms.local_updates`): ``local_gd`` (FedAvg: with it ``fedavg_family``
is :func:`~flbounds.algorithms.fedavg` to the bit), ``local_prox`` (FedProx's proximal term),
``local_momentum`` (heavy-ball local steps, the momentum buffer kept by the client),
``local_scaffold`` (SCAFFOLD's control variates:
a client state and a **server state**, which a local update with ``finish=`` keeps; see
:mod:`flbounds.kernels.custom_server_rounds`).

Writing a step: arrays are 1-D float64 of length d (``state`` of length ``state_size``);
change ``z`` and ``state`` in place, return nothing::

    @numba.njit
    def prox_step(z, g, x, state, eta, params):
        for p in range(z.shape[0]):
            z[p] -= eta * (g[p] + params[0] * (z[p] - x[p]))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba.core.registry import CPUDispatcher

from flbounds.algorithms import schedules
from flbounds.algorithms._common import (
    MAX_LOCAL_STEPS,
    check_counts_plan,
    check_problem,
    problem_data,
    start_point,
)
from flbounds.algorithms.aggregation import check_aggregation
from flbounds.kernels.custom_rounds import custom_rounds, python_rounds
from flbounds.kernels.custom_server_rounds import python_server_rounds, server_rounds
from flbounds.validation import as_float_array, check_int, check_positive

__all__ = ["CustomTrace", "LocalUpdate", "fedavg_family", "fedavg_family_batched",
           "local_update"]


class LocalUpdate(NamedTuple):
    """A client's local step (module docstring); made by :func:`local_update`.

    Attributes
    ----------
    step : callable
        ``step(z, g, x, state, eta, params)``, changing ``z`` and ``state`` in place.
    params : ndarray
        Its parameters :math:`\theta` (1-D float64).
    state_size : int
        The length of each client's persistent state (0: none).
    label : str
        A name for reports.
    finish : callable or None
        ``finish(z, x, state, server, report, eta_sum, params)`` after a client's local steps
        (a round with a server state, :mod:`flbounds.kernels.custom_server_rounds`); None: no
        server state, and ``step`` takes no ``server`` argument.
    server_size : int
        The length of the server state (with ``finish``).
    """

    step: Callable
    params: np.ndarray
    state_size: int
    label: str
    finish: Callable | None = None
    server_size: int = 0

    @property
    def compiled(self) -> bool:
        """Whether ``step`` (and ``finish``) are numba-compiled (then the round loop is)."""
        return isinstance(self.step, CPUDispatcher) and (
            self.finish is None or isinstance(self.finish, CPUDispatcher))


class CustomTrace(NamedTuple):
    """Trace of :func:`fedavg_family` (of :func:`fedavg_family_batched`: one more leading axis,
    n_reps).

    Attributes
    ----------
    x : ndarray, shape (n_rounds + 1, d)
        Server iterates.
    state : ndarray, shape (N, state_size)
        The clients' states after the last round.
    server : ndarray, shape (server_size,) or None
        The server state after the last round (None without ``finish``).
    """

    x: np.ndarray
    state: np.ndarray
    server: np.ndarray | None = None


def local_update(step, *, params=(), state_size=0, label=None, finish=None,
                 server_size=0) -> LocalUpdate:
    """Describe a local step (module docstring).

    Parameters
    ----------
    step : callable
        A numba ``@njit`` function or a Python function ``step(z, g, x, state, eta, params)``
        that changes ``z`` and ``state`` in place and returns nothing.
    params : array_like of float, default ()
        Finite numbers passed to ``step`` as a 1-D float64 array (copied).
    state_size : int, default 0
        The length of each client's persistent state (0: none).
    label : str, optional
        A name for reports (default: ``step.__name__``).
    finish : callable, optional
        With a server state (control variates, ...): ``finish(z, x, state, server, report,
        eta_sum, params)`` after the client's local steps, changing ``state`` and writing
        ``report`` in place; the server state moves by the mean of the reports over all N
        clients (:mod:`flbounds.kernels.custom_server_rounds`). Then ``step`` takes the
        server state too: ``step(z, g, x, state, server, eta, params)``. Both numba or both
        Python.
    server_size : int, default 0
        The length of the server state (with ``finish`` only).

    Returns
    -------
    LocalUpdate

    Raises
    ------
    ValueError
        If ``step`` or ``finish`` is not callable, ``params`` are not finite, ``state_size <
        0``, or ``server_size`` is given without ``finish``.
    """
    if not callable(step):
        raise ValueError("step must be callable: step(z, g, x, state, eta, params)")
    if finish is not None and not callable(finish):
        raise ValueError("finish must be callable: finish(z, x, state, server, report, "
                         "eta_sum, params)")
    params = as_float_array(np.atleast_1d(np.asarray(params, dtype=float)), "params", ndim=1,
                            copy=True)
    state_size = check_int(state_size, "state_size", minimum=0)
    server_size = check_int(server_size, "server_size", minimum=0)
    if server_size and finish is None:
        raise ValueError("server_size needs finish (what each client reports to the server)")
    if finish is not None and isinstance(step, CPUDispatcher) != isinstance(finish,
                                                                            CPUDispatcher):
        raise ValueError("finish: step and finish must both be numba functions or both "
                         "Python functions")
    name = label if label is not None else getattr(step, "__name__", "custom local step")
    return LocalUpdate(step, params, state_size, str(name), finish, server_size)


def _prepare(problem, plan, local, step, local_steps, aggregation, server_step, state0,
             server0=None):
    """Every check before any work; the kernel inputs."""
    check_problem(problem)
    if not isinstance(local, LocalUpdate):
        raise ValueError("local must be a LocalUpdate (flbounds.algorithms.custom.local_update"
                         f"), got {local!r}")
    plan, is_counts = check_counts_plan(plan, problem.n_clients)
    local_steps = check_int(local_steps, "local_steps", minimum=1, maximum=MAX_LOCAL_STEPS)
    steps = schedules.resolve(step, plan.shape[0], local_steps)[1]
    rule = check_aggregation(aggregation)
    coefficients = rule.client_coefficients(problem)
    server_step = check_positive(server_step, "server_step")
    shape = (problem.n_clients, local.state_size)
    states = np.zeros(shape) if state0 is None else as_float_array(state0, "state0",
                                                                   shape=shape, copy=True)
    if local.finish is None and server0 is not None:
        raise ValueError("server0 needs a local update with a server state (finish=)")
    server = np.zeros(local.server_size) if server0 is None else as_float_array(
        server0, "server0", shape=(local.server_size,), copy=True)
    _try_step(local, problem.dim)
    counts = plan if is_counts else plan.astype(np.int64)
    return (problem_data(problem), counts, steps, local_steps,
            np.empty(0) if coefficients is None else coefficients, rule.code, server_step,
            states, server)


def _try_step(local, dim):
    """One call of the step on scratch arrays: a step that cannot run on the round's arrays
    is a ``ValueError`` naming ``local`` before the run."""
    z, state, server = np.zeros(dim), np.zeros(local.state_size), np.zeros(local.server_size)
    what = "step(z, g, x, state, eta, params)"
    try:
        if local.finish is None:
            local.step(z, np.ones(dim), np.zeros(dim), state, 1.0, local.params.copy())
        else:
            what = "step(z, g, x, state, server, eta, params)"
            local.step(z, np.ones(dim), np.zeros(dim), state, server, 1.0, local.params.copy())
            what = "finish(z, x, state, server, report, eta_sum, params)"
            local.finish(z, np.zeros(dim), state, server, np.zeros(local.server_size), 1.0,
                         local.params.copy())
    except Exception as err:  # noqa: BLE001 (any failure of user code is reported as such)
        raise ValueError(f"local: {what} fails on arrays of the run's shapes (d = {dim}, "
                         f"state_size = {local.state_size}, server_size = "
                         f"{local.server_size}): {type(err).__name__}: {err}") from None


def _run(local, inputs, x, xs):
    data, counts, steps, local_steps, coefficients, form, server_step, states, server = inputs
    if local.finish is not None:
        loop = server_rounds if local.compiled else python_server_rounds
        loop(data, counts, steps, local_steps, coefficients, form, server_step, local.step,
             local.finish, local.params, states, server, x, xs)
        return
    loop = custom_rounds if local.compiled else python_rounds
    loop(data, counts, steps, local_steps, coefficients, form, server_step, local.step,
         local.params, states, x, xs)


def _trace(local, xs, inputs) -> CustomTrace:
    return CustomTrace(xs, inputs[-2], inputs[-1] if local.finish is not None else None)


def fedavg_family(problem, plan, local, *, step, local_steps, x0=None, aggregation=None,
                  server_step=1.0, state0=None, server0=None) -> CustomTrace:
    r"""Run a FedAvg-family round with the local update ``local`` (module docstring).

    Parameters
    ----------
    problem : flbounds.problems problem
    plan : array_like of bool or int, shape (n_rounds, n_clients)
        A participation mask per round, or counts (a plan drawn with replacement), as for
        :func:`~flbounds.algorithms.fedavg`.
    local : LocalUpdate
        From :func:`local_update` or a built-in (:mod:`flbounds.algorithms.local_updates`).
    step : float, Schedule or array
        :math:`\eta_{r,t}` (:mod:`flbounds.algorithms.schedules`), passed to the step.
    local_steps : int
        :math:`\tau \ge 1`.
    x0 : array_like, shape (d,), optional
        Start (default 0).
    aggregation : Aggregation, optional
        The server's rule (default uniform over the participants).
    server_step : float, default 1
        :math:`\eta_g > 0`.
    state0 : array_like, shape (N, state_size), optional
        The clients' initial states (default 0).
    server0 : array_like, shape (server_size,), optional
        The initial server state (default 0), for a local update with ``finish``.

    Returns
    -------
    CustomTrace
        ``x``, the clients' final states and the final server state.
    """
    inputs = _prepare(problem, plan, local, step, local_steps, aggregation, server_step,
                      state0, server0)
    x = start_point(problem, x0)
    xs = np.empty((inputs[1].shape[0] + 1, problem.dim))
    _run(local, inputs, x, xs)
    return _trace(local, xs, inputs)


def fedavg_family_batched(problem, plans, local, *, step, local_steps, x0=None,
                          aggregation=None, server_step=1.0, state0=None,
                          server0=None) -> CustomTrace:
    """:func:`fedavg_family` for every plan of ``plans``; replicate b equals the single run on
    ``plans[b]`` bit for bit (each replicate starts from ``x0`` and ``state0``).

    Parameters
    ----------
    problem : flbounds.problems problem
    plans : array_like, shape (n_reps, n_rounds, n_clients)
        One plan (masks or counts) per replicate, n_reps >= 1.
    local, step, local_steps, x0, aggregation, server_step, state0, server0
        As for :func:`fedavg_family`.

    Returns
    -------
    CustomTrace
        ``x`` (n_reps, n_rounds + 1, d), ``state`` (n_reps, N, state_size) and ``server``
        (n_reps, server_size; None without ``finish``).
    """
    arr = np.asarray(plans)
    if arr.ndim != 3 or arr.shape[0] < 1:
        raise ValueError(f"plans must have shape (n_reps >= 1, n_rounds, n_clients), got "
                         f"{arr.shape}")
    prepared = [_prepare(problem, p, local, step, local_steps, aggregation, server_step,
                         state0, server0) for p in arr]
    x = start_point(problem, x0)
    xs = np.empty((arr.shape[0], arr.shape[1] + 1, problem.dim))
    for b, inputs in enumerate(prepared):
        _run(local, inputs, x, xs[b])
    server = np.array([inputs[-1] for inputs in prepared]) if local.finish is not None \
        else None
    return CustomTrace(xs, np.array([inputs[-2] for inputs in prepared]), server)
