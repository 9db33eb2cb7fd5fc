r"""Replicate-batched Monte Carlo: all replicates of a client in one pass per round.

A Monte Carlo run of FedAvg or SAFARI repeats one algorithm over many random plans
(replicates). Here they advance together: in round r each client gathers the iterates of the
replicates it serves into a (d, B) block and runs its local steps on the block
(:func:`~.block_gradients.block_gradient`: its data read once per local step for all, the
gradient a small matrix product). A step may change from round to round.

Bit for bit: replicate b equals the single run with plan b (the block gradient computes every
column in the one-point order, the server sums in client order as the single runs do), on any
thread count: threads split the replicates into groups that do not change their arithmetic.

Memory: O(B d) blocks and traces per group, a transposed copy of the group's plans, no
(N, B, d) array (FOCUS keeps its gradients (N, d) per replicate). No RNG, no validation.
"""

import numpy as np
from numba import njit, prange

from flbounds.kernels._arrays import copy_into
from flbounds.kernels._fused import fused_fedavg_put
from flbounds.kernels.block_gradients import block_gradient, block_scratch, load_block_client
from flbounds.kernels.gradients import (
    client_ahead,
    client_gradient,
    client_scratch,
    index_ahead,
    load_client,
    prefetch_slice,
)
from flbounds.kernels.local_steps import local_descent
from flbounds.kernels.mixed_rounds import MixedPlan, safari_rounds
from flbounds.kernels.rounds import FocusRecord, FocusState, RoundSettings, focus_loop
from flbounds.kernels.scheduled import step_at


@njit(cache=True, fastmath=False)
def _groups(n_reps, n_threads):
    """Number of contiguous replicate groups: one per thread, at most one per replicate."""
    return max(1, min(n_reps, n_threads))


@njit(cache=True, fastmath=False, inline="always")
def _local_gd(data, c, Z, nb, settings, scratch, G, nxt):
    """``settings.local_steps`` GD steps of client c on the first nb columns of ``Z``; step t
    hints slice t of client ``nxt``'s data (:func:`~.gradients.prefetch_slice`)."""
    d = Z.shape[0]
    load_block_client(data, c, scratch[0])
    for t in range(settings.local_steps):
        if nxt >= 0:
            prefetch_slice(data, nxt, t, settings.local_steps)
        block_gradient(data, c, Z, nb, scratch, G)
        for p in range(d):
            for j in range(nb):
                Z[p, j] -= settings.step * G[p, j]


@njit(cache=True, fastmath=False)
def local_update_blocks(data, x, settings, out):
    r"""``out[b, i]`` :math:`= x_b - z_{b,i}` with :math:`z_{b,i}` the model after
    ``settings.local_steps`` GD steps of client i from ``x[b]`` (B, d): for each client, all
    B replicates in one block (the pseudo-gradients of FedAvg with a client sampler)."""
    n_reps, d = x.shape
    Z, G = np.empty((d, n_reps)), np.empty((d, n_reps))
    scratch = block_scratch(data, n_reps)
    for c in range(out.shape[1]):
        for j in range(n_reps):
            copy_into(Z[:, j], x[j])
        _local_gd(data, c, Z, n_reps, settings, scratch, G,
                  index_ahead(settings.ahead, c, out.shape[1]))
        for j in range(n_reps):
            for p in range(d):
                out[j, c, p] = x[j, p] - Z[p, j]


#: fewest replicates of one client that :func:`update_masked` runs as a block
BLOCK_MIN = 4


