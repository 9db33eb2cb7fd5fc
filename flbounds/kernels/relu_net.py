r"""Mini-batch gradients and SGD steps of many small ReLU networks (fastmath off).

M independent models (rows of ``theta``, (M, P)), each a fully connected ReLU network with
a softmax cross-entropy loss, each with its own data (X (M, n, d_0), labels y (M, n)) and
mini-batch (idx (M, b), rows of its data). Layer l's weight is the (fan_in, fan_out)
row-major block ``theta[m, w_l : w_l + fan_in fan_out]``, its bias the fan_out entries right
after it (``layers`` (L, 3) rows ``[w_l, fan_in, fan_out]``). With
:math:`h_0 = x`, :math:`h_{l+1} = \sigma(h_l W_l + b_l)` (:math:`\sigma` = ReLU except on the
last layer) and the loss :math:`-\frac1b\sum_i \log \mathrm{softmax}(h_L)_{i, y_i}`, one
model's gradient is the textbook backward pass: :math:`\delta_L = (\mathrm{softmax}(h_L) -
e_y)/b`, :math:`\nabla W_l = h_l^\top\delta_l`, :math:`\nabla b_l = \sum_i \delta_{l,i}`,
:math:`\delta_{l} = (\delta_{l+1} W_l^\top) \odot [h_l > 0]`.

For the sizes of the FedALS experiment (20-64-64-10, b = 16, 100 models) the products are
16 x 64 by 64 x 64 and smaller: a batched NumPy ``matmul`` spends as much time between its
BLAS calls (the bias, ReLU and softmax passes over every model's activations, and the
gradient array written out and read back for the step) as in them. Here one call runs one
model after another with its activations, deltas and gradient in a few kilobytes of scratch,
and :func:`sgd_step` moves the model right after its gradient (never writing the gradient
out). The products are :func:`madd_block`: blocks of up to 4 output rows by 16 lanes held in
vector registers through one loop over the summed index, each output a chain of fused
multiply-adds (``llvm.fma``, one rounding each, the same bits on every machine) in the
order of that index. Each activation row carries a trailing 1, so a layer is one product
with the (fan_in + 1) x fan_out block of its weight and bias, and so is its gradient.

Bits: each sum starts from 0 and adds its terms in index order, the bias (times 1) last;
a ReLU mask multiplies (``delta * (h > 0)``); ``softmax = e_j / sum_j e_j`` with
:math:`e_j = \exp(z_j - \max z)`; the step is ``theta - step * grad`` (a multiply then a
subtraction, as :func:`flbounds.algorithms.fedals.fedals` takes it), so :func:`sgd_step`
gives the same numbers as :func:`gradients` followed by that step. The numbers differ from
a BLAS product in rounding only (``tests/flbounds/kernels/test_relu_net.py`` against a NumPy
twin). No loop branches on the data (a ReLU mask as a branch, mispredicted half the time,
cost more than the products).
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from flbounds.kernels._simd import (
    _DOUBLE,
    _LANES,
    _block_load,
    _block_ptr,
    _block_slots,
    _block_store,
    _c_doubles,
    _flat_ptr,
    _lane_mask,
    _splat,
)

_I64 = ir.IntType(64)


def _block_codegen(rows, blocks):
    """LLVM body of one :func:`madd_block` pass: ``rows`` x ``blocks`` vectors of partial
    sums from 0 in registers, the last vector masked to ``left`` lanes; stores max(sum, 0)
    where the first argument (``relu``) is true, else the sum."""

    def codegen(context, builder, sig, args):
        relu, acc, a_off, a_rs, m, m_off, m_rs, v, v_off, v_rs, v_ts, count, left = args
        acc_t, m_t, v_t = sig.args[1], sig.args[4], sig.args[7]
        vec_t = ir.VectorType(_DOUBLE, _LANES)
        zero = ir.Constant(vec_t, [0.0] * _LANES)
        fma = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vec_t, [vec_t] * 3), f"llvm.fma.v{_LANES}f64")
        mask = _lane_mask(builder, (blocks - 1) * _LANES, left)
        slots = _block_slots(context, builder, acc_t, acc, a_off, a_rs, rows, blocks,
                             lambda ptr, b: zero)
        with cgutils.for_range(builder, count) as loop:
            base = builder.add(m_off, builder.mul(loop.index, m_rs))
            xs = [_block_load(builder, _block_ptr(context, builder, m_t, m, base, b), b, blocks,
                              mask) for b in range(blocks)]
            at = builder.add(v_off, builder.mul(loop.index, v_ts))
            for r in range(rows):
                pos = builder.add(at, builder.mul(v_rs, ir.Constant(_I64, r)))
                factor = _splat(builder, builder.load(_flat_ptr(context, builder, v_t, v, pos)),
                                _LANES)
                for b in range(blocks):
                    slot = slots[r * blocks + b][1]
                    builder.store(builder.call(fma, [xs[b], factor, builder.load(slot)]), slot)
        for ptr, slot, b in slots:
            total = builder.load(slot)
            # with relu, x < 0 -> 0 (a NaN stays NaN, as numpy's maximum keeps it): a select
            # on the flag once per stored vector, no branch
            clipped = builder.select(builder.fcmp_ordered("<", total, zero), zero, total)
            total = builder.select(relu, clipped, total)
            _block_store(builder, total, ptr, b, blocks, mask)
        return context.get_dummy_value()

    return codegen


def _block(rows, blocks):
    @intrinsic
    def block(typingctx, relu, acc, a_off, a_rs, m, m_off, m_rs, v, v_off, v_rs, v_ts, count,
              left):
        if not _c_doubles(acc, m, v) or getattr(acc, "mutable", True) is False:
            return None
        sig = types.void(types.boolean, acc, types.intp, types.intp, m, types.intp, types.intp,
                         v, types.intp, types.intp, types.intp, types.intp, types.intp)
        return sig, _block_codegen(rows, blocks)

    return block


# numba resolves a call through a tuple of intrinsics only with a literal index: name them
(_B11, _B12), (_B21, _B22), (_B31, _B32), (_B41, _B42) = (
    tuple(_block(r, b) for b in (1, 2)) for r in (1, 2, 3, 4))


@njit(cache=True, fastmath=False, inline="always")
def _pass(relu, n, two, a):
    """One pass of ``n`` rows (1..4) by one (``two`` False) or two vectors, ``a`` the
    intrinsic's arguments after ``relu``."""
    if n == 4:
        _B42(relu, *a) if two else _B41(relu, *a)
    elif n == 3:
        _B32(relu, *a) if two else _B31(relu, *a)
    elif n == 2:
        _B22(relu, *a) if two else _B21(relu, *a)
    else:
        _B12(relu, *a) if two else _B11(relu, *a)


