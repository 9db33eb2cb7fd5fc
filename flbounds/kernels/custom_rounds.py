r"""FedAvg-family rounds with a local step written by the user.

:func:`custom_rounds` is :func:`~flbounds.kernels.scheduled.fedavg_general_loop` with the
local step a function argument: at local step t of round r, client i's gradient
:math:`g = \nabla f_i(z)` comes from the problem's compiled kernel and

``local_step(z, g, x, state_i, eta, params)``

moves ``z`` (and the client's persistent ``state_i``, a row of ``states`` (N, k)) in place,
with :math:`x = x_r` the pulled model, :math:`\eta = \eta_{r,t}` and ``params`` the update's
hyper-parameters. The combination (``form``, ``coefficients``, counts) is that of
``fedavg_general_loop``, followed by the server step
:math:`x_{r+1} = x_r + \eta_g(\bar z - x_r)` (:math:`x_{r+1} = \bar z` when
:math:`\eta_g = 1`, the same operations as FedAvg). The loop is serial (the iterates do not
depend on the thread count); numba compiles it once per ``local_step`` function, not cached
(a function argument has no stable cache key).

:func:`python_rounds` makes the same operations in Python, calling ``local_step`` as a
Python function and the compiled gradient of one client per local step (:func:`one_gradient`):
with a step function that does the same arithmetic, the same bits.

No RNG, no validation.
"""

import numpy as np
from numba import njit

from flbounds.kernels._arrays import copy_into
from flbounds.kernels.gradients import client_gradient, client_scratch, load_client


@njit(fastmath=False)
def custom_rounds(data, counts, steps, local_steps, coefficients, form, server_step,
                  local_step, params, states, x0, xs):
    """The round loop of the module docstring; ``xs`` (R + 1, d) receives the iterates,
    ``states`` (N, k) is updated in place."""
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
        for p in range(d):
            if m == 0:
                new = x[p]
            elif form == 0:
                new = acc[p] / total
            elif form == 1:
                new = acc[p]
            else:
                new = x[p] + acc[p]
            xs[r + 1, p] = new if server_step == 1.0 or m == 0 else \
                x[p] + server_step * (new - x[p])


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
