"""Explicit vector multiply-adds for the fixed-order gradient sums (fastmath off).

Numba gives LLVM no way to vectorize a loop whose trip count is a problem size as small as
d = 16 or n = 20 (its vector loop needs 32 and more iterations, the rest runs scalar), and the
superword vectorizer cannot reorder the loads past the stores of arrays that might alias. So the
kernels call :func:`madd_rows`, which is emitted directly as LLVM vector code: up to four vectors
of 8 consecutive outputs stay in registers while rows of a matrix are added in, all of them in
one loop over the rows, the last vector masked to the outputs that remain (``llvm.masked.load``
/ ``store``: no lane past the end is read or written). One loop for all vectors matters more
than the width: each vector's sum is a chain of dependent adds, and with one loop per vector
(as before 2026-11-27, night) each loop waited on its own chain; side by side the chains
overlap (the ridge gradient at n = 20, d = 50: 218 ns before, 167 ns after).

Every lane is an ordinary IEEE ``fmul`` then ``fadd`` (no contraction, no reassociation), in the
row order given, so each output element gets exactly the sum of the scalar loop
``acc[i] = acc[i] + M[row, i] * v[row]`` row after row: vectorizing across output elements
changes no bits. Arrays must be C-contiguous (checked at compile time); offsets are flat element
offsets, not bounds-checked (the callers in :mod:`flbounds.kernels.gradients` own that).
"""

from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_DOUBLE = ir.DoubleType()
#: lanes of one vector (8 doubles: one AVX-512 register, two AVX2 ones)
_LANES = 8


def _c_doubles(*arrays) -> bool:
    """Whether every argument type is a C-contiguous float64 array (the intrinsics' inputs)."""
    return all(isinstance(a, types.Array) and a.dtype == types.float64 and a.layout == "C"
               for a in arrays)


def _flat_ptr(context, builder, ty, value, offset):
    data = context.make_array(ty)(context, builder, value).data
    return builder.gep(data, [offset])


def _vector_ptr(builder, ptr, width):
    return builder.bitcast(ptr, ir.VectorType(_DOUBLE, width).as_pointer())


def _splat(builder, scalar, width):
    vec_t = ir.VectorType(scalar.type, width)
    one = builder.insert_element(ir.Constant(vec_t, ir.Undefined), scalar,
                                 ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(one, ir.Constant(vec_t, ir.Undefined),
                                  ir.Constant(ir.VectorType(ir.IntType(32), width), [0] * width))


def _lane_mask(builder, first, left, width=_LANES):
    """``<width x i1>``: the lanes i with ``first + i < left`` (first an int, left an i64)."""
    lanes = ir.Constant(ir.VectorType(ir.IntType(64), width), [first + i for i in range(width)])
    return builder.icmp_signed("<", lanes, _splat(builder, left, width))


def _masked(builder, name, vec_t, args_t):
    from numba.core import cgutils
    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(vec_t, args_t), name)


def _masked_load(builder, ptr, mask):
    """``llvm.masked.load``: the lanes of ``mask``, 0.0 elsewhere (no fault past the end)."""
    width = mask.type.count
    vec_t = ir.VectorType(_DOUBLE, width)
    fn = _masked(builder, f"llvm.masked.load.v{width}f64.p0", vec_t,
                 [vec_t.as_pointer(), ir.IntType(32), mask.type, vec_t])
    return builder.call(fn, [ptr, ir.Constant(ir.IntType(32), 8), mask,
                             ir.Constant(vec_t, [0.0] * width)])


def _masked_store(builder, value, ptr, mask):
    """``llvm.masked.store``: only the lanes of ``mask`` are written."""
    vec_t = ir.VectorType(_DOUBLE, mask.type.count)
    fn = _masked(builder, f"llvm.masked.store.v{mask.type.count}f64.p0", ir.VoidType(),
                 [vec_t, vec_t.as_pointer(), ir.IntType(32), mask.type])
    builder.call(fn, [value, ptr, ir.Constant(ir.IntType(32), 8), mask])


def _block_ptr(context, builder, ty, arr, off, b):
    """Pointer to vector ``b`` of a pass: the ``_LANES`` doubles of the C-contiguous array
    ``arr`` (numba type ``ty``) from flat element ``off + b _LANES``."""
    ptr = _flat_ptr(context, builder, ty, arr,
                    builder.add(off, ir.Constant(ir.IntType(64), b * _LANES)))
    return _vector_ptr(builder, ptr, _LANES)


def _block_load(builder, ptr, b, blocks, mask):
    """Vector ``b`` of a pass of ``blocks`` vectors: the last one masked (0.0 past its
    ``left`` lanes), the others a plain load."""
    if b == blocks - 1:
        return _masked_load(builder, ptr, mask)
    return builder.load(ptr, align=8)