@njit(cache=True, fastmath=False)
def madd_block(relu, acc, a_off, a_rs, n_rows, width, m, m_off, m_rs, v, v_off, v_rs, v_ts,
               count):
    """For r < n_rows, i < width: ``acc[a_off + r a_rs + i]`` = the sum from 0 over
    t < count, in increasing t, of ``m[m_off + t m_rs + i] * v[v_off + r v_rs + t v_ts]``,
    each term added by a fused multiply-add; with ``relu``, max(sum, 0). Flat offsets into
    C-contiguous float64 arrays, not bounds-checked (the callers own that)."""
    for r0 in range(0, n_rows, 4):
        n = min(4, n_rows - r0)
        for i in range(0, width, 2 * _LANES):
            left = width - i
            _pass(relu, n, left > _LANES,
                  (acc, a_off + r0 * a_rs + i, a_rs, m, m_off + i, m_rs, v, v_off + r0 * v_rs,
                   v_rs, v_ts, count, left))


@njit(cache=True, fastmath=False)
def _offsets(layers, b):
    """Flat offsets of the activations h_0 .. h_L in one scratch array, each b rows of its
    width and a column of ones (the bias row's factor), and the widest layer."""
    n_layers = layers.shape[0]
    off = np.zeros(n_layers + 2, dtype=np.int64)
    off[1] = b * (layers[0, 1] + 1)
    widest = layers[0, 1]
    for l in range(n_layers):
        off[l + 2] = off[l + 1] + b * (layers[l, 2] + 1)
        widest = max(widest, layers[l, 2])
    return off, widest


@njit(cache=True, fastmath=False)
def _forward(theta, m, X, idx, layers, acts, off):
    """h_0 = the batch rows of model m's data, then every layer (logits last): row i of
    h_{l+1} is [h_l[i], 1] times the (fan_in + 1) x fan_out block of W_l and b_l."""
    b, d0 = idx.shape[1], X.shape[2]
    n_params = theta.shape[1]
    for i in range(b):
        row = idx[m, i]
        for k in range(d0):
            acts[i * (d0 + 1) + k] = X[m, row, k]
    n_layers = layers.shape[0]
    for l in range(n_layers):
        w, fan_in, fan_out = layers[l, 0], layers[l, 1], layers[l, 2]
        madd_block(l < n_layers - 1, acts, off[l + 1], fan_out + 1, b, fan_out,
                   theta, m * n_params + w, fan_out, acts, off[l], fan_in + 1, 1, fan_in + 1)


