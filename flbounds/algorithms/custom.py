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
operations in Python, slower, with the same numbers. Built-in updates: :func:`local_gd`
(FedAvg: with it ``fedavg_family`` is :func:`~flbounds.algorithms.fedavg` to the bit),
:func:`local_prox` (FedProx's proximal term), :func:`local_momentum` (heavy-ball local steps,
the momentum buffer kept by the client).

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
from numba import njit
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
from flbounds.validation import as_float_array, check_int, check_positive

__all__ = ["CustomTrace", "LocalUpdate", "fedavg_family", "fedavg_family_batched",
           "local_gd", "local_momentum", "local_prox", "local_update"]


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
    """

    step: Callable
    params: np.ndarray
    state_size: int
    label: str

    @property
    def compiled(self) -> bool:
        """Whether ``step`` is numba-compiled (then the round loop is)."""
        return isinstance(self.step, CPUDispatcher)


class CustomTrace(NamedTuple):
    """Trace of :func:`fedavg_family` (of :func:`fedavg_family_batched`: one more leading axis,
    n_reps).

    Attributes
    ----------
    x : ndarray, shape (n_rounds + 1, d)
        Server iterates.
    state : ndarray, shape (N, state_size)
        The clients' states after the last round.
    """

    x: np.ndarray
    state: np.ndarray


def local_update(step, *, params=(), state_size=0, label=None) -> LocalUpdate:
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

    Returns
    -------
    LocalUpdate

    Raises
    ------
    ValueError
        If ``step`` is not callable, ``params`` are not finite or ``state_size < 0``.
    """
    if not callable(step):
        raise ValueError("step must be callable: step(z, g, x, state, eta, params)")
    params = as_float_array(np.atleast_1d(np.asarray(params, dtype=float)), "params", ndim=1,
                            copy=True)
    state_size = check_int(state_size, "state_size", minimum=0)
    name = label if label is not None else getattr(step, "__name__", "custom local step")
    return LocalUpdate(step, params, state_size, str(name))


@njit(cache=True, fastmath=False)
def _gd_step(z, g, x, state, eta, params):
    for p in range(z.shape[0]):
        z[p] -= eta * g[p]


@njit(cache=True, fastmath=False)
def _prox_step(z, g, x, state, eta, params):
    mu = params[0]
    for p in range(z.shape[0]):
        z[p] -= eta * (g[p] + mu * (z[p] - x[p]))


@njit(cache=True, fastmath=False)
def _momentum_step(z, g, x, state, eta, params):
    beta = params[0]
    for p in range(z.shape[0]):
        state[p] = beta * state[p] + g[p]
        z[p] -= eta * state[p]


def local_gd() -> LocalUpdate:
    r"""FedAvg's local step, :math:`z \leftarrow z - \eta g`.

    Returns
    -------
    LocalUpdate
        No parameters, no state.
    """
    return local_update(_gd_step, label="gradient step")


def local_prox(mu) -> LocalUpdate:
    r"""FedProx's local step on :math:`f_i(z) + \frac\mu2\lVert z - x\rVert^2`,
    :math:`z \leftarrow z - \eta(g + \mu(z - x))`.

    Parameters
    ----------
    mu : float
        The proximal parameter, finite, :math:`\mu \ge 0` (0: :func:`local_gd`'s step).

    Returns
    -------
    LocalUpdate
        ``params = [mu]``, no state.

    References
    ----------
    T. Li et al., Federated optimization in heterogeneous networks (FedProx), MLSys 2020.
    """
    mu = float(mu)
    if not (np.isfinite(mu) and mu >= 0.0):
        raise ValueError(f"mu must be finite and >= 0, got {mu}")
    return local_update(_prox_step, params=[mu], label=f"proximal gradient step, mu={mu:g}")


def local_momentum(beta, dim) -> LocalUpdate:
    r"""Heavy-ball local steps, :math:`m_i \leftarrow \beta m_i + g`,
    :math:`z \leftarrow z - \eta m_i`, the buffer :math:`m_i` (length ``dim``) kept by the
    client across rounds.

    Parameters
    ----------
    beta : float
        The momentum, :math:`0 \le \beta < 1`.
    dim : int
        The length of the buffer, the problem's dimension d (>= 1).

    Returns
    -------
    LocalUpdate
        ``params = [beta]``, ``state_size = dim`` (the buffers start at ``state0``, default 0).
    """
    beta = float(beta)
    if not (np.isfinite(beta) and 0.0 <= beta < 1.0):
        raise ValueError(f"beta must lie in [0, 1), got {beta}")
    return local_update(_momentum_step, params=[beta], state_size=check_int(dim, "dim",
                                                                           minimum=1),
                        label=f"momentum step, beta={beta:g}")


