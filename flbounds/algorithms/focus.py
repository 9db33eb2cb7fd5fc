r"""FOCUS (Algorithm 1 of [002]) and SG-FOCUS (Algorithm 2), in the federated (FL) form.

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
[002] Ying, Li, Yang, NeurIPS 2025, Algorithm 1 (Section 4.2), Algorithm 2 (Appendix F);
      spec/002_focus.md section 2.2 (line 9's :math:`x_{k,i}` read as :math:`x_{t,i}`).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from flbounds._validate import as_float_array
from flbounds.algorithms._common import (
    check_hyper,
    check_plan,
    check_problem,
    kernel_data,
    start_point,
)
from flbounds.algorithms.fedavg import _max_participants
from flbounds.kernels import scale_ridge
from flbounds.kernels.focus_local import focus_rounds
from flbounds.kernels.scale_ridge import focus_ridge_rounds
from flbounds.problems import Ridge

INITS = ("zero", "gradient")


class FocusTrace(NamedTuple):
    """Server iterates ``x`` and trackers ``y`` (n_rounds + 1, d); final stored gradients ``g``
    (N, d); ``g_sum`` (n_rounds + 1, d) = :math:`\\sum_i g_i` after each round, or None."""

    x: np.ndarray
    y: np.ndarray
    g: np.ndarray
    g_sum: np.ndarray | None


def focus(problem, plan, *, step, local_steps, x0=None, init="zero", record_sum=False,
          compiled=True) -> FocusTrace:
    r"""FOCUS, Algorithm 1 of [002] (module docstring gives the update).

    Parameters
    ----------
    problem : flbounds.problems problem
        :class:`~flbounds.problems.Quadratic` and :class:`~flbounds.problems.Ridge` run in a
        compiled loop (ridge: parallel over a round's participants, same numbers for any
        thread count); any other problem through its ``client_gradients``.
    plan : array_like of bool, shape (n_rounds, n_clients)
    step : float
        :math:`\eta > 0`, used for both the local and the server steps.
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
        False forces the NumPy path.

    Returns
    -------
    FocusTrace
    """
    return _run(problem, plan, None, step, local_steps, x0, init, record_sum, compiled)


def sg_focus(problem, plan, noise, *, step, local_steps, x0=None, init="zero",
             record_sum=False, compiled=True) -> FocusTrace:
    r"""SG-FOCUS, Algorithm 2 of [002]: FOCUS with stochastic gradients.

    The gradient client i evaluates at local step t of round r is
    :math:`\nabla f_i(z_t) + \xi_{r,i,t}` with :math:`\xi` = ``noise[r, i, t]``. The stored
    previous gradient is reused (never re-evaluated with a fresh sample), so the tracking
    invariant :math:`y = \sum_i g_i` stays exact. Entries for non-participants are ignored.

    Parameters
    ----------
    noise : array_like, shape (n_rounds, n_clients, local_steps, d)
        Gradient noise, drawn by the caller.
    (others as in :func:`focus`)
    """
    return _run(problem, plan, noise, step, local_steps, x0, init, record_sum, compiled)


def _run(problem, plan, noise, step, local_steps, x0, init, record_sum, compiled):
    check_problem(problem)
    plan = check_plan(plan, problem.n_clients)
    step, local_steps = check_hyper(step, local_steps)
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    n_rounds, n_clients = plan.shape
    dim = problem.dim
    use_noise = noise is not None
    if use_noise:
        noise = as_float_array(noise, "noise", shape=(n_rounds, n_clients, local_steps, dim))
    x = start_point(problem, x0)
    if init == "zero":
        g = np.zeros((n_clients, dim))
    else:
        g = problem.client_gradients(np.tile(x, (n_clients, 1)))
    y = g.sum(axis=0)
    xs, ys = np.empty((n_rounds + 1, dim)), np.empty((n_rounds + 1, dim))
    g_sums = np.empty((n_rounds + 1, dim)) if record_sum else np.empty((1, dim))
    data = kernel_data(problem) if compiled else None
    if data is not None and isinstance(problem, Ridge):
        noise_arr = noise if use_noise else np.zeros((1, 1, 1, dim))
        focus_ridge_rounds(data[3], data[4], data[5], plan, step, local_steps, noise_arr,
                           use_noise, x, y, g, xs, ys, record_sum, g_sums,
                           np.empty(n_clients, dtype=np.int64),
                           np.empty((_max_participants(plan), dim)),
                           numba.get_num_threads(),
                           scale_ridge.PARALLEL_MIN_WORK)
    elif data is not None:
        noise_arr = noise if use_noise else np.zeros((1, 1, 1, dim))
        focus_rounds(*data, plan, step, local_steps, noise_arr, use_noise, x, y, g, xs, ys,
                     record_sum, g_sums)
    else:
        _numpy_rounds(problem, plan, noise, step, local_steps, x, y, g, xs, ys,
                      g_sums if record_sum else None)
    return FocusTrace(xs, ys, g, g_sums if record_sum else None)


def _numpy_rounds(problem, plan, noise, step, local_steps, x, y, g, xs, ys, g_sums):
    """The same loop as the compiled kernel, vectorized over participants."""
    xs[0], ys[0] = x, y
    if g_sums is not None:
        g_sums[0] = g.sum(axis=0)
    for r, mask in enumerate(plan):
        idx = np.flatnonzero(mask)
        if idx.size:
            g_old = g[idx]
            Z = np.tile(x, (idx.size, 1))
            V = np.zeros_like(Z)
            for t in range(local_steps):
                if t > 0:
                    Z -= step * V
                H = problem.client_gradients(Z, clients=idx)
                if noise is not None:
                    H += noise[r, idx, t]
                V = H - g_old
            g[idx] = H
            y += V.sum(axis=0)
        x -= step * y
        xs[r + 1], ys[r + 1] = x, y
        if g_sums is not None:
            g_sums[r + 1] = g.sum(axis=0)
