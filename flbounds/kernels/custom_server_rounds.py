r"""FedAvg-family rounds with a server state: control variates and other state the server keeps.

The round of :mod:`flbounds.kernels.custom_rounds` with one more array, the server state
``server`` (length k), which every participant reads during its local phase:

``local_step(z, g, x, state_i, server, eta, params)`` at every local step, then, once the
client's :math:`\tau` steps are done,

``finish(z, x, state_i, server, report, eta_sum, params)``,

which may change the client's ``state_i`` and writes the client's ``report`` (length k);
``eta_sum`` is :math:`\sum_t \eta_{r,t}` of the round. The models are aggregated and the
server steps as in :mod:`flbounds.kernels.custom_rounds`; then

.. math:: s \leftarrow s + \frac1N \sum_{i \in S_r} c_{r,i}\,\mathrm{report}_i

(:math:`c_{r,i}` the client's count, 1 for a mask), so every participant of a round reads the
state of the round's start. With SCAFFOLD's step and finish (option II: :math:`c_i^+ = c_i - c
+ (x - z)/\sum_t\eta_t`, report :math:`c_i^+ - c_i`) this is SCAFFOLD. An empty round changes
nothing.

:func:`server_rounds` compiles the loop once per pair of numba functions in a process;
:func:`python_server_rounds` makes the same operations in Python (the same bits with a step and
finish doing the same arithmetic). No RNG, no validation.
"""

import functools

import numpy as np
from numba import njit

from flbounds.kernels._arrays import copy_into
from flbounds.kernels.custom_rounds import end_round, one_gradient
from flbounds.kernels.gradients import client_gradient, client_scratch, load_client


def server_round_loop(local_step, finish):
    """The loop of the module docstring with ``local_step`` and ``finish`` compiled into it:
    ``loop(data, counts, steps, local_steps, coefficients, form, server_step, params, states,
    server, x0, xs)``; ``xs`` (R + 1, d) receives the iterates, ``states`` (N, k_c) and
    ``server`` (k,) are updated in place."""

    def loop(data, counts, steps, local_steps, coefficients, form, server_step, params,
             states, server, x0, xs):
        n_rounds, n_clients = counts.shape
        d, k = x0.shape[0], server.shape[0]
        scratch = client_scratch(data)
        z, grad, acc = np.empty(d), np.empty(d), np.empty(d)
        report, reports = np.empty(k), np.empty(k)
        per_step = steps.shape[1] > 1
        copy_into(xs[0], x0)
        for r in range(n_rounds):
            x = xs[r]
            for p in range(d):
                acc[p] = 0.0
            for p in range(k):
                reports[p] = 0.0
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
                eta_sum = 0.0
                for t in range(local_steps):
                    eta = steps[r, t] if per_step else steps[r, 0]
                    eta_sum += eta
                    client_gradient(data, i, z, scratch, grad)
                    local_step(z, grad, x, states[i], server, eta, params)
                finish(z, x, states[i], server, report, eta_sum, params)
                for p in range(k):
                    reports[p] += c * report[p]
                a = float(c) if coefficients.shape[0] == 0 else c * coefficients[i]
                total += a
                if form == 2:
                    for p in range(d):
                        acc[p] += a * (z[p] - x[p])
                else:
                    for p in range(d):
                        acc[p] += a * z[p]
            end_round(x, acc, total, m, form, server_step, xs[r + 1])
            if m > 0:
                for p in range(k):
                    server[p] += reports[p] / n_clients

    return njit(fastmath=False)(loop)


@functools.cache
def _user_loop(local_step, finish):
    return server_round_loop(local_step, finish)


def server_rounds(data, counts, steps, local_steps, coefficients, form, server_step,
                  local_step, finish, params, states, server, x0, xs):
    """The loop of the module docstring with the numba functions ``local_step`` and
    ``finish`` (compiled once per pair in a process)."""
    _user_loop(local_step, finish)(data, counts, steps, local_steps, coefficients, form,
                                   server_step, params, states, server, x0, xs)


def python_server_rounds(data, counts, steps, local_steps, coefficients, form, server_step,
                         local_step, finish, params, states, server, x0, xs):
    """:func:`server_rounds` in Python (elementwise the same operations)."""
    n_rounds, n_clients = counts.shape
    grad, report = np.empty(x0.shape[0]), np.empty(server.shape[0])
    xs[0] = x0
    for r in range(n_rounds):
        x = xs[r]
        acc, reports = np.zeros(x0.shape[0]), np.zeros(server.shape[0])
        total, m = 0.0, 0
        for i in range(n_clients):
            c = counts[r, i]
            if c == 0:
                continue
            m += 1
            z = x.copy()
            eta_sum = 0.0
            for t in range(local_steps):
                eta = steps[r, t] if steps.shape[1] > 1 else steps[r, 0]
                eta_sum += eta
                one_gradient(data, i, z, grad)
                local_step(z, grad, x, states[i], server, eta, params)
            finish(z, x, states[i], server, report, eta_sum, params)
            reports += c * report
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
        if m > 0:
            server += reports / n_clients
