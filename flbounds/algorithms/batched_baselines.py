r"""FedAU, MIFA, SCAFFOLD, FedAWE and gossip local SGD over a replicate axis: many
participation plans in one round loop.

``plans`` has shape (n_reps, n_rounds, n_clients) and replicate b is exactly the per-plan
function on ``plans[b]`` (:func:`~flbounds.algorithms.fedau`, ...), bit for bit: a round's
local steps run for the participants of every replicate in one gradient call (the kernel
computes row by row, so each row is the per-plan row), a replicate's sums over its
participants are sums over all clients with zeros elsewhere (NumPy adds the rows in the
same order, and adding an exact zero changes nothing), and FedAU's weighted sum
:math:`\sum_{S_r}\omega_i\Delta_i` is one stacked product per participant count, the product
the per-plan run makes. What this saves is the Python work of a round, shared by all
replicates; use it for Monte Carlo over seeds.

Gradient noise (a *tape* per replicate, as a wrapper of ``client_gradients`` that adds the
next rows of a pre-drawn array in call order would): ``tapes[b]`` of shape (n_draws, d);
in each local step the participants of replicate b, in client order, take its next rows.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.algorithms import schedules
from flbounds.algorithms._common import MAX_LOCAL_STEPS, check_problem, start_point
from flbounds.algorithms.baselines import _close_intervals, _gradients_of
from flbounds.algorithms.batched import check_plans
from flbounds.validation import as_float_array, check_int, check_positive


class BatchedBaselineTrace(NamedTuple):
    """``x`` (n_reps, n_rounds + 1, d): replicate b's server iterates."""

    x: np.ndarray


def _setup(problem, plans, step, local_steps, x0, tapes, server_step=1.0):
    """Checked plans, the steps per round (R,), local steps, starts (B, d), the iterate
    array, the noise (or None) and the server step, checked before any work."""
    check_problem(problem)
    plans = check_plans(plans, problem.n_clients)
    local_steps = check_int(local_steps, "local_steps", minimum=1, maximum=MAX_LOCAL_STEPS)
    steps = schedules.resolve(step, plans.shape[1], local_steps, per_local_step=False)[1]
    x = np.repeat(start_point(problem, x0)[None], plans.shape[0], axis=0)
    xs = np.empty((plans.shape[0], plans.shape[1] + 1, problem.dim))
    xs[:, 0] = x
    noise = None if tapes is None else _Tapes(tapes, plans.shape[0], problem.dim)
    server_step = check_positive(server_step, "server_step")
    return plans, steps[:, 0], local_steps, x, xs, noise, server_step


class _Tapes:
    """The replicates' noise tapes, one array with offsets, read in call order."""

    def __init__(self, tapes, n_reps, dim):
        if len(tapes) != n_reps:
            raise ValueError(f"tapes must hold one array per replicate ({n_reps}), "
                             f"got {len(tapes)}")
        arrays = [as_float_array(t, "tapes", ndim=2) for t in tapes]
        if any(a.shape[1] != dim for a in arrays):
            raise ValueError(f"tapes must have shape (n_draws, {dim}) each")
        sizes = np.array([a.shape[0] for a in arrays])
        self.flat = np.concatenate(arrays) if arrays else np.empty((0, dim))
        self.start, self.end = np.cumsum(sizes) - sizes, np.cumsum(sizes)
        self.cursor = self.start.copy()

    def take(self, rep, counts):
        """The next rows for the participants ``rep`` (replicate of each row, sorted) of a
        local step; ``counts`` (B,) participants per replicate."""
        if np.any(self.cursor + counts > self.end):
            raise ValueError("tapes: noise tape exhausted")
        first = np.cumsum(counts) - counts
        rows = self.cursor[rep] + np.arange(rep.size) - first[rep]
        self.cursor += counts
        return self.flat[rows]