@njit(cache=True, fastmath=False, inline="always")
def pseudo_gradient(data, c, x, settings, work, out, nxt):
    """``out = x - z`` (d,) with z after ``settings.local_steps`` one-point GD steps of client
    c (loaded into ``work[0]``) from ``x``; ``work = (scratch, z, grad)``; the steps hint
    client ``nxt``'s data, a slice each (:func:`~flbounds.kernels.local_steps.local_descent`)."""
    z = work[1]
    d = x.shape[0]
    # in registers where a fused kernel fits (quadratic, d = 8 or 16): the final model goes
    # to out and becomes x - z there, the same operations as below
    if fused_fedavg_put(data, settings, c, x, out, 0, nxt):
        for p in range(d):
            out[p] = x[p] - out[p]
        return
    for p in range(d):
        z[p] = x[p]
    local_descent(data, c, settings, work, nxt)
    for p in range(d):
        out[p] = x[p] - z[p]


@njit(cache=True, fastmath=False, inline="always")
def _point_gd(data, c, row, x, reps, settings, work, out, nxt):
    """``out[b, row]``: :func:`pseudo_gradient` of client c from ``x[b]`` for each b in
    ``reps`` (the first hints client ``nxt``'s data)."""
    load_client(data, c, work[0])
    for i in range(reps.shape[0]):
        pseudo_gradient(data, c, x[reps[i]], settings, work, out[reps[i], row],
                        nxt if i == 0 else -1)


@njit(cache=True, fastmath=False)
def masked_work(data, n_reps, d):
    """Scratch of :func:`update_masked` for B = ``n_reps`` replicates in dimension d
    (allocated once by a caller that runs many rounds)."""
    return (np.empty((d, n_reps)), np.empty((d, n_reps)), np.empty(n_reps, dtype=np.int64),
            block_scratch(data, n_reps), (client_scratch(data), np.empty(d), np.empty(d)))


@njit(cache=True, fastmath=False)
def drawn_union(mask, drawn):
    """The clients drawn by some replicate (``mask`` (B, N)), increasing, into ``drawn``;
    returns their number."""
    n_reps, n = mask.shape
    m = 0
    for c in range(n):
        for b in range(n_reps):
            if mask[b, c]:
                drawn[m] = c
                m += 1
                break
    return m


@njit(cache=True, fastmath=False)
def update_masked(data, x, settings, mask, drawn, m, out, work):
    """The pseudo-gradients ``x[b] - z`` (z after the local GD steps from ``x[b]``) of the
    pairs with ``mask[b, c]`` for the clients ``drawn[:m]`` (:func:`drawn_union`), packed
    in draw order: replicate b's update of client ``drawn[j]`` goes to ``out[b, j]`` (a
    round's updates are contiguous rows, whatever N). ``work``: :func:`masked_work`."""
    n_reps, d = x.shape
    Z, G, cols, scratch, point = work
    for j in range(m):
        c = drawn[j]
        nxt = client_ahead(settings.ahead, drawn, j, m)   # scattered: hint a coming client
        nb = np.int64(0)  # not the literal 0: one specialisation of the callees
        for b in range(n_reps):
            if mask[b, c]:
                cols[nb] = b
                nb += 1
        if nb < BLOCK_MIN:
            _point_gd(data, c, j, x, cols[:nb], settings, point, out, nxt)
            continue
        for i in range(nb):
            copy_into(Z[:, i], x[cols[i]])
        _local_gd(data, c, Z, nb, settings, scratch, G, nxt)
        for i in range(nb):
            for p in range(d):
                out[cols[i], j, p] = x[cols[i], p] - Z[p, i]


def local_update_masked(data, x, settings, mask, out):
    r"""``out[b, i]`` as in :func:`local_update_blocks` for the pairs with ``mask[b, i]``
    (B, N) only (the drawn clients of FedAvg with a sampler whose feedback needs no other);
    the other rows of ``out`` are left untouched. Each pair's numbers equal
    :func:`local_update_blocks`': a block column does not depend on the others and equals
    the one-point gradient, which serves a client drawn by fewer than ``BLOCK_MIN``
    replicates (a block of one or two columns is slower). Plain Python around the compiled
    :func:`update_masked` (the scatter into ``out`` is NumPy's)."""
    n_reps, d = x.shape
    drawn = np.flatnonzero(mask.any(axis=0))
    packed = np.empty((n_reps, drawn.size, d))
    update_masked(data, x, settings, mask, drawn, drawn.size, packed,
                  masked_work(data, n_reps, d))
    reps, cols = np.nonzero(mask[:, drawn])
    out[reps, drawn[cols]] = packed[reps, cols]


