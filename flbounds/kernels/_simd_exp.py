r"""The logistic sigmoid in vector code: one exponential for every lane, no call to libm.

A logistic gradient needs :math:`\sigma(t) = 1/(1 + e^{-t})` for each of the client's n samples;
``math.exp`` is a scalar call (about 6 ns each, a third of a gradient at n = 20, d = 50), so
the weights are computed here, eight samples per vector, by one exponential written out in
LLVM IR (:func:`_exp_nonpositive`):

- :math:`x = -|t| \le 0` is split as :math:`x = k \ln 2 + r` with :math:`k = \mathrm{rint}(x
  \log_2 e)` and :math:`r = (x - k\,\ln 2_{hi}) - k\,\ln 2_{lo}` (``ln 2_hi`` has 33
  significant bits, so :math:`k \ln 2_{hi}` is exact for :math:`|k| \le 1076`),
  :math:`|r| \le 0.347`;
- :math:`e^r` is the Taylor polynomial of degree 13 (truncation below
  :math:`4\cdot 10^{-18}` relative): its terms from :math:`r^4` on by Estrin's scheme, then
  four Horner steps (:func:`_polynomial`; against one Horner chain, half the dependent
  operations, the same accuracy: 95.1% of a test sample exact either way, the weights of
  n = 20 samples 63.5 -> 57.5 ns);
- :math:`2^k` is built from its exponent bits in two factors :math:`2^{k_1} 2^{k_2}`,
  :math:`k_1 = \lfloor k/2 \rfloor`, so that results down to the subnormals (x > -745.2) round
  once, in the last product; below x = -746 the result is 0 (without computing a subnormal
  product); NaN stays NaN.

Every lane is the same sequence of IEEE operations (multiply, add, ``rint``, integer ops; no
contraction, no reassociation), so the scalar :func:`expit` (one lane) and the vector weights
:func:`logistic_weights` give the same bits for the same input, whatever the vector width;
the result is within 2 ulp of ``math.exp`` (``tests/flbounds/kernels/test_expit_bits.py``).
"""

import math

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from flbounds.kernels._simd import (
    _DOUBLE,
    _LANES,
    _c_doubles,
    _flat_ptr,
    _lane_mask,
    _masked_load,
    _masked_store,
    _splat,
    _vector_ptr,
)

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01      # 0x3fe62e42fee00000: the low 20 bits are zero
_LN2_LO = 1.90821492927058770002e-10
_COEFFS = tuple(1.0 / math.factorial(i) for i in range(14))
_HORNER = 4     # the last Horner steps of the polynomial (see _polynomial)
#: below this the exponential is 0 in double precision (exp(-745.14) rounds to 0)
_UNDERFLOW = -746.0


def _const(value, width, ty=_DOUBLE):
    return ir.Constant(ir.VectorType(ty, width), [value] * width)


def _call(builder, name, value):
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(value.type, [value.type]),
                                        name)
    return builder.call(fn, [value])


def _two_to(builder, k, width):
    """:math:`2^k` for integer lanes ``k`` in [-1022, 1023], from the exponent bits."""
    i64 = ir.IntType(64)
    bits = builder.shl(builder.add(k, _const(1023, width, i64)), _const(52, width, i64))
    return builder.bitcast(bits, ir.VectorType(_DOUBLE, width))


def _estrin(builder, r, coeffs, width):
    r""":math:`\sum_i c_i r^i` by Estrin's scheme: pairs :math:`c_{2i} + c_{2i+1} r`, then
    pairs of those with :math:`r^2`, :math:`r^4`, ... (depth log2 of the degree)."""
    terms = [_const(c, width) for c in coeffs]
    power = r
    while len(terms) > 1:
        paired = [builder.fadd(terms[i], builder.fmul(terms[i + 1], power))
                  for i in range(0, len(terms) - 1, 2)]
        terms = paired + terms[len(terms) - len(terms) % 2:]
        power = builder.fmul(power, power)
    return terms[0]


def _polynomial(builder, r, width):
    r""":math:`\sum_{i \le 13} r^i/i!`: the terms from :math:`r^{H}` on by Estrin's scheme
    (:func:`_estrin`), then the last H Horner steps of a chain of degree 13, whose roundings are
    the ones that reach the result: the terms inside are below :math:`r^H/H! \le 6\cdot
    10^{-4}` of it. Half the dependent operations of the full Horner chain."""
    poly = _estrin(builder, r, _COEFFS[_HORNER:], width)
    for c in reversed(_COEFFS[:_HORNER]):
        poly = builder.fadd(builder.fmul(poly, r), _const(c, width))
    return poly


