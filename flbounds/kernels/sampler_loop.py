r"""FedAvg with an ISP sampler as one compiled loop over rounds (drawn clients only).

The round of :mod:`flbounds.algorithms.sampler_rounds` when nothing but the iterates is recorded
and the sampler is a uniform ISP or K-Vib (their draws do not read the round's updates): per
round and replicate the sampler's probabilities, the draw ``U < p``, the drawn clients' local
steps (for one replicate :func:`~flbounds.kernels.replicates.pseudo_gradient`, or a quadratic's
fused register span, :func:`~flbounds.kernels._fused.fused_fedavg_rows`;
:func:`~flbounds.kernels.replicates.update_masked` for several), the server step and K-Vib's
feedback, with the uniforms of many rounds handed over at once. The Python round does the same
operations in the same order (:func:`weighted_sum` is its aggregate too, and the feedback norm
is NumPy's ``np.linalg.norm`` of the row through :func:`~flbounds.kernels.isp_round.numpy_sum`),
so both give the same bits.

No RNG, no validation.
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from flbounds.kernels._fused import fused_fedavg_rows
from flbounds.kernels.gradients import client_ahead, load_client
from flbounds.kernels.isp_round import (
    KVIB,
    IspSettings,
    numpy_sum,
    probability_scratch,
    sampler_probabilities,
)
from flbounds.kernels.replicates import (
    drawn_union,
    masked_work,
    pseudo_gradient,
    update_masked,
)
from flbounds.kernels.rounds import RoundSettings, fedavg_chunks, participants, round_chunks


class DrawnRun(NamedTuple):
    """Settings of the loop: the sampler's, the local steps' (:class:`RoundSettings`), the
    client weights :math:`\\lambda` (N,) and the server step :math:`\\eta_g`."""

    isp: IspSettings
    local: RoundSettings
    lam: np.ndarray
    server_step: float


class DrawnState(NamedTuple):
    """State carried across rounds (updated in place): the replicates' models ``x`` (B, d),
    K-Vib's ``omega`` (B, N), the last round's probabilities ``p`` and draws ``mask`` (B, N),
    and a (B, N, d) buffer of the round's pseudo-gradients, packed (row j of replicate b: the
    j-th client drawn by some replicate; one replicate uses row 0 only)."""

    x: np.ndarray
    omega: np.ndarray
    p: np.ndarray
    mask: np.ndarray
    updates: np.ndarray


@njit(cache=True, fastmath=False)
def weighted_sum(w, z, out):
    """``out = sum_i w[i] * z[i]`` over the rows of ``z`` (k, d), added in row order from 0
    (the server aggregate of a round; BLAS' ``w @ z`` orders the sum by its own blocking)."""
    out[:] = 0.0
    for i in range(z.shape[0]):
        for j in range(z.shape[1]):
            out[j] += w[i] * z[i, j]
    return out


@njit(cache=True, fastmath=False, inline="always")
def _fold(run, state, b, i, u, agg, sq):
    """Replicate b's drawn client i with pseudo-gradient ``u`` (d,): its term
    ``lam_i u / p_i`` into ``agg`` (the product ``lam_i u`` rounded first, as the Python round
    forms it); K-Vib's feedback ``||lam_i u||^2 / p_i``."""
    w, lam = 1.0 / state.p[b, i], run.lam[i]
    for k in range(u.shape[0]):
        agg[k] += w * (lam * u[k])
    if run.isp.kind == KVIB:
        for k in range(u.shape[0]):
            z = lam * u[k]
            sq[k] = z * z
        norm = math.sqrt(numpy_sum(sq, u.shape[0]))
        state.omega[b, i] += norm * norm / state.p[b, i]


@njit(cache=True, fastmath=False, inline="always")
def _fold_finals(run, state, drawn, count, agg, sq):
    """:func:`_fold` of the drawn clients whose final local models are the rows
    ``state.updates[0, :count]``, in draw order: ``u = x - z`` formed on the way."""
    x, d = state.x[0], state.x.shape[1]
    for j in range(count):
        u, i = state.updates[0, j], drawn[j]
        if run.isp.kind == KVIB:
            for k in range(d):
                u[k] = x[k] - u[k]
            _fold(run, state, 0, i, u, agg, sq)
            continue
        w, lam = 1.0 / state.p[0, i], run.lam[i]   # _fold's terms, u formed on the way
        for k in range(d):
            agg[k] += w * (lam * (x[k] - u[k]))


@njit(cache=True, fastmath=False)
def _single_round(data, run, state, drawn, count, agg, sq, point, chunked):
    """One replicate's round: each drawn client's update folded into ``agg`` as soon as it is
    done; or, ``chunked`` not None and the round's work enough for threads
    (``run.local.min_work``), the final models computed in chunks on threads
    (:func:`~flbounds.kernels.rounds.fedavg_chunks`, into ``state.updates[0]``) and then
    folded in draw order: the same operations, the same bits (``chunked`` None: the chunk
    kernel is not compiled). A function of its own: inside :func:`drawn_rounds`, next to the
    several-replicate branch, the same loop ran logistic clients 13% slower (1.91-1.95
    against 1.68-1.71 us per drawn client at N = 1e4, p = 0.1)."""
    if chunked is not None:
        n_chunks = round_chunks(data, run.local, count)
        if n_chunks > 0:
            fedavg_chunks(data, run.local, drawn, count, n_chunks, state.x[0],
                          state.updates[0])
            _fold_finals(run, state, drawn, count, agg, sq)
            return
    if fused_fedavg_rows(data, run.local, drawn, 0, count, state.x[0], state.updates[0]):
        _fold_finals(run, state, drawn, count, agg, sq)   # the fused kernels' final models
        return
    x, u = state.x[0], state.updates[0, 0]
    for j in range(count):
        i = drawn[j]
        load_client(data, i, point[0])
        pseudo_gradient(data, i, x, run.local, point, u,
                        client_ahead(run.local.ahead, drawn, j, count))
        _fold(run, state, 0, i, u, agg, sq)


@njit(cache=True, fastmath=False)
def drawn_rounds(data, run, uniforms, state, xs, sizes, t0, chunked=None):
    """Rounds ``t0 .. t0 + k - 1`` for every replicate b, drawing with ``uniforms[b, t]``
    (B, k, N); the model after round ``t0 + t`` goes to ``xs[b, t0 + t + 1]`` and the number
    of drawn clients to ``sizes[b, t0 + t]``. One replicate: each drawn client's update is
    folded into the aggregate as soon as it is done (or, ``chunked`` not None, a round with
    enough work runs in chunks on threads: :func:`_single_round`); several: the round's
    updates are computed client by client for all replicates (:func:`update_masked`), then
    folded."""
    n_reps, n_rounds, n = uniforms.shape
    d = state.x.shape[1]
    scratch = probability_scratch(n)
    no_feedback = np.zeros(n)        # neither sampler reads the round's norms before it draws
    agg, sq = np.empty((n_reps, d)), np.empty(d)
    work = masked_work(data, n_reps, d)
    drawn, counts = np.empty((n_reps, n), dtype=np.int64), np.empty(n_reps, dtype=np.int64)
    union, slot = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    for t in range(n_rounds):
        agg[:] = 0.0
        for b in range(n_reps):
            if t == 0 or run.isp.kind == KVIB:    # a uniform ISP's p does not change
                sampler_probabilities(run.isp, no_feedback, state.omega[b], scratch, state.p[b])
            for i in range(n):
                state.mask[b, i] = uniforms[b, t, i] < state.p[b, i]
            counts[b] = participants(state.mask, b, drawn[b])
        if n_reps == 1:
            _single_round(data, run, state, drawn[0], counts[0], agg[0], sq, work[4], chunked)
        else:
            m = drawn_union(state.mask, union)
            for j in range(m):
                slot[union[j]] = j
            update_masked(data, state.x, run.local, state.mask, union, m, state.updates,
                          work)
            for b in range(n_reps):
                for j in range(counts[b]):
                    i = drawn[b, j]
                    _fold(run, state, b, i, state.updates[b, slot[i]], agg[b], sq)
        for b in range(n_reps):
            for k in range(d):
                state.x[b, k] = state.x[b, k] - run.server_step * agg[b, k]
                xs[b, t0 + t + 1, k] = state.x[b, k]
            sizes[b, t0 + t] = counts[b]
