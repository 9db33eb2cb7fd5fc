r"""Round loops of FedAvg and FOCUS / SG-FOCUS (eqs. (2a)-(2c), Algorithms 1-2).

One implementation per algorithm, generic over the problem kind: ``data`` is a container of
:mod:`flbounds.kernels.gradients` and numba compiles each loop once per container type. The
whole run (all rounds, participants and local steps) happens inside one call.

Each participant's local phase runs in small per-thread buffers (:func:`_fedavg_client`,
whose local steps are one compiled call, :func:`~flbounds.kernels.local_steps.local_descent`;
:func:`_focus_client`), or, for quadratics with d = 8 or 16 (no gradient noise), entirely in
vector registers (:mod:`flbounds.kernels._fused`: iterate, partial sums and stored gradient
never leave the registers between local steps; same operations in the same order, so the same
bits). A serial round adds each participant's result (final local model for FedAvg, push
for FOCUS) into the server sum as soon as it is done, in client order, so a round touches each
client's data once and writes nothing per participant; the data of the participant two places
on is prefetched while the current one runs, a slice per local step, if the data are large
(``settings.ahead``, :func:`~flbounds.kernels.gradients.prefetch_slice`). A round whose gradient
work ``m * local_steps * client_work(data)`` is at least ``settings.min_work`` splits its
participants into contiguous chunks run under ``numba.prange`` (``min_work < 0``: never, for
callers already inside a parallel region); the chunks write per-participant rows, which the
server then adds row by row in client order. Either way every coordinate of the sum is
accumulated in the same order from 0, so the iterates are the same bits for any thread count
and chunking (the per-participant rows are allocated only if a round can run in chunks).
Entry points: :func:`fedavg_rounds` / :func:`focus_rounds` may chunk; :func:`fedavg_loop` /
:func:`focus_loop` with a None row buffer are serial and never compile the parallel chunk
kernels (numba prunes the branch on a None argument before typing), which is what
:func:`run_fedavg` / :func:`run_focus` call when no round can use a second thread. The
per-participant helpers are inlined in numba's IR (``inline="always"``): one LLVM module per
entry point instead of one per helper, about half the first-run compile time.
Replicates (many plans) run in :mod:`flbounds.kernels.replicates`.

Kernels never draw random numbers and never validate. Optional inputs and records are switched
by their length: ``noise`` (R, N, tau, d) is gradient noise if it has rows (SG-FOCUS), ignored
if empty; ``state.models`` and ``record.g_sums`` are written only if they have rows.
"""

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from flbounds.kernels._arrays import copy_into
from flbounds.kernels._fused import (
    fused_fedavg_rows,
    fused_fedavg_sum,
    fused_focus_rows,
    fused_focus_sum,
    prefetch_stored,
)
from flbounds.kernels.gradients import (
    client_ahead,
    client_gradient,
    client_scratch,
    client_work,
    load_client,
    prefetch_slice,
)
from flbounds.kernels.local_steps import local_descent

# A round runs in parallel only if its participants do at least this many multiply-adds in
# their gradients (m tau n d for ridge; ~0.2 ms single-threaded): a parallel region costs tens
# of microseconds, and milliseconds when other processes hold the cores. Same numbers either way.
PARALLEL_MIN_WORK = 1_000_000


class RoundSettings(NamedTuple):
    """Hyper-parameters and threading of a run: step :math:`\\eta`, :math:`\\tau`, the thread
    count that sets the chunking, the parallel threshold (``< 0``: serial), and how far ahead
    the loops hint client data."""

    step: float
    local_steps: int
    n_threads: int
    min_work: int
    ahead: int | None = None    # hint data this many places on (None: no hint code)


class FocusState(NamedTuple):
    """FOCUS state, updated in place: server model ``x`` (d,), tracker ``y`` (d,), stored
    gradients ``g`` (N, d) and ``models`` (N, d), the point where each ``g[i]`` was evaluated
    (kept only if it has rows)."""

    x: np.ndarray
    y: np.ndarray
    g: np.ndarray
    models: np.ndarray


