r"""Round loops with a step per round (or per local step), counts and aggregation rules.

The loops of :mod:`flbounds.kernels.rounds` take one step :math:`\eta` for the whole run and
average the participants uniformly; they stay the path of the default (constant step, mask,
uniform aggregation). The loops here take the steps as an array and are serial (the iterates do
not depend on the thread count):

- :func:`fedavg_general_loop`: FedAvg whose round r has steps ``steps[r]`` (shape (R, 1): one
  step for the round; (R, tau): step t of every local phase uses ``steps[r, t]``), plans of
  counts ``counts[r, i] >= 0`` (a mask as 0/1), and the server combination

  ========  ==========================================================
  ``form``  :math:`x_{r+1}`
  ========  ==========================================================
  0         :math:`\sum_{S_r} c_i a_i z_i / \sum_{S_r} c_i a_i`
  1         :math:`\sum_{S_r} c_i a_i z_i`
  2         :math:`x_r + \sum_{S_r} c_i a_i (z_i - x_r)`
  ========  ==========================================================

  with ``coefficients`` :math:`a_i` (:mod:`flbounds.algorithms.aggregation`); an empty round
  leaves :math:`x` unchanged. With 0/1 counts, unit coefficients, form 0 and equal steps it is
  :func:`~flbounds.kernels.rounds.fedavg_loop` to the bit: the same local steps, each final
  model added (times 1.0) in client order, the sum divided by :math:`\sum 1.0 = |S_r|`.
- :func:`focus_scheduled_loop`: FOCUS / SG-FOCUS with :math:`\eta_r` = ``steps[r]`` in round
  r's local moves and server step (the round helpers of :mod:`flbounds.kernels.rounds`);
  :func:`focus_scheduled_replicates` runs it for every replicate of a batch.

:func:`step_at` reads round r's step from a number (the same for every round) or an array
(R,), so a loop compiled for a constant step keeps its code and a schedule reuses the loop.

No RNG, no validation.
"""

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from flbounds.kernels._arrays import copy_into
from flbounds.kernels.custom_rounds import gradient_rounds
from flbounds.kernels.gradients import CACHED, client_scratch
from flbounds.kernels.rounds import (
    FocusRecord,
    FocusState,
    RoundSettings,
    _focus_round,
    _sum_rows,
    participants,
)


@njit(cache=True, fastmath=False)
def fedavg_general_loop(data, counts, steps, local_steps, coefficients, form, x0, xs):
    """FedAvg with per-round steps, counts and a combination rule (module docstring);
    ``coefficients`` of length 0 means all ones. ``xs`` (R + 1, d) receives the iterates.

    The loop is :data:`~flbounds.kernels.custom_rounds.gradient_rounds` (the round loop of
    :func:`~flbounds.kernels.custom_rounds.custom_rounds` with the gradient step) with server
    step 1, which keeps the aggregate: the same operations."""
    gradient_rounds(data, counts, steps, local_steps, coefficients, form, 1.0, np.empty(0),
                    np.empty((counts.shape[1], 0)), x0, xs)


@njit(cache=True, fastmath=False)
def focus_scheduled_loop(data, plan, noise, settings, steps, state, record):
    """:func:`~flbounds.kernels.rounds.focus_loop` (serial) with round r's step
    ``steps[r, 0]`` in its local moves and server step."""
    d = state.x.shape[0]
    clients = np.empty(plan.shape[1], dtype=np.int64)
    work = (client_scratch(data), np.empty(d), np.empty(d), np.empty(d))
    copy_into(record.xs[0], state.x)
    copy_into(record.ys[0], state.y)
    if record.g_sums.shape[0] > 0:
        _sum_rows(state.g, record.g_sums, np.int64(0))
    for r in range(plan.shape[0]):
        eta = steps[r, 0]
        round_settings = RoundSettings(eta, settings.local_steps, settings.n_threads,
                                       settings.min_work, settings.ahead)
        m = participants(plan, r, clients)
        _focus_round(data, round_settings, noise, r, clients, m, state, None, work)
        for p in range(d):
            state.x[p] -= eta * state.y[p]
        copy_into(record.xs[r + 1], state.x)
        copy_into(record.ys[r + 1], state.y)
        if record.g_sums.shape[0] > 0:
            _sum_rows(state.g, record.g_sums, r + 1)


@njit(cache=True, fastmath=False, parallel=True)
def focus_scheduled_replicates(data, plans, settings, steps, states, records):
    """:func:`~flbounds.kernels.replicates.focus_replicates` with round r's step
    ``steps[r, 0]`` (:func:`focus_scheduled_loop` per replicate, in parallel over them)."""
    d = states.x.shape[1]
    noise = np.zeros((0, 1, 1, d))
    for rep in prange(plans.shape[0]):
        state = FocusState(states.x[rep], states.y[rep], states.g[rep], states.models[rep])
        record = FocusRecord(records.xs[rep], records.ys[rep], records.g_sums[rep])
        focus_scheduled_loop(data, plans[rep], noise, settings, steps, state, record)


def step_at(steps, r):
    """Round r's step: ``steps`` itself if it is a number, else ``steps[r]``. Compiled only."""
    raise NotImplementedError("step_at is only callable from compiled code")


@overload(step_at, jit_options=CACHED, inline="always")
def _step_at(steps, r):
    if isinstance(steps, types.Array):
        return lambda steps, r: steps[r]
    return lambda steps, r: steps
