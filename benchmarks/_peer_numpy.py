"""NumPy peers of flbounds' FedAvg, FOCUS and FedAvg with a uniform ISP sampler.

Three ways a researcher would write the same rounds without flbounds:

- ``loop``: a Python loop over the participating clients, one NumPy gradient per client and
  local step (how the papers' reference code runs a round);
- ``einsum``: all participants of a round batched through ``np.einsum``, one batched gradient
  per local step (every local step streams the participants' data once);
- ``einsum-blocked``: the participants in blocks sized for the L2 cache, all local steps of a
  block before the next block (each client's data read from memory once per round).

Each peer computes the iterates of the flbounds algorithm (same plan, same update order up to
floating-point reassociation); ``benchmarks.peers`` asserts the agreement before timing.
Problems are read through their public arrays: ``Quadratic`` (``A``, ``b``), ``Ridge``
(``features``, ``targets``, ``lam``), ``LogisticL2`` (``features``, ``labels``, ``lam``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import expit

#: bytes of client data a block of ``einsum-blocked`` may hold (half a typical 1 MiB L2)
BLOCK_BYTES = 512 * 1024


class Arrays(NamedTuple):
    """A problem's arrays: kind ``quadratic`` (a = A, b = b), ``ridge`` (a = features,
    b = targets) or ``logistic`` (a = features, b = labels); ``lam`` the ridge penalty."""

    kind: str
    a: np.ndarray
    b: np.ndarray
    lam: float


def arrays(problem, kind: str) -> Arrays:
    """The public arrays of ``problem`` (a flbounds problem of the given kind)."""
    if kind == "quadratic":
        return Arrays(kind, np.asarray(problem.A), np.asarray(problem.b), 0.0)
    if kind == "ridge":
        return Arrays(kind, np.asarray(problem.features), np.asarray(problem.targets),
                      float(problem.lam))
    if kind == "logistic":
        return Arrays(kind, np.asarray(problem.features), np.asarray(problem.labels),
                      float(problem.lam))
    raise ValueError(f"kind must be quadratic, ridge or logistic, got {kind!r}")


def batch_gradient(kind, a, b, lam, z):
    """Gradients of clients with data ``a`` (m, ., d), ``b`` (m, .) at points ``z`` (m, d)."""
    if kind == "quadratic":
        return np.einsum("mij,mj->mi", a, z) - b
    margins = np.einsum("mkj,mj->mk", a, z)
    if kind == "ridge":
        weights = margins - b
    else:
        weights = -b * expit(-b * margins)
    return np.einsum("mkj,mk->mj", a, weights) / a.shape[1] + lam * z


def client_gradient(kind, a, b, lam, z):
    """One client's gradient (the loop peer): ``a`` (., d), ``b`` (.,), ``z`` (d,)."""
    if kind == "quadratic":
        return a @ z - b
    margins = a @ z
    weights = margins - b if kind == "ridge" else -b * expit(-b * margins)
    return a.T @ weights / a.shape[0] + lam * z


def block_size(data: Arrays) -> int:
    """Clients per block of ``einsum-blocked``: their data fit in :data:`BLOCK_BYTES`."""
    per_client = data.a[0].nbytes + data.b[0].nbytes
    return max(1, BLOCK_BYTES // per_client)


def _blocks(clients, size):
    for start in range(0, clients.size, size):
        yield clients[start:start + size]


def _local_finals(data, x, clients, step, tau, size):
    """Sum over ``clients`` of the final local iterates (tau GD steps from ``x``)."""
    total = np.zeros_like(x)
    for block in _blocks(clients, size):
        a, b = data.a[block], data.b[block]
        z = np.repeat(x[None, :], block.size, axis=0)
        for _ in range(tau):
            z -= step * batch_gradient(data.kind, a, b, data.lam, z)
        total += z.sum(axis=0)
    return total


def fedavg_batched(data, plan, step, tau, x0, size=None):
    """FedAvg: ``size`` clients per einsum block (None: all participants of a round)."""
    x = x0.copy()
    for mask in plan:
        clients = np.flatnonzero(mask)
        if clients.size:
            x = _local_finals(data, x, clients, step, tau, size or clients.size) / clients.size
    return x


def sampler_batched(data, uniforms, prob, step, tau, x0, size=None):
    """FedAvg with a uniform ISP sampler, server step 1: client i joins round t iff
    ``uniforms[t, i] < prob``; ``x -= sum_{i in S} (x - x_i) / (N prob)``."""
    x, scale = x0.copy(), 1.0 / (uniforms.shape[1] * prob)
    for row in uniforms:
        clients = np.flatnonzero(row < prob)
        if clients.size:
            finals = _local_finals(data, x, clients, step, tau, size or clients.size)
            x = x - scale * (clients.size * x - finals)
    return x


def focus_batched(data, plan, step, tau, x0, size=None):
    """FOCUS (Algorithm 1 of [002]): tracker ``y`` and stored gradients ``g`` start at 0;
    every round ends with ``x -= step * y``."""
    x, y = x0.copy(), np.zeros_like(x0)
    g = np.zeros((plan.shape[1], x0.size))
    for mask in plan:
        clients = np.flatnonzero(mask)
        for block in _blocks(clients, size or max(clients.size, 1)):
            a, b = data.a[block], data.b[block]
            z = np.repeat(x[None, :], block.size, axis=0)
            v = np.zeros_like(z)
            stored = g[block]
            for t in range(tau):
                if t:
                    z -= step * v
                h = batch_gradient(data.kind, a, b, data.lam, z)
                v += h - stored
                stored = h
            g[block] = stored
            y += v.sum(axis=0)
        x = x - step * y
    return x


def fedavg_loop(data, plan, step, tau, x0):
    """FedAvg, one client at a time."""
    x = x0.copy()
    for mask in plan:
        finals = []
        for i in np.flatnonzero(mask):
            z = x.copy()
            for _ in range(tau):
                z -= step * client_gradient(data.kind, data.a[i], data.b[i], data.lam, z)
            finals.append(z)
        if finals:
            x = np.mean(finals, axis=0)
    return x


def sampler_loop(data, uniforms, prob, step, tau, x0):
    """FedAvg with a uniform ISP sampler, one client at a time."""
    x, scale = x0.copy(), 1.0 / (uniforms.shape[1] * prob)
    for row in uniforms:
        d = np.zeros_like(x)
        for i in np.flatnonzero(row < prob):
            z = x.copy()
            for _ in range(tau):
                z -= step * client_gradient(data.kind, data.a[i], data.b[i], data.lam, z)
            d += x - z
        x = x - scale * d
    return x


def focus_loop(data, plan, step, tau, x0):
    """FOCUS, one client at a time."""
    x, y = x0.copy(), np.zeros_like(x0)
    g = np.zeros((plan.shape[1], x0.size))
    for mask in plan:
        for i in np.flatnonzero(mask):
            z, v = x.copy(), np.zeros_like(x)
            for t in range(tau):
                if t:
                    z -= step * v
                h = client_gradient(data.kind, data.a[i], data.b[i], data.lam, z)
                v = v + h - g[i]
                g[i] = h
            y += v
        x = x - step * y
    return x