class FocusRecord(NamedTuple):
    """Server iterates ``xs``, ``ys`` (R + 1, d) and, if it has rows, ``g_sums`` (R + 1, d)
    :math:`= \\sum_i g_i` after every round (summed afresh, to check :math:`y = \\sum_i g_i`)."""

    xs: np.ndarray
    ys: np.ndarray
    g_sums: np.ndarray


@njit(cache=True, fastmath=False)
def participants(plan, r, clients):
    """Write round r's participants (the set entries of ``plan[r]``, increasing) into
    ``clients``; return their number. Branch-free (every index is written, the count
    advances on participants): a Bernoulli plan's branches are unpredictable."""
    m = 0
    for i in range(plan.shape[1]):
        clients[m] = i
        m += np.int64(plan[r, i])
    return m


@njit(cache=True, fastmath=False)
def _max_participants(plan):
    """Largest participant count of a round (at least 1: the scratch's row count)."""
    best = 1
    for r in range(plan.shape[0]):
        m = 0
        for i in range(plan.shape[1]):
            if plan[r, i]:
                m += 1
        best = max(best, m)
    return best


@njit(cache=True, fastmath=False)
def _may_chunk(data, settings, plan):
    """Whether a round of all N clients would run in chunks (else no per-participant rows)."""
    return round_chunks(data, settings, plan.shape[1]) > 0


@njit(cache=True, fastmath=False)
def _chunk_rows(data, settings, plan, d):
    """The per-participant rows chunked rounds write (one row when no round can chunk)."""
    return np.empty((_max_participants(plan) if _may_chunk(data, settings, plan) else 1, d))


@njit(cache=True, fastmath=False)
def round_chunks(data, settings, m):
    """Chunks of a round of m participants: 0 = run serially, else min(m, 4 threads)."""
    work = m * settings.local_steps * client_work(data)
    if settings.min_work < 0 or work < settings.min_work:
        return 0
    return min(m, 4 * settings.n_threads)


@njit(cache=True, fastmath=False, inline="always")
def _fedavg_client(data, settings, c, x, work, nxt):
    """Participant c's local phase: ``local_steps`` GD steps from ``x`` in the local buffer
    ``z = work[1]`` (left there), ``work = (scratch, z, grad)``; step t hints slice t of ``nxt``."""
    z = work[1]
    load_client(data, c, work[0])
    for p in range(x.shape[0]):
        z[p] = x[p]
    local_descent(data, c, settings, work, nxt)


@njit(cache=True, fastmath=False)
def _fedavg_span(data, settings, clients, lo, hi, x, finals):
    """Local phases of participants ``clients[lo:hi]``; participant j's final model goes to
    ``finals[j]``."""
    d = x.shape[0]
    if fused_fedavg_rows(data, settings, clients, lo, hi, x, finals):
        return
    work = (client_scratch(data), np.empty(d), np.empty(d))
    for j in range(lo, hi):
        nxt = client_ahead(settings.ahead, clients, j, hi)
        _fedavg_client(data, settings, clients[j], x, work, nxt)
        for p in range(d):
            finals[j, p] = work[1][p]


