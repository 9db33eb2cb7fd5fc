"""Whole local phases in registers where a kernel exists (:mod:`flbounds.kernels._simd_quad`).

Span functions run participants ``clients[lo:hi]`` in one loop, the kernel written straight into
it (a call per participant, with numba's arrays passed as dozens of words, cost a quadratic
FedAvg participant 25-30% of its time):

- ``fused_fedavg_sum(data, settings, clients, lo, hi, x, acc)``: each participant's FedAvg local
  phase from ``x``, its final model added into ``acc`` as soon as it is done (client order);
- ``fused_fedavg_rows(data, settings, clients, lo, hi, x, rows)``: participant j's final model
  written to ``rows[j]``;
- ``fused_focus_sum(data, settings, clients, lo, hi, state, out, z)`` /
  ``fused_focus_rows(...)``: FOCUS local phases (no gradient noise), stored gradients updated
  in ``state.g``, the last local point in ``models[c]`` when ``state.models`` has rows (``z``
  is scratch), the push added into ``out`` / written to ``out[j]``.

``fused_fedavg_put(data, settings, c, x, out, o_off, nxt)`` is one participant written to
``out[o_off:o_off + d]`` (the replicate loops). While a participant runs, all of the
participant :data:`~flbounds.kernels.gradients.AHEAD` places on is hinted into the cache at once
(a quadratic's d (d + 1) values; ``settings.ahead`` None: no hint code); FOCUS also hints the
next participant's stored gradient. Each returns False, having done nothing, when no fused
kernel fits (any kind but a quadratic, d not 8 or 16, fewer than one local step): the caller
then runs the generic loop. Compiled only; the kernel is chosen by the container type (compile
time) and d (run time).
"""

import numpy as np
from numba import njit, types
from numba.extending import overload

from flbounds.kernels import _simd_quad as sq
from flbounds.kernels._simd import _c_doubles, prefetch_l1, prefetch_l2
from flbounds.kernels.gradients import (
    QuadraticData,
    _kind,
    client_ahead,
    prefetch_slice,
)

_OPTIONS = {"fastmath": False}


def _stub(*args):
    raise NotImplementedError("compiled only")


def fused_fedavg_sum(data, settings, clients, lo, hi, x, acc):
    return _stub()


def fused_fedavg_rows(data, settings, clients, lo, hi, x, rows):
    return _stub()


def fused_fedavg_put(data, settings, c, x, out, o_off, nxt):
    return _stub()


def fused_focus_sum(data, settings, clients, lo, hi, state, out, z):
    return _stub()


def fused_focus_rows(data, settings, clients, lo, hi, state, out, z):
    return _stub()


@njit(cache=True, fastmath=False, inline="always")
def prefetch_stored(state, clients, j, m):
    """Hint participant ``clients[j + 1]``'s stored-gradient row into L2 when it does not
    follow ``clients[j]`` (a row is short: the next one in memory is fetched with this one):
    at p = 0.1 each FOCUS participant otherwise waits for it on its first push."""
    if j + 1 < m and clients[j + 1] != clients[j] + 1:
        d = state.g.shape[1]
        prefetch_l2(state.g, clients[j + 1] * d, d)


def _hint_stored(ahead, state, clients, j, m):
    """Hint the stored-gradient row of participant ``clients[j + ahead]`` into L2 (nothing past
    the span, nothing at all when ``ahead`` is None). The register kernels hint it as they hint
    the data, whether that participant follows or not: one of them is over too soon for
    :func:`prefetch_stored`'s hint one place on (quadratic FOCUS at N = 1e4, p = 0.1:
    0.183-0.186 against 0.212 us per participant; at p = 1 level)."""
    return _stub()


@overload(_hint_stored, jit_options=_OPTIONS, inline="always")
def _hint_stored_impl(ahead, state, clients, j, m):
    if isinstance(ahead, types.NoneType):
        return lambda ahead, state, clients, j, m: None

    def impl(ahead, state, clients, j, m):
        if j + ahead < m:
            d = state.g.shape[1]
            prefetch_l2(state.g, clients[j + ahead] * d, d)
    return impl


def _client_next(ahead, clients, j, m):
    """``clients[j + 1]`` if j + 1 < m, else -1; always -1 when ``ahead`` is None (no hints)."""
    return _stub()


@overload(_client_next, jit_options=_OPTIONS, inline="always")
def _client_next_impl(ahead, clients, j, m):
    if isinstance(ahead, types.NoneType):
        return lambda ahead, clients, j, m: np.int64(-1)
    return lambda ahead, clients, j, m: clients[j + 1] if j + 1 < m else np.int64(-1)