class _Round:
    """The participants of one round over all replicates: rows in (replicate, client) order."""

    def __init__(self, masks):
        self.masks = masks
        self.rep, self.client = np.nonzero(masks)
        self.counts = masks.sum(axis=1)
        self.any = self.counts > 0

    def local_gd(self, problem, x, step, local_steps, correction=None, noise=None):
        """``local_steps`` steps of z <- z - step (grad f_i(z) [+ noise] - correction) from
        the replicate's x, for every participant row."""
        Z = x[self.rep]
        gradients = _gradients_of(problem, Z, self.client)
        for _ in range(local_steps):
            G = gradients(Z)
            if noise is not None:
                G = G + noise.take(self.rep, self.counts)
            Z -= step * (G if correction is None else G - correction)
        return Z

    def padded(self, rows):
        """Rows (one per participant) on the (B, N, d) grid, zeros elsewhere."""
        out = np.zeros(self.masks.shape + rows.shape[1:])
        out[self.rep, self.client] = rows
        return out

    def mean(self, rows):
        """Per replicate: the mean of its participants' rows (rows of absent replicates:
        undefined, use :attr:`any`)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.padded(rows).sum(axis=1) / self.counts[:, None]

    def weighted_sum(self, w, rows):
        """Per replicate: ``w_S @ rows_S`` over its participants, the product a per-plan run
        makes (one stacked product per participant count)."""
        out = np.zeros((self.masks.shape[0], rows.shape[1]))
        first = np.cumsum(self.counts) - self.counts
        for k in np.unique(self.counts[self.any]):
            reps = np.flatnonzero(self.counts == k)
            at = first[reps][:, None] + np.arange(k)
            out[reps] = np.matmul(w[at][:, None, :], rows[at])[:, 0]
        return out


def fedau_batched(problem, plans, *, step, local_steps, x0=None, server_step=1.0,
                  max_interval=10, weights_from="past", tapes=None) -> BatchedBaselineTrace:
    """:func:`~flbounds.algorithms.fedau` (published rule, ``normalize=False``) for every
    plan of ``plans`` (n_reps, n_rounds, n_clients); ``tapes``: module docstring."""
    plans, step, local_steps, x, xs, noise, server_step = _setup(
        problem, plans, step, local_steps, x0, tapes, server_step)
    max_interval = check_int(max_interval, "max_interval", minimum=1)
    if weights_from not in ("past", "current"):
        raise ValueError(f"weights_from must be 'past' or 'current', got {weights_from!r}")
    shape = (plans.shape[0], problem.n_clients)
    omega, n_intervals, open_interval = np.ones(shape), np.zeros(shape), np.zeros(shape)
    for r in range(plans.shape[1]):
        masks = plans[:, r]
        before = omega.copy() if weights_from == "past" else None
        _close_intervals(omega, n_intervals, open_interval, masks, max_interval)
        rnd = _Round(masks)
        if rnd.rep.size:
            delta = rnd.local_gd(problem, x, step[r], local_steps, noise=noise) - x[rnd.rep]
            w = (omega if before is None else before)[rnd.rep, rnd.client]
            moved = x + server_step * rnd.weighted_sum(w, delta) / problem.n_clients
            x = np.where(rnd.any[:, None], moved, x)
        xs[:, r + 1] = x
    return BatchedBaselineTrace(xs)


def mifa_batched(problem, plans, *, step, local_steps, x0=None,
                 tapes=None) -> BatchedBaselineTrace:
    """:func:`~flbounds.algorithms.mifa` for every plan of ``plans``."""
    plans, step, local_steps, x, xs, noise, _ = _setup(problem, plans, step, local_steps,
                                                       x0, tapes)
    updates = np.zeros((plans.shape[0], problem.n_clients, problem.dim))
    made_with = np.full(updates.shape[:2], step[0] if step.size else 1.0)
    for r in range(plans.shape[1]):
        rnd = _Round(plans[:, r])
        if rnd.rep.size:
            Z = rnd.local_gd(problem, x, step[r], local_steps, noise=noise)
            updates[rnd.rep, rnd.client] = x[rnd.rep] - Z
            made_with[rnd.rep, rnd.client] = step[r]
        x = x - ((step[r] / made_with)[:, :, None] * updates).mean(axis=1)
        xs[:, r + 1] = x
    return BatchedBaselineTrace(xs)


def scaffold_batched(problem, plans, *, step, local_steps, x0=None, server_step=1.0,
                     tapes=None) -> BatchedBaselineTrace:
    """:func:`~flbounds.algorithms.scaffold` for every plan of ``plans``."""
    plans, step, local_steps, x, xs, noise, server_step = _setup(
        problem, plans, step, local_steps, x0, tapes, server_step)
    c_server = np.zeros((plans.shape[0], problem.dim))
    c_client = np.zeros((plans.shape[0], problem.n_clients, problem.dim))
    for r in range(plans.shape[1]):
        rnd = _Round(plans[:, r])
        if rnd.rep.size:
            old = c_client[rnd.rep, rnd.client]
            Z = rnd.local_gd(problem, x, step[r], local_steps, old - c_server[rnd.rep],
                             noise=noise)
            c_new = old - c_server[rnd.rep] + (x[rnd.rep] - Z) / (local_steps * step[r])
            live = rnd.any[:, None]
            c_server = np.where(live, c_server + rnd.padded(c_new - old).sum(axis=1)
                                / problem.n_clients, c_server)
            c_client[rnd.rep, rnd.client] = c_new
            delta = rnd.mean(Z - x[rnd.rep])
            x = np.where(live, x + delta if server_step == 1.0 else x + server_step * delta,
                         x)
        xs[:, r + 1] = x
    return BatchedBaselineTrace(xs)


def fedawe_batched(problem, plans, *, step, local_steps, x0=None, server_step=1.0,
                   tapes=None) -> BatchedBaselineTrace:
    """:func:`~flbounds.algorithms.fedawe` for every plan of ``plans``."""
    plans, step, local_steps, x, xs, noise, server_step = _setup(
        problem, plans, step, local_steps, x0, tapes, server_step)
    last = np.full((plans.shape[0], problem.n_clients), -1.0)
    for r in range(plans.shape[1]):
        rnd = _Round(plans[:, r])
        if rnd.rep.size:
            innovation = x[rnd.rep] - rnd.local_gd(problem, x, step[r], local_steps,
                                                   noise=noise)
            echo = (r - last[rnd.rep, rnd.client])[:, None]
            x = np.where(rnd.any[:, None], x - server_step * rnd.mean(echo * innovation), x)
            last[rnd.rep, rnd.client] = r
        xs[:, r + 1] = x
    return BatchedBaselineTrace(xs)


def local_sgd_gossip_batched(problem, plans, *, step, local_steps,
                             x0=None) -> BatchedBaselineTrace:
    """:func:`~flbounds.algorithms.local_sgd_gossip` for every plan of ``plans``."""
    plans, step, local_steps, x, xs, *_ = _setup(problem, plans, step, local_steps, x0, None)
    n_reps, n_clients, dim = plans.shape[0], problem.n_clients, problem.dim
    models = np.repeat(x[:, None, :], n_clients, axis=1).reshape(n_reps * n_clients, dim)
    gradients = _gradients_of(problem, models, np.tile(np.arange(n_clients), n_reps))
    for r in range(plans.shape[1]):
        for _ in range(local_steps):
            models -= step[r] * gradients(models)
        grid = models.reshape(n_reps, n_clients, dim)
        masks = plans[:, r]
        rnd = _Round(masks)
        if rnd.rep.size:
            average = rnd.mean(grid[rnd.rep, rnd.client])
            grid[masks] = average[rnd.rep]
        xs[:, r + 1] = grid.mean(axis=1)
    return BatchedBaselineTrace(xs)