@njit(cache=True, fastmath=False, parallel=True)
def fedavg_chunks(data, settings, clients, m, n_chunks, x, finals):
    for chunk in prange(n_chunks):
        _fedavg_span(data, settings, clients, chunk * m // n_chunks,
                     (chunk + 1) * m // n_chunks, x, finals)


@njit(cache=True, fastmath=False, inline="always")
def _fedavg_round(data, settings, clients, m, x, finals, buffers):
    """Sum of round's final local models into ``acc = buffers[0]``, in client order. Serial:
    each final model is added from the local buffer as soon as it is done; in parallel the
    chunks write ``finals`` rows, added afterwards row by row (same order). ``finals`` None:
    the round is serial, and the chunk kernel is not even compiled (the branch is pruned)."""
    acc, work = buffers
    d = x.shape[0]
    for p in range(d):
        acc[p] = 0.0
    if finals is not None:
        n_chunks = round_chunks(data, settings, m)
        if n_chunks > 0:
            fedavg_chunks(data, settings, clients, m, n_chunks, x, finals)
            for j in range(m):
                for p in range(d):
                    acc[p] += finals[j, p]
            return
    if fused_fedavg_sum(data, settings, clients, 0, m, x, acc):
        return
    z = work[1]
    for j in range(m):
        nxt = client_ahead(settings.ahead, clients, j, m)
        _fedavg_client(data, settings, clients[j], x, work, nxt)
        for p in range(d):
            acc[p] += z[p]


@njit(cache=True, fastmath=False)
def fedavg_loop(data, plan, settings, x0, xs, finals):
    """The rounds of :func:`fedavg_rounds`; ``finals`` None runs every round serially (the
    same bits) and compiles no chunk kernel: the entry point of one-thread callers."""
    d = x0.shape[0]
    clients = np.empty(plan.shape[1], dtype=np.int64)
    acc = np.empty(d)
    buffers = (acc, (client_scratch(data), np.empty(d), np.empty(d)))
    copy_into(xs[0], x0)
    for r in range(plan.shape[0]):
        m = participants(plan, r, clients)
        _fedavg_round(data, settings, clients, m, xs[r], finals, buffers)
        for p in range(d):
            xs[r + 1, p] = acc[p] / m if m > 0 else xs[r, p]


@njit(cache=True, fastmath=False)
def fedavg_rounds(data, plan, settings, x0, xs):
    r"""FedAvg: every participant runs ``local_steps`` GD steps from the server model, the
    server takes their mean (summed in client order); an empty round leaves the model
    unchanged. ``xs`` (R + 1, d) receives the server iterates (``xs[0] = x0``). Rounds with
    enough work run in chunks on ``settings.n_threads`` threads."""
    fedavg_loop(data, plan, settings, x0, xs, _chunk_rows(data, settings, plan, x0.shape[0]))


@njit(cache=True, fastmath=False, inline="always")
def _focus_client(data, settings, noise, r, c, state, work, nxt):
    r"""Participant c's local phase in round r: from the server model, ``local_steps``
    gradients :math:`h_t` (plus ``noise[r, c, t]``) along
    :math:`z \leftarrow z - \eta (h_t - g_c^{old})` (``local_steps - 1`` moves); stores
    :math:`g_c = h_{\tau-1}` (and the point in ``models[c]``); the push
    :math:`h_{\tau-1} - g_c^{old}` is left in ``v``; ``work = (scratch, z, h, v)``; hints
    as :func:`_fedavg_client`."""
    scratch, z, h, v = work
    d = state.x.shape[0]
    load_client(data, c, scratch)
    for p in range(d):
        z[p] = state.x[p]
    for t in range(settings.local_steps):
        if nxt >= 0:
            prefetch_slice(data, nxt, t, settings.local_steps)
        if t > 0:
            for p in range(d):
                z[p] -= settings.step * v[p]
        client_gradient(data, c, z, scratch, h)
        if noise.shape[0] > 0:
            for p in range(d):
                h[p] += noise[r, c, t, p]
        for p in range(d):
            v[p] = h[p] - state.g[c, p]
    for p in range(d):
        state.g[c, p] = h[p]
    if state.models.shape[0] > 0:
        for p in range(d):
            state.models[c, p] = z[p]


@njit(cache=True, fastmath=False)
def _focus_span(data, settings, noise, r, clients, span, state, pushes):
    """Local phases (:func:`_focus_client`) of participants ``clients[span[0]:span[1]]`` in
    round r; participant j's push goes to ``pushes[j]``."""
    d = state.x.shape[0]
    work = (client_scratch(data), np.empty(d), np.empty(d), np.empty(d))
    if noise.shape[0] == 0 and fused_focus_rows(data, settings, clients, span[0], span[1],
                                                state, pushes, work[1]):
        return
    for j in range(span[0], span[1]):
        nxt = client_ahead(settings.ahead, clients, j, span[1])
        prefetch_stored(state, clients, j, span[1])
        _focus_client(data, settings, noise, r, clients[j], state, work, nxt)
        for p in range(d):
            pushes[j, p] = work[3][p]


@njit(cache=True, fastmath=False, parallel=True)
def _focus_chunks(data, settings, noise, r, clients, m, state, pushes):
    n_chunks = round_chunks(data, settings, m)
    for chunk in prange(n_chunks):
        _focus_span(data, settings, noise, r, clients,
                    (chunk * m // n_chunks, (chunk + 1) * m // n_chunks), state, pushes)


@njit(cache=True, fastmath=False, inline="always")
def _focus_round(data, settings, noise, r, clients, m, state, pushes, work):
    r""":math:`y \leftarrow y + \sum_{i \in S_r} v_i` in client order: serially each push is
    added as soon as it is done; in parallel the chunks write ``pushes`` rows, added
    afterwards row by row (same order). ``pushes`` None: serial only (as in
    :func:`_fedavg_round`)."""
    d = state.x.shape[0]
    if pushes is not None:
        if round_chunks(data, settings, m) > 0:
            _focus_chunks(data, settings, noise, r, clients, m, state, pushes)
            for j in range(m):
                for p in range(d):
                    state.y[p] += pushes[j, p]
            return
    if noise.shape[0] == 0 and fused_focus_sum(data, settings, clients, 0, m, state, state.y,
                                               work[1]):
        return
    v = work[3]
    for j in range(m):
        nxt = client_ahead(settings.ahead, clients, j, m)
        prefetch_stored(state, clients, j, m)
        _focus_client(data, settings, noise, r, clients[j], state, work, nxt)
        for p in range(d):
            state.y[p] += v[p]


@njit(cache=True, fastmath=False)
def _sum_rows(g, out, row):
    out[row, :] = 0.0
    for i in range(g.shape[0]):
        for p in range(g.shape[1]):
            out[row, p] += g[i, p]


@njit(cache=True, fastmath=False)
def focus_loop(data, plan, noise, settings, state, record, pushes):
    """The rounds of :func:`focus_rounds`; ``pushes`` None: serial rounds only (as
    :func:`fedavg_loop`)."""
    d = state.x.shape[0]
    clients = np.empty(plan.shape[1], dtype=np.int64)
    work = (client_scratch(data), np.empty(d), np.empty(d), np.empty(d))
    copy_into(record.xs[0], state.x)
    copy_into(record.ys[0], state.y)
    if record.g_sums.shape[0] > 0:
        _sum_rows(state.g, record.g_sums, np.int64(0))
    for r in range(plan.shape[0]):
        m = participants(plan, r, clients)
        _focus_round(data, settings, noise, r, clients, m, state, pushes, work)
        for p in range(d):
            state.x[p] -= settings.step * state.y[p]
        copy_into(record.xs[r + 1], state.x)
        copy_into(record.ys[r + 1], state.y)
        if record.g_sums.shape[0] > 0:
            _sum_rows(state.g, record.g_sums, r + 1)


@njit(cache=True, fastmath=False)
def focus_rounds(data, plan, noise, settings, state, record):
    r"""FOCUS / SG-FOCUS (Algorithms 1-2 of FOCUS): per round the participants' local phases
    (:func:`_focus_client`), then :math:`y \leftarrow y + \sum_{i \in S_r} v_i` in client
    order and :math:`x \leftarrow x - \eta y` (also when :math:`S_r` is empty). Rounds with
    enough work run in chunks on ``settings.n_threads`` threads."""
    focus_loop(data, plan, noise, settings, state, record,
               _chunk_rows(data, settings, plan, state.x.shape[0]))


def serial_only(settings: RoundSettings) -> bool:
    """Whether no round of a run with these settings can use a second thread: then the
    serial loops (``finals`` / ``pushes`` None) give the same bits and compile less."""
    return settings.min_work < 0 or settings.n_threads <= 1


def run_fedavg(data, plan, settings, x0, xs) -> None:
    """:func:`fedavg_loop` without chunks when :func:`serial_only`, else
    :func:`fedavg_rounds` (plain Python: the choice of compiled entry point)."""
    if serial_only(settings):
        fedavg_loop(data, plan, settings, x0, xs, None)
    else:
        fedavg_rounds(data, plan, settings, x0, xs)


def run_focus(data, plan, noise, settings, state, record) -> None:
    """:func:`focus_loop` without chunks when :func:`serial_only`, else :func:`focus_rounds`."""
    if serial_only(settings):
        focus_loop(data, plan, noise, settings, state, record, None)
    else:
        focus_rounds(data, plan, noise, settings, state, record)
