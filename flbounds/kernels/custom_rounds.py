r"""FedAvg-family rounds with a local step written by the user.

:func:`round_loop` compiles the round loop around a local step: at local step t of round r,
client i's gradient :math:`g = \nabla f_i(z)` comes from the problem's compiled kernel and

``local_step(z, g, x, state_i, eta, params)``

moves ``z`` (and the client's persistent ``state_i``, a row of ``states`` (N, k)) in place,
with :math:`x = x_r` the pulled model, :math:`\eta = \eta_{r,t}` and ``params`` the update's
hyper-parameters. Client i's model enters the aggregate with :math:`a = c_{r,i} a_i`
(``counts`` and ``coefficients``; no coefficients: :math:`a = c_{r,i}`), combined by ``form``
as in :mod:`flbounds.kernels.scheduled`, then the server step
:math:`x_{r+1} = x_r + \eta_g(\bar z - x_r)` (:math:`x_{r+1} = \bar z` when
:math:`\eta_g = 1`); an empty round leaves :math:`x` unchanged. The loop is serial (the
iterates do not depend on the thread count).

The step is part of the compiled loop, not an argument: a loop compiled for the library's
:func:`gradient_step` is cached on disk
(:func:`~flbounds.kernels.scheduled.fedavg_general_loop` is that loop with
:math:`\eta_g = 1`, so FedAvg's general rounds and :func:`custom_rounds` with the gradient
step are one code), while :func:`custom_rounds` compiles a loop once per user ``local_step``
in a process, not cached (a user's function has no stable cache key).

:func:`python_rounds` makes the same operations in Python, calling ``local_step`` as a
Python function and the compiled gradient of one client per local step (:func:`one_gradient`):
with a step function that does the same arithmetic, the same bits.

No RNG, no validation.
"""

import functools

import numpy as np
from numba import njit

from flbounds.kernels._arrays import copy_into
from flbounds.kernels.gradients import client_gradient, client_scratch, load_client


def round_loop(local_step, *, cache=False):
    """The round loop of the module docstring with ``local_step`` (a numba function) compiled
    into it: ``loop(data, counts, steps, local_steps, coefficients, form, server_step, params,
    states, x0, xs)``; ``xs`` (R + 1, d) receives the iterates, ``states`` (N, k) is updated
    in place. ``cache`` only for a library step bound at module level (its cache key names
    it)."""

    def loop(data, counts, steps, local_steps, coefficients, form, server_step, params,
             states, x0, xs):
        n_rounds, n_clients = counts.shape
        d = x0.shape[0]
        scratch = client_scratch(data)
        z, grad, acc = np.empty(d), np.empty(d), np.empty(d)
        per_step = steps.shape[1] > 1
        copy_into(xs[0], x0)
        for r in range(n_rounds):
            x = xs[r]
            for p in range(d):
                acc[p] = 0.0
            total = 0.0
            m = 0
            for i in range(n_clients):
                c = counts[r, i]
                if c == 0:
                    continue
                m += 1
                load_client(data, i, scratch)
                for p in range(d):
                    z[p] = x[p]
                for t in range(local_steps):
                    eta = steps[r, t] if per_step else steps[r, 0]
                    client_gradient(data, i, z, scratch, grad)
                    local_step(z, grad, x, states[i], eta, params)
                a = float(c) if coefficients.shape[0] == 0 else c * coefficients[i]
                total += a
                if form == 2:
                    for p in range(d):
                        acc[p] += a * (z[p] - x[p])
                else:
                    for p in range(d):
                        acc[p] += a * z[p]
            end_round(x, acc, total, m, form, server_step, xs[r + 1])

    return njit(cache=cache, fastmath=False)(loop)


@njit(cache=True, fastmath=False, inline="always")
def end_round(x, acc, total, m, form, server_step, out):
    """The aggregate of a round (``acc``, ``total`` over ``m`` participants, combined by
    ``form``) and the server step from ``x``, written to ``out``; an empty round keeps x."""
    for p in range(x.shape[0]):
        if m == 0:
            new = x[p]
        elif form == 0:
            new = acc[p] / total
        elif form == 1:
            new = acc[p]
        else:
            new = x[p] + acc[p]
        out[p] = new if server_step == 1.0 or m == 0 else x[p] + server_step * (new - x[p])


@functools.cache
def _user_loop(local_step):
    return round_loop(local_step)


def custom_rounds(data, counts, steps, local_steps, coefficients, form, server_step,
                  local_step, params, states, x0, xs):
    """The round loop of the module docstring with the numba function ``local_step``
    (compiled once per step function in a process); ``xs`` (R + 1, d) receives the
    iterates, ``states`` (N, k) is updated in place."""
    _user_loop(local_step)(data, counts, steps, local_steps, coefficients, form, server_step,
                           params, states, x0, xs)


@njit(cache=True, fastmath=False, inline="always")
def gradient_step(z, g, x, state, eta, params):
    r"""FedAvg's local step :math:`z \leftarrow z - \eta g` in the signature of ``local_step``
    (compiled into :data:`gradient_rounds`)."""
    for p in range(z.shape[0]):
        z[p] -= eta * g[p]


#: the round loop with :func:`gradient_step`, cached on disk (run by
#: :func:`~flbounds.kernels.scheduled.fedavg_general_loop`)
gradient_rounds = round_loop(gradient_step, cache=True)


@njit(cache=True, fastmath=False)
def one_gradient(data, i, z, out):
    """``out`` = :math:`\\nabla f_i(z)` (the gradient :func:`custom_rounds` computes)."""
    scratch = client_scratch(data)
    load_client(data, i, scratch)
    client_gradient(data, i, z, scratch, out)


def python_rounds(data, counts, steps, local_steps, coefficients, form, server_step,
                  local_step, params, states, x0, xs):
    """:func:`custom_rounds` in Python (elementwise the same operations)."""
    n_rounds, n_clients = counts.shape
    grad = np.empty(x0.shape[0])
    xs[0] = x0
    for r in range(n_rounds):
        x = xs[r]
        acc = np.zeros(x0.shape[0])
        total, m = 0.0, 0
        for i in range(n_clients):
            c = counts[r, i]
            if c == 0:
                continue
            m += 1
            z = x.copy()
            for t in range(local_steps):
                eta = steps[r, t] if steps.shape[1] > 1 else steps[r, 0]
                one_gradient(data, i, z, grad)
                local_step(z, grad, x, states[i], eta, params)
            a = float(c) if coefficients.shape[0] == 0 else c * coefficients[i]
            total += a
            acc += a * (z - x) if form == 2 else a * z
        if m == 0:
            new = x
        elif form == 0:
            new = acc / total
        elif form == 1:
            new = acc
        else:
            new = x + acc
        xs[r + 1] = new if server_step == 1.0 or m == 0 else x + server_step * (new - x)
