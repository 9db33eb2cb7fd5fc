"""JAX peers (vmap over clients + jit + ``lax.scan`` over rounds), float64.

JAX is the optional extra ``bench``; :func:`available` says whether it imports. The thread
count of XLA's CPU backend is fixed when JAX starts (``XLA_FLAGS``), so ``benchmarks.peers``
runs each thread count in its own process and sets the flags before the import.

Each round gathers its participants through a padded index array (width = the largest
participant count of the plan; padding points past the last client, gathers zeros and is
masked out), so a round computes only its participants, as flbounds does. The local steps run
as a ``fori_loop`` on the vmapped gradient.
"""

from __future__ import annotations

import numpy as np

try:
    import jax
    import jax.numpy as jnp
    from jax import lax
    jax.config.update("jax_enable_x64", True)
except ImportError:  # optional extra: the column reads "not installed"
    jax = None


def available() -> bool:
    return jax is not None


def padded_indices(mask_plan: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, W) participant indices padded with N and the (R, W) float mask of real entries."""
    n_rounds, n_clients = mask_plan.shape
    width = max(1, int(mask_plan.sum(axis=1).max(initial=0)))
    idx = np.full((n_rounds, width), n_clients, dtype=np.int64)
    for r, row in enumerate(mask_plan):
        chosen = np.flatnonzero(row)
        idx[r, :chosen.size] = chosen
    return idx, (idx < n_clients).astype(np.float64)


def _gradient(kind, lam):
    def grad(a, b, z):
        if kind == "quadratic":
            return a @ z - b
        margins = a @ z
        weights = margins - b if kind == "ridge" else -b * jax.nn.sigmoid(-b * margins)
        return a.T @ weights / a.shape[0] + lam * z
    return jax.vmap(grad)


def _gather(arr, idx):
    return jnp.take(arr, idx, axis=0, mode="fill", fill_value=0.0)


def _local(grad, a, b, x, step, tau):
    z0 = jnp.broadcast_to(x, (a.shape[0], x.shape[0]))
    return lax.fori_loop(0, tau, lambda _, z: z - step * grad(a, b, z), z0)


def make_fedavg(kind, lam, step, tau, server_scale=None):
    """Jitted ``run(a, b, idx, weight, x0) -> x``. ``server_scale`` None: FedAvg (mean of
    the participants, empty round unchanged); a number s: sampler update
    ``x -= s * sum_S (x - x_i)``."""
    grad = _gradient(kind, lam)

    def round_(x, inputs):
        a_all, b_all, idx, weight = inputs
        z = _local(grad, _gather(a_all, idx), _gather(b_all, idx), x, step, tau)
        total, count = weight @ z, weight.sum()
        if server_scale is None:
            new = jnp.where(count > 0, total / jnp.maximum(count, 1.0), x)
        else:
            new = x - server_scale * (count * x - total)
        return new, None

    @jax.jit
    def run(a, b, idx, weight, x0):
        def body(x, rnd):
            return round_(x, (a, b) + rnd)
        return lax.scan(body, x0, (idx, weight))[0]

    return run


def make_focus(kind, lam, step, tau):
    """Jitted FOCUS ``run(a, b, idx, weight, x0) -> x`` (tracker and stored gradients 0)."""
    grad = _gradient(kind, lam)

    def local(a, b, x, g):
        def body(t, state):
            z, v, h_prev = state
            z = jnp.where(t > 0, z - step * v, z)
            h = grad(a, b, z)
            return z, v + h - h_prev, h
        z0 = jnp.broadcast_to(x, g.shape)
        _, v, h = lax.fori_loop(0, tau, body, (z0, jnp.zeros_like(g), g))
        return v, h

    @jax.jit
    def run(a, b, idx, weight, x0):
        def body(state, rnd):
            x, y, g = state
            i, w = rnd
            v, h = local(_gather(a, i), _gather(b, i), x, _gather(g, i))
            y = y + w @ v
            g = g.at[i].set(h, mode="drop")
            return (x - step * y, y, g), None
        g0 = jnp.zeros((a.shape[0], x0.shape[0]))
        return lax.scan(body, (x0, jnp.zeros_like(x0), g0), (idx, weight))[0][0]

    return run


def runner(algorithm, kind, lam, step, tau, prob, data_a, data_b, mask_plan, x0):
    """A no-argument callable running the plan once (blocking until done), inputs on the
    device already; the first call compiles."""
    if algorithm == "focus":
        fn = make_focus(kind, lam, step, tau)
    else:
        scale = None if algorithm == "fedavg" else 1.0 / (mask_plan.shape[1] * prob)
        fn = make_fedavg(kind, lam, step, tau, scale)
    idx, weight = padded_indices(mask_plan)
    args = [jnp.asarray(v) for v in (data_a, data_b, idx, weight, x0)]
    return lambda: np.asarray(fn(*args).block_until_ready())