@njit(cache=True, fastmath=False)
def _fedavg_group(data, plans, settings, x0, xs, lo, hi, steps=None):
    """FedAvg for replicates ``lo:hi``: per round, per client (increasing), the block of the
    replicates it serves; finals summed into each replicate's server sum in client order;
    round r's step ``steps[r]`` (default ``settings.step``)."""
    n_rounds, n_clients = plans.shape[1], plans.shape[2]
    width, d = hi - lo, x0.shape[0]
    Z, G = np.empty((d, width)), np.empty((d, width))
    cols = np.empty(width, dtype=np.int64)
    acc, count = np.empty((width, d)), np.empty(width, dtype=np.int64)
    scratch = block_scratch(data, width)
    # the group's plans as (R, N, width): who serves client c in round r is one contiguous row
    served = np.empty((n_rounds, n_clients, width), dtype=np.bool_)
    for b in range(width):    # (a loop: transpose with axes compiles slowly, see _arrays)
        for r in range(n_rounds):
            for c in range(n_clients):
                served[r, c, b] = plans[lo + b, r, c]
    for b in range(lo, hi):
        copy_into(xs[b, 0], x0)
    for r in range(n_rounds):
        here = settings if steps is None else RoundSettings(
            steps[r], settings.local_steps, settings.n_threads, settings.min_work, settings.ahead)
        acc[:] = 0.0
        count[:] = 0
        for c in range(n_clients):
            nb = np.int64(0)  # not the literal 0: one specialisation of the callees
            for b in range(width):
                if served[r, c, b]:
                    cols[nb] = b
                    nb += 1
            if nb == 0:
                continue
            for j in range(nb):
                copy_into(Z[:, j], xs[lo + cols[j], r])
            _local_gd(data, c, Z, nb, here, scratch, G,
                      index_ahead(settings.ahead, c, n_clients))
            for j in range(nb):
                for p in range(d):
                    acc[cols[j], p] += Z[p, j]
                count[cols[j]] += 1
        for b in range(width):
            for p in range(d):
                xs[lo + b, r + 1, p] = acc[b, p] / count[b] if count[b] > 0 \
                    else xs[lo + b, r, p]