def _block_store(builder, value, ptr, b, blocks, mask):
    """Store vector ``b`` of a pass of ``blocks`` vectors: the last one to its ``mask``
    lanes only."""
    if b == blocks - 1:
        _masked_store(builder, value, ptr, mask)
    else:
        builder.store(value, ptr, align=8)


def _block_slots(context, builder, ty, arr, off, stride, rows, blocks, start):
    """The registers of a pass: for each of ``rows`` rows of ``arr`` (from flat element
    ``off``, ``stride`` apart) and each of its ``blocks`` vectors, ``(pointer, slot, b)``,
    the slot (an ``alloca`` of one vector) holding ``start(pointer, b)``."""
    from numba.core import cgutils
    vec_t = ir.VectorType(_DOUBLE, _LANES)
    slots = []
    for r in range(rows):
        row = builder.add(off, builder.mul(stride, ir.Constant(ir.IntType(64), r)))
        for b in range(blocks):
            ptr = _block_ptr(context, builder, ty, arr, row, b)
            slot = cgutils.alloca_once(builder, vec_t)
            builder.store(start(ptr, b), slot)
            slots.append((ptr, slot, b))
    return slots


def _pass_codegen(blocks, sums):
    """LLVM body of one pass of :func:`madd_rows` / :func:`madd_rows4`: ``blocks`` vectors of
    ``_LANES`` outputs times ``sums`` partial sums, all in registers through a single loop over
    the rows (independent chains side by side: one loop per vector would leave each waiting
    on its own adds); the last vector is masked to the pass's ``left`` outputs."""

    def codegen(context, builder, sig, args):
        from numba.core import cgutils
        acc, a_off, a_stride, m, m_off, m_stride, v, v_off, count, left = args
        acc_t, m_t, v_t = sig.args[0], sig.args[3], sig.args[6]
        i64 = ir.IntType(64)
        mask = _lane_mask(builder, (blocks - 1) * _LANES, left)
        slots = _block_slots(context, builder, acc_t, acc, a_off, a_stride, sums, blocks,
                             lambda ptr, b: _block_load(builder, ptr, b, blocks, mask))
        with cgutils.for_range(builder, count) as loop:
            for j in range(sums):
                row = builder.add(builder.mul(loop.index, ir.Constant(i64, sums)),
                                  ir.Constant(i64, j))
                scalar = builder.load(_flat_ptr(context, builder, v_t, v, builder.add(v_off, row)))
                factor = _splat(builder, scalar, _LANES)
                base = builder.add(m_off, builder.mul(row, m_stride))
                for b in range(blocks):
                    x = _block_load(builder, _block_ptr(context, builder, m_t, m, base, b), b,
                                    blocks, mask)
                    slot = slots[j * blocks + b][1]
                    builder.store(builder.fadd(builder.load(slot), builder.fmul(x, factor)), slot)
        for ptr, slot, b in slots:
            _block_store(builder, builder.load(slot), ptr, b, blocks, mask)
        return context.get_dummy_value()

    return codegen


def _pass(blocks, sums):
    @intrinsic
    def madd(typingctx, acc, a_off, a_stride, m, m_off, m_stride, v, v_off, count, left):
        if not _c_doubles(acc, m, v) or getattr(acc, "mutable", True) is False:
            return None
        sig = types.void(acc, types.intp, types.intp, m, types.intp, types.intp, v,
                         types.intp, types.intp, types.intp)
        return sig, _pass_codegen(blocks, sums)

    return madd


# passes of 1 .. 4 vectors of one partial sum (up to 32 outputs), of 1 or 2 of four
_S1x1, _S2x1, _S3x1, _S4x1 = (_pass(b, 1) for b in (1, 2, 3, 4))
_S1x4, _S2x4 = (_pass(b, 4) for b in (1, 2))


@njit(cache=True, fastmath=False, inline="always")
def madd_rows4(acc, a_off, a_stride, width, m, m_off, m_stride, v, v_off, count):
    """Four interleaved partial sums over ``width`` outputs: for t < count and j < 4,
    ``acc[a_off + j*a_stride + i] += m[m_off + (4t + j)*m_stride + i] * v[v_off + 4t + j]``,
    t in increasing order, for every i < width. In passes of up to 16 outputs (8 vector
    registers of partial sums: wider passes measured slower)."""
    for i in range(0, width, 16):
        left = width - i
        args = (acc, a_off + i, a_stride, m, m_off + i, m_stride, v, v_off, count, left)
        if left > 8:
            _S2x4(*args)
        else:
            _S1x4(*args)


