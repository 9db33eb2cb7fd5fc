r"""Rounds that mix client rounds and server steps: SAFARI (Algorithm 1 of SAFARI).

Each round is either a FedAvg round with local SGD (the sampled clients run ``K`` steps
:math:`z \leftarrow z - \eta_c(\nabla f_i(z) + \xi)` from the server model, which becomes
their mean) or one server SGD step :math:`x \leftarrow x - \eta_s(\nabla F(x) + \zeta)`.
Gradients come from :mod:`flbounds.kernels.gradients` (``data`` for the clients,
``population`` for :math:`F` as a single client), so every problem kind runs here. The random
plan (round types, sampled clients, noises) is an input; replicates are an axis over the same
loop (:func:`safari_replicates`, parallel over replicates, each replicate serial, so the
numbers do not depend on the thread count). No RNG, no validation.
"""

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from flbounds.kernels._arrays import copy_into
from flbounds.kernels.gradients import client_gradient, client_scratch, load_client
from flbounds.kernels.scheduled import step_at


class MixedPlan(NamedTuple):
    """``client_round`` bool (R,), ``clients`` int64 (R, m), ``client_noise`` (R, m, K, d),
    ``server_noise`` (R, d); a leading replicate axis on every field for the replicates."""

    client_round: np.ndarray
    clients: np.ndarray
    client_noise: np.ndarray
    server_noise: np.ndarray


@njit(cache=True, fastmath=False, inline="always")
def _client_round(data, plan, r, step, x, work):
    """The FedAvg local-SGD round r from ``x`` (in place); returns
    :math:`\\|\\frac1m \\sum_i \\sum_k \\nabla f_i(z_{i,k})\\|^2` (noise-free gradients)."""
    scratch, z, grad, acc, gsum = work
    m, d = plan.clients.shape[1], x.shape[0]
    acc[:] = 0.0
    gsum[:] = 0.0
    for c in range(m):
        i = plan.clients[r, c]
        load_client(data, i, scratch)
        copy_into(z, x)
        for k in range(plan.client_noise.shape[2]):
            client_gradient(data, i, z, scratch, grad)
            for p in range(d):
                gsum[p] += grad[p]
                z[p] = z[p] - step * (grad[p] + plan.client_noise[r, c, k, p])
        for p in range(d):
            acc[p] += z[p]
    norm2 = 0.0
    for p in range(d):
        x[p] = acc[p] / m
        v = gsum[p] / m
        norm2 += v * v
    return norm2


@njit(cache=True, fastmath=False)
def safari_rounds(data, population, plan, steps, x0, out):
    """Run ``len(plan.client_round)`` rounds with ``steps = (step_client, step_server)``, each
    a number or an array (R,) of steps per round (:func:`~flbounds.kernels.scheduled.step_at`);
    ``out = (xs (R + 1, d), g2 (R,))``: the server iterates, and on client rounds the squared
    norm of the mean summed local gradients (the quantity in G_2 of SAFARI Thm 4), NaN on
    server rounds."""
    xs, g2 = out
    d = x0.shape[0]
    x, grad = x0.copy(), np.empty(d)
    work = (client_scratch(data), np.empty(d), np.empty(d), np.empty(d), np.empty(d))
    server_scratch = client_scratch(population)
    load_client(population, 0, server_scratch)
    copy_into(xs[0], x)
    for r in range(plan.client_round.shape[0]):
        if plan.client_round[r]:
            g2[r] = _client_round(data, plan, r, step_at(steps[0], r), x, work)
        else:
            client_gradient(population, 0, x, server_scratch, grad)
            for p in range(d):
                x[p] = x[p] - step_at(steps[1], r) * (grad[p] + plan.server_noise[r, p])
            g2[r] = np.nan
        copy_into(xs[r + 1], x)


@njit(cache=True, fastmath=False, parallel=True)
def safari_replicates(data, population, plans, steps, x0, out):
    """:func:`safari_rounds` for every replicate b of the stacked ``plans``; ``out = (xs
    (B, R + 1, d), g2 (B, R))``."""
    xs, g2 = out
    for rep in prange(plans.client_round.shape[0]):
        plan = MixedPlan(plans.client_round[rep], plans.clients[rep], plans.client_noise[rep],
                         plans.server_noise[rep])
        safari_rounds(data, population, plan, steps, x0, (xs[rep], g2[rep]))
