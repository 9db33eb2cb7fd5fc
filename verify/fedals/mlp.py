r"""A small ReLU multilayer perceptron with hand-written forward and backward passes (numpy).

Parameters of M independent models are rows of one (M, P) array (M = replicates x clients);
each layer's weight and bias are views into it. The loss is the mean softmax cross-entropy

.. math:: \ell(\theta; X, y) = -\frac1b\sum_{i=1}^b \log\mathrm{softmax}(f_\theta(x_i))_{y_i},
    \qquad f_\theta(x) = W_L^\top\sigma(\cdots\sigma(W_1^\top x + b_1)\cdots) + b_L,

with :math:`\sigma` = ReLU. Used for the FedALS experiment of spec V9 (20-64-64-10).

Training takes its mini-batch gradients from the compiled kernel
:mod:`flbounds.kernels.relu_net` (:func:`batch_gradients`, and :func:`sgd_step` with the
step fused in): the same network and loss, summed in a fixed order with fused multiply-adds,
so equal to :func:`loss_and_grad` (this module's NumPy form, its reference) up to rounding.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import numpy as np

from flbounds.kernels import relu_net

DEFAULT_SIZES = (20, 64, 64, 10)


class Layer(NamedTuple):
    """Slices of one layer's weight (fan_in x fan_out, row-major) and bias in the flat vector."""

    weight: slice
    bias: slice
    fan_in: int
    fan_out: int


def layout(sizes=DEFAULT_SIZES) -> tuple[Layer, ...]:
    """Layers of the flat parameter vector, in depth order."""
    return _layout(tuple(int(s) for s in sizes))


@cache
def _layout(sizes: tuple[int, ...]) -> tuple[Layer, ...]:
    # every forward and backward pass asks: built once per architecture
    if len(sizes) < 2 or min(sizes) < 1:
        raise ValueError("sizes must list at least two positive layer widths")
    layers, start = [], 0
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        w = slice(start, start + fan_in * fan_out)
        b = slice(w.stop, w.stop + fan_out)
        layers.append(Layer(w, b, fan_in, fan_out))
        start = b.stop
    return tuple(layers)


def n_params(sizes=DEFAULT_SIZES) -> int:
    return layout(sizes)[-1].bias.stop


def layer_slices(sizes=DEFAULT_SIZES) -> list[slice]:
    """One contiguous slice (weight then bias) per layer."""
    return [slice(lay.weight.start, lay.bias.stop) for lay in layout(sizes)]


def init_params(rng: np.random.Generator, n_models: int, sizes=DEFAULT_SIZES) -> np.ndarray:
    """He-normal weights, zero biases, shape (n_models, P)."""
    theta = np.zeros((n_models, n_params(sizes)))
    for lay in layout(sizes):
        std = np.sqrt(2.0 / lay.fan_in)
        theta[:, lay.weight] = std * rng.standard_normal((n_models, lay.fan_in * lay.fan_out))
    return theta


def _weights(theta, lay):
    return theta[..., lay.weight].reshape(*theta.shape[:-1], lay.fan_in, lay.fan_out)


def _check(theta, X, y, sizes):
    theta = np.asarray(theta, dtype=float)
    X = np.asarray(X, dtype=float)
    if theta.shape[-1] != n_params(sizes):
        raise ValueError(f"theta must have {n_params(sizes)} parameters on its last axis")
    if X.shape[:-2] != theta.shape[:-1] or X.shape[-1] != sizes[0]:
        raise ValueError("X must be (..., batch, n_inputs) with theta's leading axes")
    if y is not None:
        y = np.asarray(y)
        if y.shape != X.shape[:-1] or y.min() < 0 or y.max() >= sizes[-1]:
            raise ValueError("y must be integer labels in [0, n_classes) shaped like X[..., 0]")
    return theta, X, y


def forward(theta, X, sizes=DEFAULT_SIZES):
    """Logits (..., b, n_classes) and the list of layer inputs (for the backward pass)."""
    theta, X, _ = _check(theta, X, None, sizes)
    acts, h = [], X
    layers = layout(sizes)
    for i, lay in enumerate(layers):
        acts.append(h)
        h = h @ _weights(theta, lay)
        h += theta[..., None, lay.bias]      # in place: the numbers of h @ W + b, one array
        if i < len(layers) - 1:
            np.maximum(h, 0.0, out=h)
    return h, acts


def _log_softmax(logits):
    top = logits.max(axis=-1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))


def loss_and_grad(theta, X, y, sizes=DEFAULT_SIZES):
    """Mean cross-entropy (...,) and its gradient (..., P) by backpropagation."""
    theta, X, y = _check(theta, X, y, sizes)
    logits, acts = forward(theta, X, sizes)
    logp = _log_softmax(logits)
    b = X.shape[-2]
    loss = -np.take_along_axis(logp, y[..., None], axis=-1)[..., 0].mean(axis=-1)
    delta = np.exp(logp)
    np.put_along_axis(delta, y[..., None], np.take_along_axis(delta, y[..., None], -1) - 1, -1)
    delta /= b
    grad = np.empty_like(theta)
    layers = layout(sizes)
    for i in range(len(layers) - 1, -1, -1):
        lay, h = layers[i], acts[i]
        # written straight into the gradient's views (the same products and sums)
        np.matmul(h.swapaxes(-1, -2), delta, out=_weights(grad, lay))
        np.sum(delta, axis=-2, out=grad[..., lay.bias])
        if i > 0:
            delta = delta @ _weights(theta, lay).swapaxes(-1, -2)
            delta *= h > 0
    return loss, grad


