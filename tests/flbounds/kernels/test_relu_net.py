"""The ReLU-network kernel against a NumPy twin: gradients to rounding, and the fused SGD
step equal bit for bit to the gradients followed by the step."""

import numpy as np
import pytest

from flbounds.kernels import relu_net

#: a sum of t products, each rounded once (fused multiply-add) here and twice in the twin:
#: relative differences of a few units of roundoff times the terms' cancellation
RTOL, ATOL = 1e-12, 1e-15


def _layers(sizes):
    rows, start = [], 0
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        rows.append([start, fan_in, fan_out])
        start += (fan_in + 1) * fan_out
    return np.array(rows, dtype=np.int64), start


def _twin(theta, X, y, idx, sizes):
    """Loss gradients of each model on its batch: the textbook NumPy backward pass."""
    layers, _ = _layers(sizes)
    grads = np.zeros_like(theta)
    for m in range(theta.shape[0]):
        h = [X[m, idx[m]]]
        weights = []
        for i, (w, fan_in, fan_out) in enumerate(layers):
            W = theta[m, w:w + fan_in * fan_out].reshape(fan_in, fan_out)
            b = theta[m, w + fan_in * fan_out:w + (fan_in + 1) * fan_out]
            weights.append(W)
            z = h[-1] @ W + b
            h.append(np.maximum(z, 0.0) if i < len(layers) - 1 else z)
        z = h[-1] - h[-1].max(axis=1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        delta = p.copy()
        delta[np.arange(len(idx[m])), y[m, idx[m]]] -= 1.0
        delta /= len(idx[m])
        for i in range(len(layers) - 1, -1, -1):
            w, fan_in, fan_out = layers[i]
            grads[m, w:w + fan_in * fan_out] = (h[i].T @ delta).ravel()
            grads[m, w + fan_in * fan_out:w + (fan_in + 1) * fan_out] = delta.sum(axis=0)
            delta = (delta @ weights[i].T) * (h[i] > 0)
    return grads


def _instance(seed, sizes, n_models, n_rows, batch):
    rng = np.random.default_rng(seed)
    layers, n_params = _layers(sizes)
    theta = rng.standard_normal((n_models, n_params)) / np.sqrt(max(sizes))
    X = rng.standard_normal((n_models, n_rows, sizes[0]))
    y = rng.integers(0, sizes[-1], size=(n_models, n_rows))
    idx = np.stack([rng.choice(n_rows, size=batch, replace=False) for _ in range(n_models)])
    return theta, X, y, idx, layers


# widths below, at and above the 8 lanes and 16-lane passes, batches not a multiple of 4
CASES = [((4, 6, 5, 3), 3, 9, 7), ((20, 64, 64, 10), 4, 30, 16), ((3, 17, 2), 2, 5, 5),
         ((9, 33, 8, 11), 3, 12, 1), ((5, 24), 2, 6, 6)]


@pytest.mark.parametrize(("sizes", "n_models", "n_rows", "batch"), CASES)
def test_gradients_match_the_numpy_twin(sizes, n_models, n_rows, batch):
    theta, X, y, idx, layers = _instance(0, sizes, n_models, n_rows, batch)
    grad = np.full_like(theta, np.nan)
    relu_net.gradients(theta, X, y, idx, layers, grad)
    np.testing.assert_allclose(grad, _twin(theta, X, y, idx, sizes), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(("sizes", "n_models", "n_rows", "batch"), CASES)
def test_sgd_step_is_the_gradient_step_bit_for_bit(sizes, n_models, n_rows, batch):
    theta, X, y, idx, layers = _instance(1, sizes, n_models, n_rows, batch)
    grad = np.empty_like(theta)
    relu_net.gradients(theta, X, y, idx, layers, grad)
    moved = theta.copy()
    relu_net.sgd_step(moved, X, y, idx, layers, 0.05)
    assert np.array_equal(moved, theta - 0.05 * grad)


@pytest.mark.parametrize(("sizes", "n_models", "n_rows", "batch"), CASES[:3])
def test_corrected_step_is_the_control_variate_step_bit_for_bit(sizes, n_models, n_rows,
                                                                 batch):
    """The step along (grad - c_k) + c, c one row per group of models (the clients of a
    replicate), rounded as NumPy rounds that expression."""
    theta, X, y, idx, layers = _instance(4, sizes, 2 * n_models, n_rows, batch)
    rng = np.random.default_rng(5)
    c_k = rng.standard_normal(theta.shape)
    c = rng.standard_normal((2, theta.shape[1]))
    grad = np.empty_like(theta)
    relu_net.gradients(theta, X, y, idx, layers, grad)
    moved = theta.copy()
    relu_net.corrected_sgd_step(moved, X, y, idx, layers, 0.05, c_k, c)
    direction = grad - c_k + np.repeat(c, n_models, axis=0)
    assert np.array_equal(moved, theta - 0.05 * direction)


def test_models_do_not_interact():
    sizes = (4, 6, 5, 3)
    theta, X, y, idx, layers = _instance(2, sizes, 3, 9, 4)
    grad = np.empty_like(theta)
    relu_net.gradients(theta, X, y, idx, layers, grad)
    for m in range(3):
        one = np.empty((1, theta.shape[1]))
        relu_net.gradients(theta[m:m + 1].copy(), X[m:m + 1].copy(), y[m:m + 1].copy(),
                           idx[m:m + 1].copy(), layers, one)
        assert np.array_equal(one[0], grad[m])


def test_madd_block_sums_in_index_order():
    """Every output is the chain fma(m_t, v_t, .) from 0 in increasing t: with exact
    binary fractions the sum is exact, and a ReLU pass clips the negative ones."""
    rng = np.random.default_rng(3)
    rows, width, count = 5, 19, 6
    m = rng.integers(-8, 8, size=(count, width)).astype(float) / 4
    v = rng.integers(-8, 8, size=(rows, count)).astype(float) / 8
    for relu in (False, True):
        acc = np.full(rows * width, np.nan)
        relu_net.madd_block(relu, acc, 0, width, rows, width, m.ravel(), 0, width,
                            v.ravel(), 0, count, 1, count)
        want = v @ m
        np.testing.assert_array_equal(acc.reshape(rows, width),
                                      np.maximum(want, 0.0) if relu else want)