@njit(cache=True, fastmath=False, inline="always")
def madd_rows(acc, a_off, width, m, m_off, m_stride, v, v_off, count):
    """One sum over ``width`` outputs: for t < count in increasing order,
    ``acc[a_off + i] += m[m_off + t*m_stride + i] * v[v_off + t]`` for every i < width.
    In passes of up to 32 outputs."""
    for i in range(0, width, 32):
        left = width - i
        args = (acc, a_off + i, 0, m, m_off + i, m_stride, v, v_off, count, left)
        if left > 24:
            _S4x1(*args)
        elif left > 16:
            _S3x1(*args)
        elif left > 8:
            _S2x1(*args)
        else:
            _S1x1(*args)


def _dot4_codegen(width, blocks):
    """LLVM body of :func:`dot4_rows` for ``blocks`` vectors of ``width`` outputs."""

    def codegen(context, builder, sig, args):
        from numba.core import cgutils
        out, o_off, m, m_off, m_stride, v, d, b, b_off = args
        out_t, m_t, v_t, b_t = sig.args[0], sig.args[2], sig.args[5], sig.args[7]
        i64, vec_t = ir.IntType(64), ir.VectorType(_DOUBLE, width)
        slots = []
        for _ in range(4 * blocks):
            slot = builder.alloca(vec_t)
            builder.store(ir.Constant(vec_t, [0.0] * width), slot)
            slots.append(slot)

        def add_row(row, j):
            factor = _splat(builder, builder.load(_flat_ptr(context, builder, v_t, v, row)),
                            width)
            base = builder.add(m_off, builder.mul(row, m_stride))
            for blk in range(blocks):
                ptr = _flat_ptr(context, builder, m_t, m,
                                builder.add(base, ir.Constant(i64, blk * width)))
                x = builder.load(_vector_ptr(builder, ptr, width), align=8)
                slot = slots[j * blocks + blk]
                builder.store(builder.fadd(builder.load(slot), builder.fmul(x, factor)), slot)

        blocked = builder.udiv(d, ir.Constant(i64, 4))
        with cgutils.for_range(builder, blocked) as loop:
            for j in range(4):
                add_row(builder.add(builder.mul(loop.index, ir.Constant(i64, 4)),
                                    ir.Constant(i64, j)), 0 * blocks + j)
        tail_start = builder.mul(blocked, ir.Constant(i64, 4))
        with cgutils.for_range(builder, builder.sub(d, tail_start)) as loop:
            add_row(builder.add(tail_start, loop.index), 0)
        for blk in range(blocks):
            s = [builder.load(slots[j * blocks + blk]) for j in range(4)]
            total = builder.fadd(builder.fadd(s[0], s[1]), builder.fadd(s[2], s[3]))
            shift = ir.Constant(i64, blk * width)
            bp = _flat_ptr(context, builder, b_t, b, builder.add(b_off, shift))
            total = builder.fsub(total, builder.load(_vector_ptr(builder, bp, width), align=8))
            op = _flat_ptr(context, builder, out_t, out, builder.add(o_off, shift))
            builder.store(total, _vector_ptr(builder, op, width), align=8)
        return context.get_dummy_value()

    return codegen


def _dot4_variant(width, blocks):
    @intrinsic
    def dot4(typingctx, out, o_off, m, m_off, m_stride, v, d, b, b_off):
        if not _c_doubles(out, m, v, b) or not out.mutable:
            return None
        sig = types.void(out, types.intp, m, types.intp, types.intp, v, types.intp, b,
                         types.intp)
        return sig, _dot4_codegen(width, blocks)

    return dot4


_D8x2 = _dot4_variant(8, 2)
_D8x1 = _dot4_variant(8, 1)
_D4x1 = _dot4_variant(4, 1)
_D1x1 = _dot4_variant(1, 1)


@njit(cache=True, fastmath=False, inline="always")
def dot4_rows(out, width, m, m_off, m_stride, v, d, b, b_off):
    """``out[i] = ((s0 + s1) + (s2 + s3)) - b[b_off + i]`` for i < width, where s_j sums
    ``m[m_off + r*m_stride + i] * v[r]`` over the rows r < d with r = j (mod 4) of the blocked
    part (r < 4 (d // 4)), the remaining rows into s0, each from 0 in increasing r: the
    partial sums stay in registers."""
    i = 0
    while i + 16 <= width:
        _D8x2(out, i, m, m_off + i, m_stride, v, d, b, b_off + i)
        i += 16
    if i + 8 <= width:
        _D8x1(out, i, m, m_off + i, m_stride, v, d, b, b_off + i)
        i += 8
    if i + 4 <= width:
        _D4x1(out, i, m, m_off + i, m_stride, v, d, b, b_off + i)
        i += 4
    while i < width:
        _D1x1(out, i, m, m_off + i, m_stride, v, d, b, b_off + i)
        i += 1