@njit(cache=True, fastmath=False, parallel=True)
def fedavg_replicates(data, plans, settings, x0, xs, steps=None):
    """:func:`flbounds.kernels.rounds.fedavg_rounds` for every plan ``plans[b]``
    (n_reps, R, N), replicate-batched (:func:`_fedavg_group`); ``xs`` (n_reps, R + 1, d).
    Groups of replicates run in parallel (``settings.n_threads`` groups)."""
    n_reps = plans.shape[0]
    n_groups = _groups(n_reps, settings.n_threads)
    for g in prange(n_groups):
        _fedavg_group(data, plans, settings, x0, xs, g * n_reps // n_groups,
                      (g + 1) * n_reps // n_groups, steps)


@njit(cache=True, fastmath=False, parallel=True)
def focus_replicates(data, plans, settings, states, records):
    """:func:`flbounds.kernels.rounds.focus_rounds` (no noise) for every plan ``plans[b]`` in
    parallel over replicates; ``states`` and ``records`` hold the per-replicate arrays on a
    leading axis. (Not used by the Monte Carlo claims; kept per replicate.)"""
    d = states.x.shape[1]
    noise = np.zeros((0, 1, 1, d))
    for rep in prange(plans.shape[0]):
        state = FocusState(states.x[rep], states.y[rep], states.g[rep], states.models[rep])
        record = FocusRecord(records.xs[rep], records.ys[rep], records.g_sums[rep])
        focus_loop(data, plans[rep], noise, settings, state, record, None)


@njit(cache=True, fastmath=False, inline="always")
def _server_steps(population, plans, steps, r, lo, hi, X, xs, g2, work):
    """Server SGD step of round r for the replicates ``lo:hi`` whose round r is a server round
    (the order of :func:`flbounds.kernels.mixed_rounds.safari_rounds`)."""
    server_scratch, grad = work
    d, eta = grad.shape[0], step_at(steps[1], r)
    for b in range(lo, hi):
        if plans.client_round[b, r]:
            continue
        client_gradient(population, 0, X[b - lo], server_scratch, grad)
        for p in range(d):
            X[b - lo, p] = X[b - lo, p] - eta * (grad[p] + plans.server_noise[b, r, p])
        g2[b, r] = np.nan


@njit(cache=True, fastmath=False, inline="always")
def _safari_client_round(data, plans, step, r, lo, hi, X, g2, blocks):
    """Client round r for the replicates ``lo:hi`` whose round r is a client round: per client
    (increasing), the block of (replicate, slot) pairs that sampled it; local SGD with the
    plan's noise, then each replicate's mean in its own slot order."""
    Z, G, cols, slots, finals, grads, scratch, starts = blocks
    n_clients, d = data[0].shape[0], X.shape[1]     # clients: every container's first axis
    m, n_steps = plans.clients.shape[2], plans.client_noise.shape[3]
    # the (replicate, slot) pairs bucketed by client, each bucket in increasing (b, s)
    # order: a counting sort (clients in range: the callers' plans are checked)
    starts[:] = 0
    for b in range(lo, hi):
        if plans.client_round[b, r]:
            for s in range(m):
                starts[plans.clients[b, r, s] + 1] += 1
    for c in range(n_clients):
        starts[c + 1] += starts[c]
    for b in range(lo, hi):
        if plans.client_round[b, r]:
            for s in range(m):
                c = plans.clients[b, r, s]
                cols[starts[c]], slots[starts[c]] = b - lo, s
                starts[c] += 1
    for c in range(n_clients):                  # starts[c]: now the end of bucket c
        first = starts[c - 1] if c > 0 else np.int64(0)
        nb = starts[c] - first
        if nb == 0:
            continue
        load_block_client(data, c, scratch[0])
        for j in range(nb):
            copy_into(Z[:, j], X[cols[first + j]])
        for k in range(n_steps):
            block_gradient(data, c, Z, nb, scratch, G)
            for j in range(nb):
                i, s = cols[first + j], slots[first + j]
                for p in range(d):
                    grads[i, s, k, p] = G[p, j]
                    Z[p, j] = Z[p, j] - step * (G[p, j] + plans.client_noise[lo + i, r, s, k, p])
        for j in range(nb):
            copy_into(finals[cols[first + j], slots[first + j]], Z[:, j])
    _safari_reduce(plans, r, lo, hi, X, g2, finals, grads)


@njit(cache=True, fastmath=False, inline="always")
def _safari_reduce(plans, r, lo, hi, X, g2, finals, grads):
    """Mean of the finals and the squared norm of the mean summed gradients ``grads``
    (width, m, K, d), slot by slot and step by step in the plan's order (the order in which
    :func:`flbounds.kernels.mixed_rounds._client_round` adds them)."""
    m, d, n_steps = plans.clients.shape[2], X.shape[1], grads.shape[2]
    for b in range(lo, hi):
        if not plans.client_round[b, r]:
            continue
        i = b - lo
        norm2 = 0.0
        for p in range(d):
            acc, gsum = 0.0, 0.0
            for s in range(m):
                for k in range(n_steps):
                    gsum += grads[i, s, k, p]
                acc += finals[i, s, p]
            X[i, p] = acc / m
            v = gsum / m
            norm2 += v * v
        g2[b, r] = norm2


#: fewest replicates for SAFARI's client blocks on one thread, whose bookkeeping costs more
#: than it saves below (``python -m benchmarks mc_batched``, rows "SAFARI blocks of W")
SAFARI_MIN_BLOCK = 64


@njit(cache=True, fastmath=False)
def _safari_group(data, population, plans, steps, x0, out, lo, hi):
    """SAFARI for replicates ``lo:hi``, replicate-batched per client round."""
    xs, g2 = out
    width, d = hi - lo, x0.shape[1]
    m = plans.clients.shape[2]
    n_cols = width * m
    X = np.empty((width, d))
    for i in range(width):
        copy_into(X[i], x0[lo + i])
        copy_into(xs[lo + i, 0], x0[lo + i])
    blocks = (np.empty((d, n_cols)), np.empty((d, n_cols)), np.empty(n_cols, dtype=np.int64),
              np.empty(n_cols, dtype=np.int64), np.empty((width, m, d)),
              np.empty((width, m, plans.client_noise.shape[3], d)), block_scratch(data, n_cols),
              np.zeros(data[0].shape[0] + 1, dtype=np.int64))
    server_scratch = client_scratch(population)
    load_client(population, 0, server_scratch)
    work = (server_scratch, np.empty(d))
    for r in range(plans.client_round.shape[1]):
        _safari_client_round(data, plans, step_at(steps[0], r), r, lo, hi, X, g2, blocks)
        _server_steps(population, plans, steps, r, lo, hi, X, xs, g2, work)
        for i in range(width):
            copy_into(xs[lo + i, r + 1], X[i])


@njit(cache=True, fastmath=False, parallel=True)
def safari_replicates(data, population, plans, steps, x0, out, n_threads):
    """:func:`flbounds.kernels.mixed_rounds.safari_rounds` for every replicate b of the stacked
    ``plans`` (a :class:`~flbounds.kernels.mixed_rounds.MixedPlan` with a leading replicate
    axis) from the starts ``x0`` (B, d), replicate-batched; ``out = (xs (B, R + 1, d),
    g2 (B, R))``."""
    n_reps = plans.client_round.shape[0]
    n_groups = _groups(n_reps, n_threads)
    for g in prange(n_groups):
        _safari_group(data, population, plans, steps, x0, out, g * n_reps // n_groups,
                      (g + 1) * n_reps // n_groups)


def run_fedavg_replicates(data, plans, settings, x0, xs, steps=None):
    """:func:`fedavg_replicates`; with one group of replicates (one thread) the one call that
    kernel would make, :func:`_fedavg_group` over all replicates, is made directly: the same
    numbers, and the parallel kernel, slow to compile, is compiled only where it can help;
    ``steps`` (R,): a step per round (default ``settings.step``, the call as before)."""
    extra = () if steps is None else (steps,)
    if min(plans.shape[0], settings.n_threads) <= 1:
        _fedavg_group(data, plans, settings, x0, xs, 0, plans.shape[0], *extra)
    else:
        fedavg_replicates(data, plans, settings, x0, xs, *extra)


def run_safari_replicates(data, population, plans, steps, x0, out, n_threads):
    """:func:`safari_replicates`; one thread: :func:`_safari_group` directly (as in
    :func:`run_fedavg_replicates`), or single runs below :data:`SAFARI_MIN_BLOCK` replicates."""
    n_reps = plans.client_round.shape[0]
    if min(n_reps, n_threads) > 1:
        safari_replicates(data, population, plans, steps, x0, out, n_threads)
    elif n_reps >= SAFARI_MIN_BLOCK:
        _safari_group(data, population, plans, steps, x0, out, 0, n_reps)
    else:
        for b in range(n_reps):
            safari_rounds(data, population, MixedPlan(*(field[b] for field in plans)), steps,
                          x0[b], (out[0][b], out[1][b]))


__all__ = ["MixedPlan", "fedavg_replicates", "focus_replicates", "local_update_blocks",
           "local_update_masked", "run_fedavg_replicates", "run_safari_replicates",
           "safari_replicates"]
