"""A quadratic client's whole local phase in vector registers (d = 8 or 16, fastmath off).

For :math:`f_c(z) = z^\\top A_c z/2 - b_c^\\top z` with small d the gradient is 2 d vector
multiply-adds, so loads, stores and calls between the ``local_steps`` gradients cost about as
much as the arithmetic. :func:`fedavg_quad` and :func:`focus_quad` keep the local iterate,
:math:`b_c`, the partial sums and (FOCUS) the stored gradient in ``<8 x double>`` registers for
all local steps, read :math:`A_c^\\top` rows straight from memory, and add the result into the
server sum (or write it to a row) at the end.

Bits: every lane runs the scalar kernels' operations in their order: row i of
:math:`A_c z - b_c` is four partial sums from 0 over the rows :math:`r \\equiv j \\pmod 4`
(``fadd(s_j, fmul(At[r, i], z[r]))``, r increasing), then ``((s0 + s1) + (s2 + s3)) - b_i``
(:func:`flbounds.kernels._simd.dot4_rows` for d % 4 = 0); the GD step is
``z - step * g``, FOCUS's push ``h - g_old``, the sum ``acc + z`` (``y + v``). No fast-math
flags, no fused multiply-add. ``tests/flbounds/kernels/test_bits.py`` checks the rounds built on
these against the scalar reference loops.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from flbounds.kernels._simd import _DOUBLE, _c_doubles, _flat_ptr, _splat, _vector_ptr

_W = 8


def _vec_load(context, builder, ty, arr, off):
    return builder.load(_vector_ptr(builder, _flat_ptr(context, builder, ty, arr, off), _W),
                        align=8)


def _vec_store(context, builder, ty, arr, off, value):
    builder.store(value, _vector_ptr(builder, _flat_ptr(context, builder, ty, arr, off), _W),
                  align=8)


def _offsets(builder, base, blocks):
    return [builder.add(base, ir.Constant(base.type, k * _W)) for k in range(blocks)]


def _gradient(context, builder, a_t, a, a_off, z, bvec):
    """Vectors of :math:`A_c z - b_c` (d = 8 * len(z)) in the order of the module docstring."""
    blocks, d = len(z), _W * len(z)
    zero = ir.Constant(ir.VectorType(_DOUBLE, _W), [0.0] * _W)
    sums = [[zero] * blocks for _ in range(4)]
    for r in range(d):
        lane = builder.extract_element(z[r // _W], ir.Constant(ir.IntType(32), r % _W))
        factor = _splat(builder, lane, _W)
        row = builder.add(a_off, ir.Constant(a_off.type, r * d))
        for k, off in enumerate(_offsets(builder, row, blocks)):
            x = _vec_load(context, builder, a_t, a, off)
            sums[r % 4][k] = builder.fadd(sums[r % 4][k], builder.fmul(x, factor))
    return [builder.fsub(builder.fadd(builder.fadd(sums[0][k], sums[1][k]),
                                      builder.fadd(sums[2][k], sums[3][k])), bvec[k])
            for k in range(blocks)]


def _slots(builder, values):
    slots = []
    for value in values:
        slot = builder.alloca(value.type)
        builder.store(value, slot)
        slots.append(slot)
    return slots


def _fedavg_codegen(blocks, add):
    def codegen(context, builder, sig, args):
        out, o_off, x, x_off, a, a_off, b, b_off, step, tau = args
        out_t, x_t, a_t, b_t = sig.args[0], sig.args[2], sig.args[4], sig.args[6]
        z = _slots(builder, [_vec_load(context, builder, x_t, x, off)
                             for off in _offsets(builder, x_off, blocks)])
        bvec = [_vec_load(context, builder, b_t, b, off) for off in _offsets(builder, b_off,
                                                                              blocks)]
        stepv = _splat(builder, step, _W)
        with cgutils.for_range(builder, tau):
            cur = [builder.load(s) for s in z]
            g = _gradient(context, builder, a_t, a, a_off, cur, bvec)
            for k in range(blocks):
                builder.store(builder.fsub(cur[k], builder.fmul(stepv, g[k])), z[k])
        for k, off in enumerate(_offsets(builder, o_off, blocks)):
            value = builder.load(z[k])
            if add:
                value = builder.fadd(_vec_load(context, builder, out_t, out, off), value)
            _vec_store(context, builder, out_t, out, off, value)
        return context.get_dummy_value()

    return codegen


def _focus_codegen(blocks, add):
    def codegen(context, builder, sig, args):
        out, o_off, g, g_off, zout, x, x_off, a, a_off, b, b_off, step, tau = args
        out_t, g_t, zo_t, x_t = sig.args[0], sig.args[2], sig.args[4], sig.args[5]
        a_t, b_t = sig.args[7], sig.args[9]
        z = _slots(builder, [_vec_load(context, builder, x_t, x, off)
                             for off in _offsets(builder, x_off, blocks)])
        bvec = [_vec_load(context, builder, b_t, b, off) for off in _offsets(builder, b_off,
                                                                              blocks)]
        g_old = [_vec_load(context, builder, g_t, g, off) for off in _offsets(builder, g_off,
                                                                               blocks)]
        stepv = _splat(builder, step, _W)

        def local_gradient(cur):
            h = _gradient(context, builder, a_t, a, a_off, cur, bvec)
            return h, [builder.fsub(h[k], g_old[k]) for k in range(blocks)]

        h, v = local_gradient([builder.load(s) for s in z])
        h_slots, v_slots = _slots(builder, h), _slots(builder, v)
        with cgutils.for_range(builder, builder.sub(tau, ir.Constant(tau.type, 1))):
            cur = [builder.load(s) for s in z]
            vprev = [builder.load(s) for s in v_slots]
            cur = [builder.fsub(cur[k], builder.fmul(stepv, vprev[k])) for k in range(blocks)]
            for k in range(blocks):
                builder.store(cur[k], z[k])
            h, v = local_gradient(cur)
            for k in range(blocks):
                builder.store(h[k], h_slots[k])
                builder.store(v[k], v_slots[k])
        offs = zip(_offsets(builder, g_off, blocks), _offsets(builder, o_off, blocks),
                   _offsets(builder, ir.Constant(g_off.type, 0), blocks), strict=True)
        for k, (goff, ooff, zoff) in enumerate(offs):
            _vec_store(context, builder, g_t, g, goff, builder.load(h_slots[k]))
            _vec_store(context, builder, zo_t, zout, zoff, builder.load(z[k]))
            value = builder.load(v_slots[k])
            if add:
                value = builder.fadd(_vec_load(context, builder, out_t, out, ooff), value)
            _vec_store(context, builder, out_t, out, ooff, value)
        return context.get_dummy_value()

    return codegen


def _fedavg_variant(blocks, add):
    @intrinsic
    def fedavg_quad(typingctx, out, o_off, x, x_off, a, a_off, b, b_off, step, tau):
        if not _c_doubles(out, x, a, b) or not out.mutable:
            return None
        sig = types.void(out, types.intp, x, types.intp, a, types.intp, b, types.intp,
                         types.float64, types.intp)
        return sig, _fedavg_codegen(blocks, add)

    return fedavg_quad


def _focus_variant(blocks, add):
    @intrinsic
    def focus_quad(typingctx, out, o_off, g, g_off, zout, x, x_off, a, a_off, b, b_off, step,
                   tau):
        if not _c_doubles(out, g, zout, x, a, b) or not (out.mutable and g.mutable
                                                          and zout.mutable):
            return None
        sig = types.void(out, types.intp, g, types.intp, zout, x, types.intp, a, types.intp,
                         b, types.intp, types.float64, types.intp)
        return sig, _focus_codegen(blocks, add)

    return focus_quad


# fedavg_quad{8,16}_{add,put}(out, o_off, x, x_off, At, a_off, b, b_off, step, tau):
# z = x[x_off:x_off + d]; tau times z = z - step * (A_c z - b_c) (A_c^T rows from At[a_off:]);
# then out[o_off:o_off + d] += z (add) or = z (put). Flat element offsets, unchecked.
fedavg_quad8_add, fedavg_quad8_put = _fedavg_variant(1, True), _fedavg_variant(1, False)
fedavg_quad16_add, fedavg_quad16_put = _fedavg_variant(2, True), _fedavg_variant(2, False)
# focus_quad{8,16}_{add,put}(out, o_off, g, g_off, zout, x, x_off, At, a_off, b, b_off, step,
# tau), tau >= 1: z = x; h = A_c z - b_c, v = h - g_old (g_old = g[g_off:]) then tau - 1 times
# z = z - step * v and again h, v; finally g[g_off:] = h, zout[:d] = z, out[o_off:] += v (add)
# or = v (put).
focus_quad8_add, focus_quad8_put = _focus_variant(1, True), _focus_variant(1, False)
focus_quad16_add, focus_quad16_put = _focus_variant(2, True), _focus_variant(2, False)