def _prefetcher(locality):
    """An intrinsic issuing ``llvm.prefetch`` with the given locality (3 = L1 ... 0 = none)."""

    @intrinsic
    def prefetch(typingctx, arr, offset, count):
        if not (isinstance(arr, types.Array) and arr.layout == "C"):
            return None
        sig = types.void(arr, types.intp, types.intp)

        def codegen(context, builder, signature, args):
            from numba.core import cgutils
            value, off, cnt = args
            i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                "llvm.prefetch.p0")
            per_line = 8
            lines = builder.udiv(builder.add(cnt, ir.Constant(cnt.type, per_line - 1)),
                                 ir.Constant(cnt.type, per_line))
            with cgutils.for_range(builder, lines) as loop:
                idx = builder.add(off, builder.mul(loop.index, ir.Constant(cnt.type, per_line)))
                ptr = builder.bitcast(_flat_ptr(context, builder, signature.args[0], value, idx),
                                      i8p)
                builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, locality),
                                  ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return sig, codegen

    return prefetch


def _shuffle(builder, a, b, *lanes):
    mask = ir.Constant(ir.VectorType(ir.IntType(32), len(lanes)), list(lanes))
    return builder.shuffle_vector(a, b, mask)


def transpose4_regs(builder, rows):
    """Four ``<4 x double>`` rows -> the four columns (vector j holds lane j of every row)."""
    low01 = _shuffle(builder, rows[0], rows[1], 0, 4, 1, 5)
    high01 = _shuffle(builder, rows[0], rows[1], 2, 6, 3, 7)
    low23 = _shuffle(builder, rows[2], rows[3], 0, 4, 1, 5)
    high23 = _shuffle(builder, rows[2], rows[3], 2, 6, 3, 7)
    return [_shuffle(builder, low01, low23, 0, 1, 4, 5),
            _shuffle(builder, low01, low23, 2, 3, 6, 7),
            _shuffle(builder, high01, high23, 0, 1, 4, 5),
            _shuffle(builder, high01, high23, 2, 3, 6, 7)]


def _transpose4_codegen(context, builder, sig, args):
    dst, d_off, d_stride, src, s_off, s_stride = args
    dst_t, src_t = sig.args[0], sig.args[3]
    rows = []
    for i in range(4):
        off = builder.add(s_off, builder.mul(s_stride, ir.Constant(s_stride.type, i)))
        ptr = _vector_ptr(builder, _flat_ptr(context, builder, src_t, src, off), 4)
        rows.append(builder.load(ptr, align=8))
    for j, col in enumerate(transpose4_regs(builder, rows)):
        off = builder.add(d_off, builder.mul(d_stride, ir.Constant(d_stride.type, j)))
        builder.store(col, _vector_ptr(builder, _flat_ptr(context, builder, dst_t, dst, off), 4),
                      align=8)
    return context.get_dummy_value()


@intrinsic
def _transpose4(typingctx, dst, d_off, d_stride, src, s_off, s_stride):
    """``dst[d_off + j*d_stride + i] = src[s_off + i*s_stride + j]`` for i, j < 4."""
    if not _c_doubles(dst, src) or getattr(dst, "mutable", True) is False:
        return None
    sig = types.void(dst, types.intp, types.intp, src, types.intp, types.intp)
    return sig, _transpose4_codegen


@njit(cache=True, fastmath=False, inline="always")
def transpose_into(dst, src, c):
    """``dst[p, k] = src[c, k, p]``: block c of the (N, rows, cols) ``src`` transposed into
    the (cols, rows) ``dst`` (both C-contiguous float64), in 4 x 4 tiles in vector registers,
    the edges element by element. A copy, so no bits change."""
    rows, cols = src.shape[1], src.shape[2]
    k4, p4 = rows - rows % 4, cols - cols % 4
    base = c * rows * cols
    for k in range(0, k4, 4):
        for p in range(0, p4, 4):
            _transpose4(dst, p * rows + k, rows, src, base + k * cols + p, cols)
    for k in range(k4):
        for p in range(p4, cols):
            dst[p, k] = src[c, k, p]
    for k in range(k4, rows):
        for p in range(cols):
            dst[p, k] = src[c, k, p]


# prefetch_l2(arr, offset, count): software prefetch (read, into L2 and the levels below) of
# ``count`` elements of the C-contiguous float64 array ``arr`` from flat element ``offset``,
# one hint per 64-byte line. A hint only: no result, and no fault on any address.
prefetch_l2 = _prefetcher(2)
# prefetch_l1(arr, offset, count): the same into L1 (the next participant's data, in the fused
# quadratic loops: at p = 0.1 their first loads otherwise wait for L2)
prefetch_l1 = _prefetcher(3)