@njit(cache=True, fastmath=False)
def _output_delta(acts, off, y, m, idx, n_classes, delta, delta_t):
    """(softmax(h_L) - e_y) / b, row-major (b, C) and transposed (C, b)."""
    b = idx.shape[1]
    top_off = off[off.shape[0] - 2]
    for i in range(b):
        z = top_off + i * (n_classes + 1)
        top = acts[z]
        for j in range(1, n_classes):
            top = max(top, acts[z + j])
        total = 0.0
        for j in range(n_classes):
            e = np.exp(acts[z + j] - top)
            delta[i * n_classes + j] = e
            total += e
        label = y[m, idx[m, i]]
        for j in range(n_classes):
            p = delta[i * n_classes + j] / total
            if j == label:
                p -= 1.0
            p /= b
            delta[i * n_classes + j] = p
            delta_t[j * b + i] = p


@njit(cache=True, fastmath=False)
def _model_gradient(theta, m, X, y, idx, layers, grad, work):
    """Model m's gradient into ``grad`` (P,), ``work`` = (activations, delta, its transpose,
    the next delta's transpose, the activation offsets)."""
    acts, delta, delta_t, back_t, off = work
    b = idx.shape[1]
    n_params = theta.shape[1]
    n_layers = layers.shape[0]
    _forward(theta, m, X, idx, layers, acts, off)
    _output_delta(acts, off, y, m, idx, layers[n_layers - 1, 2], delta, delta_t)
    for l in range(n_layers - 1, -1, -1):
        w, fan_in, fan_out = layers[l, 0], layers[l, 1], layers[l, 2]
        # [grad W; grad b][k, j] = sum_i [h_l, 1][i, k] delta[i, j]
        madd_block(False, grad, w, fan_out, fan_in + 1, fan_out, delta, 0, fan_out, acts,
                   off[l], 1, fan_in + 1, b)
        if l == 0:
            break
        # next delta^T[k, i] = sum_j W[k, j] delta^T[j, i], then the ReLU mask of h_l
        madd_block(False, back_t, 0, b, fan_in, b, delta_t, 0, b, theta, m * n_params + w,
                   fan_out, 1, fan_out)
        h = off[l]
        for i in range(b):     # times the mask as a number: no branch to mispredict
            for k in range(fan_in):
                d = back_t[k * b + i] * (acts[h + i * (fan_in + 1) + k] > 0.0)
                delta_t[k * b + i] = d
                delta[i * fan_in + k] = d


@njit(cache=True, fastmath=False)
def _workspace(layers, b):
    off, widest = _offsets(layers, b)
    acts = np.ones(off[off.shape[0] - 1])
    return acts, np.zeros(b * widest), np.zeros(b * widest), np.zeros(b * widest), off


@njit(cache=True, fastmath=False)
def gradients(theta, X, y, idx, layers, grad):
    """``grad[m]`` = the gradient of model m's mean cross-entropy on its batch ``idx[m]``
    (module docstring); theta and grad (M, P), X (M, n, d_0), y and idx int64."""
    work = _workspace(layers, idx.shape[1])
    for m in range(theta.shape[0]):
        _model_gradient(theta, m, X, y, idx, layers, grad[m], work)


@njit(cache=True, fastmath=False)
def _steps(theta, X, y, idx, layers, step, c_k, c):
    """Every model's step right after its gradient; along ``(grad - c_k[m]) + c[m // K]``
    (K = rows of theta per row of c) when c has rows, else along the gradient."""
    work = _workspace(layers, idx.shape[1])
    grad = np.empty(theta.shape[1])
    per = theta.shape[0] // max(c.shape[0], 1)
    for m in range(theta.shape[0]):
        _model_gradient(theta, m, X, y, idx, layers, grad, work)
        row = theta[m]
        if c.shape[0] == 0:
            for p in range(row.shape[0]):
                row[p] = row[p] - step * grad[p]
        else:
            own, server = c_k[m], c[m // per]
            for p in range(row.shape[0]):
                row[p] = row[p] - step * ((grad[p] - own[p]) + server[p])


@njit(cache=True, fastmath=False)
def sgd_step(theta, X, y, idx, layers, step):
    """``theta[m] = theta[m] - step * grad_m`` in place for every model, each right after
    its gradient (the numbers of :func:`gradients` followed by that step)."""
    none = np.empty((0, theta.shape[1]))
    _steps(theta, X, y, idx, layers, step, none, none)


@njit(cache=True, fastmath=False)
def corrected_sgd_step(theta, X, y, idx, layers, step, c_k, c):
    """``theta[m] = theta[m] - step * ((grad_m - c_k[m]) + c[m // K])`` in place, K = the
    rows of theta per row of c: the local step with control variates (client variates
    ``c_k`` (M, P), server variates ``c`` (M / K, P)), each model moved right after its
    gradient; the numbers of :func:`gradients` followed by that step as written (the
    difference, the sum, the product, the subtraction, each rounded)."""
    _steps(theta, X, y, idx, layers, step, c_k, c)
