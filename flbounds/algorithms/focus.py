r"""FOCUS (Algorithm 1 of FOCUS) and SG-FOCUS (Algorithm 2), in the federated (FL) form.

Server state: model :math:`x`, tracker :math:`y`. Client state: the last gradient it evaluated,
:math:`g_i`. Per round r, every :math:`i \in S_r` pulls :math:`x_r` (not :math:`y`), evaluates
:math:`\tau` gradients :math:`h_0, \dots, h_{\tau-1}` along

.. math:: z_0 = x_r, \qquad z_{t+1} = z_t - \eta\,(h_t - g_i^{old}), \qquad h_t = \nabla f_i(z_t),

(:math:`\tau - 1` local moves; the paper's :math:`\tau`-th move is never used), stores
:math:`g_i \leftarrow h_{\tau-1}` and pushes :math:`v_i = h_{\tau-1} - g_i^{old}` (the
telescoped sum of line 8 of Alg. 1). The server does :math:`y \leftarrow y + \sum_{i\in S_r}
v_i` (no averaging) and :math:`x \leftarrow x - \eta y`, also in an empty round. Hence
:math:`y = \sum_i g_i` after every round (tracking invariant) and the fixed point is exactly
:math:`x^\star` for any :math:`\eta`, :math:`\tau` and participation pattern.

References
----------
FOCUS: Ying, Li, Yang, NeurIPS 2025, Algorithm 1 (Section 4.2), Algorithm 2 (Appendix F);
      spec/002_focus.md section 2.2 (line 9's :math:`x_{k,i}` read as :math:`x_{t,i}`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.algorithms import schedules
from flbounds.algorithms._common import (
    MAX_LOCAL_STEPS,
    check_compiled,
    check_plan,
    check_problem,
    problem_data,
    round_settings,
    start_point,
)
from flbounds.kernels._layout import line_aligned, line_zeros
from flbounds.kernels.rounds import FocusRecord, FocusState, run_focus
from flbounds.kernels.scheduled import focus_scheduled_loop
from flbounds.validation import as_float_array, check_int

__all__ = ["INITS", "FocusState", "FocusTrace", "focus", "sg_focus"]

INITS = ("zero", "gradient")


class FocusTrace(NamedTuple):
    r"""The trace of a FOCUS run (:func:`focus`, :func:`sg_focus`).

    Attributes
    ----------
    x, y : numpy.ndarray, shape (n_rounds + 1, d)
        The server iterates and the trackers.
    g : numpy.ndarray, shape (N, d)
        The final stored gradients.
    g_sum : numpy.ndarray, shape (n_rounds + 1, d), or None
        :math:`\sum_i g_i` after each round (with ``record_sum``).
    models : numpy.ndarray, shape (N, d), or None
        The point where each final ``g[i]`` was evaluated (only when the run started from a
        ``start`` state).
    """

    x: np.ndarray
    y: np.ndarray
    g: np.ndarray
    g_sum: np.ndarray | None
    models: np.ndarray | None = None


def focus(problem, plan, *, step, local_steps, x0=None, init="zero", record_sum=False,
          compiled=True, start=None) -> FocusTrace:
    r"""FOCUS, Algorithm 1 of FOCUS (module docstring gives the update).

    Parameters
    ----------
    problem : flbounds.problems problem
        Runs in the compiled loop :func:`flbounds.kernels.rounds.focus_rounds` (a round with
        enough work runs its participants in parallel; same numbers for any thread count).
    plan : array_like of bool, shape (n_rounds, n_clients)
    step : float, Schedule or array
        :math:`\eta > 0`, used for both the local and the server steps; or one step per round
        :math:`\eta_r` (:mod:`flbounds.algorithms.schedules`; a schedule that changes within
        a round is a ``ValueError``), used by round r's local moves and server step.
    local_steps : int
        :math:`\tau \ge 1`.
    x0 : array_like, shape (d,), optional
        Server start (default 0).
    init : {"zero", "gradient"}
        ``"zero"``: Algorithm 1 (:math:`y_0 = 0`, :math:`g_i = 0`). ``"gradient"``: the proof's
        initialization (:math:`g_i = \nabla f_i(x_0)`, :math:`y_0 = \sum_i g_i`).
    record_sum : bool
        Also record :math:`\sum_i g_i` after every round (cost O(N d) per round).
    compiled : bool
        Must be True (kept for the signature): the compiled loop is the one implementation.
    start : FocusState, optional
        Resume from a state between rounds (server model ``x``, tracker ``y``, stored
        gradients ``g`` and the client ``models`` where they were evaluated; not modified)
        instead of ``x0`` / ``init``; the trace then carries the final ``models``.

    Returns
    -------
    FocusTrace
    """
    return _run(problem, plan, None, step, local_steps, (x0, init, start), record_sum,
                compiled)


def sg_focus(problem, plan, noise, *, step, local_steps, x0=None, init="zero",
             record_sum=False, compiled=True, start=None) -> FocusTrace:
    r"""SG-FOCUS, Algorithm 2 of FOCUS: FOCUS with stochastic gradients.

    The gradient client i evaluates at local step t of round r is
    :math:`\nabla f_i(z_t) + \xi_{r,i,t}` with :math:`\xi` = ``noise[r, i, t]``. The stored
    previous gradient is reused (never re-evaluated with a fresh sample), so the tracking
    invariant :math:`y = \sum_i g_i` stays exact. Entries for non-participants are ignored.

    Parameters
    ----------
    problem : flbounds.problems problem
        The clients' functions.
    plan : array_like of bool, shape (n_rounds, n_clients)
        Row r is the participation mask of :math:`S_r`.
    noise : array_like, shape (n_rounds, n_clients, local_steps, d)
        Gradient noise, drawn by the caller.
    step, local_steps, x0, init, record_sum, compiled, start
        As in :func:`focus`.

    Returns
    -------
    FocusTrace

    References
    ----------
    .. [1] B. Ying, Z. Li, H. Yang. Exact and Linear Convergence for Federated Learning under
       Arbitrary Client Participation is Attainable. NeurIPS 2025. arXiv:2503.20117,
       Algorithm 2.
    """
    return _run(problem, plan, noise, step, local_steps, (x0, init, start), record_sum,
                compiled)


def _run(problem, plan, noise, step, local_steps, begin, record_sum, compiled):
    check_problem(problem)
    plan = check_plan(plan, problem.n_clients)
    local_steps = check_int(local_steps, "local_steps", minimum=1, maximum=MAX_LOCAL_STEPS)
    step, steps = schedules.resolve(step, plan.shape[0], local_steps, per_local_step=False)
    check_compiled(compiled)
    data = problem_data(problem)
    n_rounds, n_clients = plan.shape
    dim = problem.dim
    if noise is None:
        noise = np.zeros((0, 1, 1, dim))
    else:
        noise = as_float_array(noise, "noise", shape=(n_rounds, n_clients, local_steps, dim))
    state = _initial_state(problem, *begin)
    record = FocusRecord(np.empty((n_rounds + 1, dim)), np.empty((n_rounds + 1, dim)),
                         np.empty((n_rounds + 1 if record_sum else 0, dim)))
    if step is not None:
        run_focus(data, plan, noise, round_settings(step, local_steps, data=data), state,
                  record)
    else:
        focus_scheduled_loop(data, plan, noise, round_settings(1.0, local_steps, data=data),
                             steps, state, record)
    return FocusTrace(record.xs, record.ys, state.g, record.g_sums if record_sum else None,
                      state.models if begin[2] is not None else None)


def _initial_state(problem, x0, init, start) -> FocusState:
    """A fresh kernel state: from ``start`` (copied), else ``x0`` with Algorithm 1's zero
    memory or the proof's gradient initialization."""
    n_clients, dim = problem.n_clients, problem.dim
    if start is not None:
        if x0 is not None or init != "zero":
            raise ValueError("start replaces x0 and init: give start alone")
        shapes = {"x": (dim,), "y": (dim,), "g": (n_clients, dim), "models": (n_clients, dim)}
        fields = getattr(start, "_fields", None)
        if fields != FocusState._fields:
            raise ValueError(f"start must be a FocusState with fields {FocusState._fields}")
        x, y, g, models = (as_float_array(getattr(start, f), f"start.{f}", shape=shapes[f],
                                          copy=f != "g") for f in fields)
        return FocusState(x, y, line_aligned(g, writeable=True, copy=True), models)
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    x = start_point(problem, x0)
    if init == "zero":      # y = sum_i g_i = 0 exactly, without summing N zero rows
        return FocusState(x, np.zeros(dim), line_zeros((n_clients, dim)), np.empty((0, dim)))
    g = problem.client_gradients(np.tile(x, (n_clients, 1)))
    return FocusState(x, g.sum(axis=0), line_aligned(g, writeable=True), np.empty((0, dim)))