def loss_accuracy(theta, X, y, sizes=DEFAULT_SIZES):
    """Mean cross-entropy and accuracy over the samples (..., n) for each model (...,)."""
    theta, X, y = _check(theta, X, y, sizes)
    logits, _ = forward(theta, X, sizes)
    logp = _log_softmax(logits)
    loss = -np.take_along_axis(logp, y[..., None], axis=-1)[..., 0].mean(axis=-1)
    acc = (np.argmax(logits, axis=-1) == y).mean(axis=-1)
    return loss, acc


class BatchData(NamedTuple):
    """Checked training data of M models for the kernel: X (M, n, d_0) float64, y (M, n)
    int64 (C-contiguous), the leading axes they came with, and the layers' rows
    ``[weight offset, fan_in, fan_out]`` (each bias right after its weight)."""

    X: np.ndarray
    y: np.ndarray
    lead: tuple
    sizes: tuple
    layers: np.ndarray


def batch_data(X, y, sizes=DEFAULT_SIZES) -> BatchData:
    """The data (..., n, d_0) and labels (..., n) of every model, checked once for the
    training loop (:func:`batch_gradients`, :func:`sgd_step`)."""
    sizes = tuple(int(s) for s in sizes)
    X = np.asarray(X, dtype=float)
    if X.ndim < 2 or X.shape[-1] != sizes[0] or not np.all(np.isfinite(X)):
        raise ValueError("X must be a finite (..., n, n_inputs) array")
    y = np.asarray(y)
    if y.shape != X.shape[:-1] or not np.issubdtype(y.dtype, np.integer) or \
            y.min() < 0 or y.max() >= sizes[-1]:
        raise ValueError("y must be integer labels in [0, n_classes) shaped like X[..., 0]")
    lead, n = X.shape[:-2], X.shape[-2]
    layers = np.array([[lay.weight.start, lay.fan_in, lay.fan_out] for lay in layout(sizes)],
                      dtype=np.int64)
    return BatchData(np.ascontiguousarray(X.reshape(-1, n, sizes[0])),
                     np.ascontiguousarray(y.reshape(-1, n), dtype=np.int64), lead, sizes,
                     layers)


def _flat_batch(theta, data: BatchData, idx):
    if theta.shape != (*data.lead, n_params(data.sizes)):
        raise ValueError(f"theta must be {(*data.lead, n_params(data.sizes))}, the data's "
                         "leading axes and the parameters")
    idx = np.asarray(idx)
    if idx.shape[:-1] != data.lead or idx.shape[-1] < 1 or \
            not np.issubdtype(idx.dtype, np.integer):
        raise ValueError("idx must be integer row indices (..., b) with the data's leading axes")
    if idx.min() < 0 or idx.max() >= data.X.shape[1]:
        raise ValueError(f"idx must lie in [0, {data.X.shape[1]}) (the rows of each dataset)")
    return np.ascontiguousarray(idx.reshape(-1, idx.shape[-1]), dtype=np.int64)


def batch_gradients(theta, data: BatchData, idx) -> np.ndarray:
    """Gradients (..., P) of every model's mean cross-entropy on its rows ``idx`` (..., b)
    of its data, by the compiled kernel (equal to :func:`loss_and_grad` on those rows up to
    rounding)."""
    theta = np.asarray(theta, dtype=float)
    flat_idx = _flat_batch(theta, data, idx)
    params = np.ascontiguousarray(theta).reshape(-1, theta.shape[-1])
    grad = np.empty_like(params)
    relu_net.gradients(params, data.X, data.y, flat_idx, data.layers, grad)
    return grad.reshape(theta.shape)


def sgd_step(theta: np.ndarray, data: BatchData, idx, step: float, c_k=None, c=None) -> None:
    """``theta <- theta - step * grad`` in place (theta a C-contiguous float64 array): the
    numbers of :func:`batch_gradients` followed by that step, each model moved right after
    its gradient. With control variates ``c_k`` (theta's shape) and ``c`` (theta's shape
    without the clients' axis, the second to last), the step is along ``(grad - c_k) + c``,
    the numbers of that expression in NumPy."""
    if not (isinstance(theta, np.ndarray) and theta.dtype == np.float64
            and theta.flags.c_contiguous and theta.flags.writeable):
        raise ValueError("theta must be a writeable C-contiguous float64 array")
    flat_idx = _flat_batch(theta, data, idx)
    flat = theta.reshape(-1, theta.shape[-1])
    if (c_k is None) != (c is None):
        raise ValueError("c_k and c must be given together")
    if c_k is None:
        relu_net.sgd_step(flat, data.X, data.y, flat_idx, data.layers, float(step))
        return
    c_k, c = np.asarray(c_k, dtype=float), np.asarray(c, dtype=float)
    if theta.ndim < 2 or c_k.shape != theta.shape or \
            c.shape != theta.shape[:-2] + theta.shape[-1:]:
        raise ValueError("c_k must have theta's shape and c theta's without its clients' axis")
    relu_net.corrected_sgd_step(flat, data.X, data.y, flat_idx, data.layers, float(step),
                                np.ascontiguousarray(c_k).reshape(flat.shape),
                                np.ascontiguousarray(c).reshape(-1, theta.shape[-1]))
