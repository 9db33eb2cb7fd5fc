"""Whole local phases in registers where a kernel exists (:mod:`flbounds.kernels._simd_quad`).

``fused_fedavg_add(data, settings, c, x, out, o_off, nxt)`` runs participant c's FedAvg local
phase from ``x`` and adds its final model into ``out[o_off:o_off + d]``; ``fused_fedavg_put``
writes it there instead. ``fused_focus_add(data, settings, c, state, out, o_off, z, nxt)`` /
``fused_focus_put`` run its FOCUS local phase (no gradient noise): stored gradient updated in
``state.g[c]``, the last local point left in ``z``, the push added into / written to ``out``.
Before a kernel runs, all of participant ``nxt``'s data (a quadratic's d (d + 1) values) is
hinted into the cache at once (:func:`~flbounds.kernels.gradients.prefetch_slice`; nothing if
nxt < 0). Each returns False, having done nothing, when no fused kernel fits (any kind but a
quadratic, d not 8 or 16, fewer than one local step): the caller then runs the generic loop.
Compiled only; the choice of kernel depends on the container type (compile time) and d (run time).
"""

from numba import types
from numba.extending import overload

from flbounds.kernels import _simd_quad as sq
from flbounds.kernels.gradients import QuadraticData, _kind, prefetch_slice


def _stub(*args):
    raise NotImplementedError("compiled only")


def fused_fedavg_add(data, settings, c, x, out, o_off, nxt):
    return _stub()


def fused_fedavg_put(data, settings, c, x, out, o_off, nxt):
    return _stub()


def fused_focus_add(data, settings, c, state, out, o_off, z, nxt):
    return _stub()


def fused_focus_put(data, settings, c, state, out, o_off, z, nxt):
    return _stub()


def _all_c(*types_):
    """Whether every array type (NamedTuple types: every field) is C-contiguous float64."""
    flat = []
    for ty in types_:
        flat.extend(getattr(ty, "types", (ty,)))
    return all(isinstance(t, types.Array) and t.layout == "C" and t.dtype == types.float64
               for t in flat)


def _fedavg_overload(k8, k16):
    def typer(data, settings, c, x, out, o_off, nxt):
        if _kind(data) is not QuadraticData or not _all_c(data, x, out):
            return lambda data, settings, c, x, out, o_off, nxt: False

        def impl(data, settings, c, x, out, o_off, nxt):
            d, tau = x.shape[0], settings.local_steps
            if tau < 1 or (d != 16 and d != 8):
                return False
            prefetch_slice(data, nxt, 0, 1)
            if d == 16:
                k16(out, o_off, x, 0, data.At, c * 256, data.b, c * 16, settings.step, tau)
            else:
                k8(out, o_off, x, 0, data.At, c * 64, data.b, c * 8, settings.step, tau)
            return True
        return impl
    return typer


def _focus_overload(k8, k16):
    def typer(data, settings, c, state, out, o_off, z, nxt):
        if _kind(data) is not QuadraticData or not _all_c(data, state, out, z):
            return lambda data, settings, c, state, out, o_off, z, nxt: False

        def impl(data, settings, c, state, out, o_off, z, nxt):
            d, tau = state.x.shape[0], settings.local_steps
            if tau < 1 or (d != 16 and d != 8):
                return False
            prefetch_slice(data, nxt, 0, 1)
            if d == 16:
                k16(out, o_off, state.g, c * 16, z, state.x, 0, data.At, c * 256, data.b,
                    c * 16, settings.step, tau)
            else:
                k8(out, o_off, state.g, c * 8, z, state.x, 0, data.At, c * 64, data.b, c * 8,
                   settings.step, tau)
            return True
        return impl
    return typer


overload(fused_fedavg_add, jit_options={"fastmath": False})(
    _fedavg_overload(sq.fedavg_quad8_add, sq.fedavg_quad16_add))
overload(fused_fedavg_put, jit_options={"fastmath": False})(
    _fedavg_overload(sq.fedavg_quad8_put, sq.fedavg_quad16_put))
overload(fused_focus_add, jit_options={"fastmath": False})(
    _focus_overload(sq.focus_quad8_add, sq.focus_quad16_add))
overload(fused_focus_put, jit_options={"fastmath": False})(
    _focus_overload(sq.focus_quad8_put, sq.focus_quad16_put))