def _exp_nonpositive(builder, x, width):
    """IR for :math:`e^x`, lane by lane, for ``x <= 0`` (or NaN): see the module docstring."""
    i64 = ir.IntType(64)
    low = builder.fcmp_ordered("<", x, _const(_UNDERFLOW, width))
    # lanes below the underflow compute e^0 (their result is replaced by 0 below): clamping
    # them to the threshold instead would make every one a subnormal product, which the
    # hardware runs a hundred times slower (a diverging run's margins are all out there)
    xc = builder.select(low, _const(0.0, width), x)
    k = _call(builder, f"llvm.rint.v{width}f64", builder.fmul(xc, _const(_LOG2E, width)))
    r = builder.fsub(builder.fsub(xc, builder.fmul(k, _const(_LN2_HI, width))),
                     builder.fmul(k, _const(_LN2_LO, width)))
    poly = _polynomial(builder, r, width)
    # NaN lanes: any exponent (the polynomial is NaN already); keeps fptosi defined
    nan = builder.fcmp_unordered("uno", k, k)
    ki = builder.fptosi(builder.select(nan, _const(0.0, width), k), ir.VectorType(i64, width))
    k1 = builder.ashr(ki, _const(1, width, i64))
    scaled = builder.fmul(builder.fmul(poly, _two_to(builder, k1, width)),
                          _two_to(builder, builder.sub(ki, k1), width))
    return builder.select(low, _const(0.0, width), scaled)


def _expit_lanes(builder, t, width):
    """IR for :math:`\\sigma(t)`: ``e = exp(-|t|)``, then ``1/(1 + e)`` for t >= 0 and
    ``e/(1 + e)`` below (no overflow for any t; the sign only selects the numerator)."""
    e = _exp_nonpositive(builder, builder.fneg(_call(builder, f"llvm.fabs.v{width}f64", t)),
                         width)
    positive = builder.fcmp_ordered(">=", t, _const(0.0, width))
    numerator = builder.select(positive, _const(1.0, width), e)
    return builder.fdiv(numerator, builder.fadd(_const(1.0, width), e))


@intrinsic
def _expit1(typingctx, t):
    if t != types.float64:
        return None

    def codegen(context, builder, sig, args):
        vec_t = ir.VectorType(_DOUBLE, 1)
        lane = builder.insert_element(ir.Constant(vec_t, ir.Undefined), args[0],
                                      ir.Constant(ir.IntType(32), 0))
        return builder.extract_element(_expit_lanes(builder, lane, 1),
                                       ir.Constant(ir.IntType(32), 0))

    return types.float64(types.float64), codegen


@njit(cache=True, fastmath=False, inline="always")
def expit(t):
    """:math:`1/(1 + e^{-t})` for a float64 ``t``: one lane of :func:`logistic_weights`."""
    return _expit1(t)


def _weights_codegen(per_sample):
    """LLVM body of :func:`logistic_weights` (``per_sample``: one label per lane, the sums
    ``n`` apart, written over the first sum) and of :func:`block_weights` (one label for all
    lanes, the sums ``stride`` apart, written at ``dst``)."""

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        if per_sample:
            acc, count, labels, l_off = args
            stride, dst = count, ir.Constant(i64, 0)
        else:
            acc, stride, count, label, dst = args
        acc_t = sig.args[0]
        blocks = builder.udiv(builder.add(count, ir.Constant(i64, _LANES - 1)),
                              ir.Constant(i64, _LANES))
        with cgutils.for_range(builder, blocks) as loop:
            k = builder.mul(loop.index, ir.Constant(i64, _LANES))
            mask = _lane_mask(builder, 0, builder.sub(count, k))

            def load(ty, arr, off):
                ptr = _vector_ptr(builder, _flat_ptr(context, builder, ty, arr, off), _LANES)
                return _masked_load(builder, ptr, mask)

            sums = [load(acc_t, acc, builder.add(k, builder.mul(stride, ir.Constant(i64, j))))
                    for j in range(4)]
            margin = builder.fadd(builder.fadd(sums[0], sums[1]),
                                  builder.fadd(sums[2], sums[3]))
            if per_sample:
                y = load(sig.args[2], labels, builder.add(l_off, k))
            else:
                y = _splat(builder, label, _LANES)
            minus_y = builder.fneg(y)
            weight = builder.fmul(minus_y, _expit_lanes(builder, builder.fmul(minus_y, margin),
                                                        _LANES))
            out = _flat_ptr(context, builder, acc_t, acc, builder.add(dst, k))
            _masked_store(builder, weight, _vector_ptr(builder, out, _LANES), mask)
        return context.get_dummy_value()

    return codegen


@intrinsic
def logistic_weights(typingctx, acc, n, labels, l_off):
    """``acc[k] = -y_k * expit(-y_k * m_k)`` for k < n, with ``y_k = labels[l_off + k]`` and
    the margin ``m_k = (acc[k] + acc[n + k]) + (acc[2n + k] + acc[3n + k])`` (the four partial
    sums of :func:`~flbounds.kernels._simd_samples.sample_sums4`); eight samples per vector,
    the last vector masked. Arrays C-contiguous float64, offsets flat and not bounds-checked."""
    if not _c_doubles(acc, labels) or getattr(acc, "mutable", True) is False:
        return None
    return types.void(acc, types.intp, labels, types.intp), _weights_codegen(True)


@intrinsic
def block_weights(typingctx, acc, stride, count, y, dst):
    """``acc[dst + j] = -y * expit(-y * m_j)`` for j < count, with the margin
    ``m_j = (acc[j] + acc[stride + j]) + (acc[2 stride + j] + acc[3 stride + j])``: one sample
    of label y for ``count`` columns (replicates) of a block gradient, eight per vector."""
    if not _c_doubles(acc) or getattr(acc, "mutable", True) is False or y != types.float64:
        return None
    return (types.void(acc, types.intp, types.intp, types.float64, types.intp),
            _weights_codegen(False))