def _prepare(problem, plan, local, step, local_steps, aggregation, server_step, state0):
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
    _try_step(local, problem.dim)
    counts = plan if is_counts else plan.astype(np.int64)
    return (problem_data(problem), counts, steps, local_steps,
            np.empty(0) if coefficients is None else coefficients, rule.code, server_step,
            states)


def _try_step(local, dim):
    """One call of the step on scratch arrays: a step that cannot run on the round's arrays
    is a ``ValueError`` naming ``local`` before the run."""
    try:
        local.step(np.zeros(dim), np.ones(dim), np.zeros(dim), np.zeros(local.state_size), 1.0,
                   local.params.copy())
    except Exception as err:  # noqa: BLE001 (any failure of user code is reported as such)
        raise ValueError(f"local: step(z, g, x, state, eta, params) fails on arrays of the "
                         f"run's shapes (d = {dim}, state_size = {local.state_size}): "
                         f"{type(err).__name__}: {err}") from None


def _run(local, inputs, x, xs):
    data, counts, steps, local_steps, coefficients, form, server_step, states = inputs
    loop = custom_rounds if local.compiled else python_rounds
    loop(data, counts, steps, local_steps, coefficients, form, server_step, local.step,
         local.params, states, x, xs)


def fedavg_family(problem, plan, local, *, step, local_steps, x0=None, aggregation=None,
                  server_step=1.0, state0=None) -> CustomTrace:
    r"""Run a FedAvg-family round with the local update ``local`` (module docstring).

    Parameters
    ----------
    problem : flbounds.problems problem
    plan : array_like of bool or int, shape (n_rounds, n_clients)
        A participation mask per round, or counts (a plan drawn with replacement), as for
        :func:`~flbounds.algorithms.fedavg`.
    local : LocalUpdate
        From :func:`local_update` or a built-in (:func:`local_gd`, :func:`local_prox`,
        :func:`local_momentum`).
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

    Returns
    -------
    CustomTrace
        ``x`` and the clients' final states.
    """
    inputs = _prepare(problem, plan, local, step, local_steps, aggregation, server_step,
                      state0)
    x = start_point(problem, x0)
    xs = np.empty((inputs[1].shape[0] + 1, problem.dim))
    _run(local, inputs, x, xs)
    return CustomTrace(xs, inputs[-1])


def fedavg_family_batched(problem, plans, local, *, step, local_steps, x0=None,
                          aggregation=None, server_step=1.0, state0=None) -> CustomTrace:
    """:func:`fedavg_family` for every plan of ``plans``; replicate b equals the single run on
    ``plans[b]`` bit for bit (each replicate starts from ``x0`` and ``state0``).

    Parameters
    ----------
    problem : flbounds.problems problem
    plans : array_like, shape (n_reps, n_rounds, n_clients)
        One plan (masks or counts) per replicate, n_reps >= 1.
    local, step, local_steps, x0, aggregation, server_step, state0
        As for :func:`fedavg_family`.

    Returns
    -------
    CustomTrace
        ``x`` (n_reps, n_rounds + 1, d) and ``state`` (n_reps, N, state_size).
    """
    arr = np.asarray(plans)
    if arr.ndim != 3 or arr.shape[0] < 1:
        raise ValueError(f"plans must have shape (n_reps >= 1, n_rounds, n_clients), got "
                         f"{arr.shape}")
    prepared = [_prepare(problem, p, local, step, local_steps, aggregation, server_step,
                         state0) for p in arr]
    x = start_point(problem, x0)
    xs = np.empty((arr.shape[0], arr.shape[1] + 1, problem.dim))
    for b, inputs in enumerate(prepared):
        _run(local, inputs, x, xs[b])
    return CustomTrace(xs, np.array([inputs[-1] for inputs in prepared]))