@njit(cache=True, fastmath=False, inline="always")
def _hint_ahead(data, settings, clients, j, hi):
    """Hints while participant j runs: all of the data of the one
    :data:`~flbounds.kernels.gradients.AHEAD` places on into L2, and of the next one into L1
    (quadratic FedAvg at N = 1e4, p = 0.1: 160-170 against 185-210 ns per participant with the
    L2 hint alone); nothing when ``settings.ahead`` is None."""
    prefetch_slice(data, client_ahead(settings.ahead, clients, j, hi), 0, 1)
    near = _client_next(settings.ahead, clients, j, hi)
    if near >= 0:
        d = data.At.shape[1]
        prefetch_l1(data.At, near * d * d, d * d)
        prefetch_l1(data.b, near * d, d)


def _all_c(*types_):
    """Whether every array type (NamedTuple types: every field) is C-contiguous float64."""
    flat = []
    for ty in types_:
        flat.extend(getattr(ty, "types", (ty,)))
    return _c_doubles(*flat)


def _fits(data, *arrays):
    return _kind(data) is QuadraticData and _all_c(data, *arrays)


@njit(cache=True, fastmath=False, inline="always")
def _kernel_fits(d, tau):
    """Whether a register kernel exists: d = 8 or 16, at least one local step."""
    return tau >= 1 and (d == 16 or d == 8)


def _fedavg_span(k8, k16, rows):
    """FedAvg over a span with kernels k8 / k16: added into ``out`` or (``rows``) written
    to row j. The kernel calls are written into the loop: a helper around them, even one
    inlined by numba, made the loop 25% slower (quadratic FedAvg, N = 1e4, p = 0.1)."""
    def typer(data, settings, clients, lo, hi, x, out):
        if not _fits(data, x, out):
            return lambda data, settings, clients, lo, hi, x, out: False

        def impl(data, settings, clients, lo, hi, x, out):
            d, tau, step = x.shape[0], settings.local_steps, settings.step
            if not _kernel_fits(d, tau):
                return False
            for j in range(lo, hi):
                c, o_off = clients[j], j * d if rows else 0
                _hint_ahead(data, settings, clients, j, hi)
                if d == 16:
                    k16(out, o_off, x, 0, data.At, c * 256, data.b, c * 16, step, tau)
                else:
                    k8(out, o_off, x, 0, data.At, c * 64, data.b, c * 8, step, tau)
            return True
        return impl
    return typer


def _fedavg_one(data, settings, c, x, out, o_off, nxt):
    if not _fits(data, x, out):
        return lambda data, settings, c, x, out, o_off, nxt: False

    def impl(data, settings, c, x, out, o_off, nxt):
        d, tau = x.shape[0], settings.local_steps
        if not _kernel_fits(d, tau):
            return False
        prefetch_slice(data, nxt, 0, 1)
        if d == 16:
            sq.fedavg_quad16_put(out, o_off, x, 0, data.At, c * 256, data.b, c * 16,
                                 settings.step, tau)
        else:
            sq.fedavg_quad8_put(out, o_off, x, 0, data.At, c * 64, data.b, c * 8,
                                settings.step, tau)
        return True
    return impl


def _focus_span(k8, k16, rows):
    """FOCUS over a span: pushes added into ``out`` or (``rows``) written to row j."""
    def typer(data, settings, clients, lo, hi, state, out, z):
        if not _fits(data, state, out, z):
            return lambda data, settings, clients, lo, hi, state, out, z: False

        def impl(data, settings, clients, lo, hi, state, out, z):
            d, tau, step = state.x.shape[0], settings.local_steps, settings.step
            if not _kernel_fits(d, tau):
                return False
            for j in range(lo, hi):
                c, o_off = clients[j], j * d if rows else 0
                _hint_ahead(data, settings, clients, j, hi)
                _hint_stored(settings.ahead, state, clients, j, hi)
                if d == 16:
                    k16(out, o_off, state.g, c * 16, z, state.x, 0, data.At, c * 256, data.b,
                        c * 16, step, tau)
                else:
                    k8(out, o_off, state.g, c * 8, z, state.x, 0, data.At, c * 64, data.b,
                       c * 8, step, tau)
                if state.models.shape[0] > 0:
                    for p in range(d):
                        state.models[c, p] = z[p]
            return True
        return impl
    return typer


overload(fused_fedavg_sum, jit_options=_OPTIONS)(
    _fedavg_span(sq.fedavg_quad8_add, sq.fedavg_quad16_add, False))
overload(fused_fedavg_rows, jit_options=_OPTIONS)(
    _fedavg_span(sq.fedavg_quad8_put, sq.fedavg_quad16_put, True))
overload(fused_fedavg_put, jit_options=_OPTIONS)(_fedavg_one)
overload(fused_focus_sum, jit_options=_OPTIONS)(
    _focus_span(sq.focus_quad8_add, sq.focus_quad16_add, False))
overload(fused_focus_rows, jit_options=_OPTIONS)(
    _focus_span(sq.focus_quad8_put, sq.focus_quad16_put, True))
