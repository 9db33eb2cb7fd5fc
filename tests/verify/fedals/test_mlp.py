"""The hand-written MLP backward pass against central finite differences."""

import numpy as np
import pytest

from verify.fedals import mlp

SMALL = (4, 6, 5, 3)


def _fd_grad(theta, X, y, sizes, coords, h=1e-6):
    out = np.empty(len(coords))
    for j, c in enumerate(coords):
        tp, tm = theta.copy(), theta.copy()
        tp[..., c] += h
        tm[..., c] -= h
        out[j] = (mlp.loss_and_grad(tp, X, y, sizes)[0] - mlp.loss_and_grad(tm, X, y, sizes)[0]
                  )[0] / (2 * h)
    return out


@pytest.mark.parametrize("sizes", [SMALL, mlp.DEFAULT_SIZES])
def test_gradient_matches_finite_differences(sizes):
    rng = np.random.default_rng(0)
    theta = mlp.init_params(rng, 1, sizes)
    theta += 0.05 * rng.standard_normal(theta.shape)       # nonzero biases too
    X = rng.standard_normal((1, 7, sizes[0]))
    y = rng.integers(0, sizes[-1], size=(1, 7))
    _, grad = mlp.loss_and_grad(theta, X, y, sizes)
    coords = rng.choice(mlp.n_params(sizes), size=min(60, mlp.n_params(sizes)), replace=False)
    fd = _fd_grad(theta, X, y, sizes, coords)
    np.testing.assert_allclose(grad[0, coords], fd, rtol=1e-5, atol=1e-8)


def test_batched_models_are_independent():
    rng = np.random.default_rng(1)
    theta = mlp.init_params(rng, 3, SMALL)
    X = rng.standard_normal((3, 5, SMALL[0]))
    y = rng.integers(0, SMALL[-1], size=(3, 5))
    loss, grad = mlp.loss_and_grad(theta, X, y, SMALL)
    for m in range(3):
        lm, gm = mlp.loss_and_grad(theta[m:m + 1], X[m:m + 1], y[m:m + 1], SMALL)
        np.testing.assert_allclose(loss[m], lm[0], rtol=1e-13)
        np.testing.assert_allclose(grad[m], gm[0], rtol=1e-12, atol=1e-15)


def test_layout_and_accuracy():
    assert mlp.n_params() == 20 * 64 + 64 + 64 * 64 + 64 + 64 * 10 + 10
    slices = mlp.layer_slices()
    assert slices[0].start == 0 and slices[-1].stop == mlp.n_params()
    rng = np.random.default_rng(2)
    theta = mlp.init_params(rng, 2, SMALL)
    X = rng.standard_normal((2, 9, SMALL[0]))
    logits, _ = mlp.forward(theta, X, SMALL)
    y = np.argmax(logits, axis=-1)
    _, acc = mlp.loss_accuracy(theta, X, y, SMALL)
    np.testing.assert_array_equal(acc, 1.0)


def test_bad_inputs():
    rng = np.random.default_rng(3)
    theta = mlp.init_params(rng, 1, SMALL)
    with pytest.raises(ValueError, match="theta"):
        mlp.loss_and_grad(theta[:, :-1], np.zeros((1, 2, 4)), np.zeros((1, 2), int), SMALL)
    with pytest.raises(ValueError, match="X"):
        mlp.loss_and_grad(theta, np.zeros((1, 2, 5)), np.zeros((1, 2), int), SMALL)
    with pytest.raises(ValueError, match="y"):
        mlp.loss_and_grad(theta, np.zeros((1, 2, 4)), np.full((1, 2), 3), SMALL)
    with pytest.raises(ValueError, match="sizes"):
        mlp.layout((4,))


def _batch(seed, sizes, lead, n_rows, batch):
    rng = np.random.default_rng(seed)
    theta = mlp.init_params(rng, int(np.prod(lead)), sizes).reshape(*lead, -1)
    theta += 0.05 * rng.standard_normal(theta.shape)
    X = rng.standard_normal((*lead, n_rows, sizes[0]))
    y = rng.integers(0, sizes[-1], size=(*lead, n_rows))
    idx = np.argsort(rng.random((*lead, n_rows)), axis=-1)[..., :batch]
    return theta, X, y, idx


@pytest.mark.parametrize("sizes", [SMALL, mlp.DEFAULT_SIZES])
def test_kernel_gradients_match_the_numpy_backward_pass(sizes):
    """The training loop's gradients (compiled) against :func:`mlp.loss_and_grad` on the
    same rows: equal up to rounding (fused multiply-adds in a fixed order against BLAS)."""
    theta, X, y, idx = _batch(4, sizes, (2, 3), 11, 5)
    data = mlp.batch_data(X, y, sizes)
    got = mlp.batch_gradients(theta, data, idx)
    rows = np.take_along_axis(X, idx[..., None], axis=-2)
    want = mlp.loss_and_grad(theta, rows, np.take_along_axis(y, idx, axis=-1), sizes)[1]
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-14)
    moved = theta.copy()
    mlp.sgd_step(moved, data, idx, 0.05)
    assert np.array_equal(moved, theta - 0.05 * got)
    c_k = np.random.default_rng(6).standard_normal(theta.shape)
    c = c_k.mean(axis=-2) + 0.5
    moved = theta.copy()
    mlp.sgd_step(moved, data, idx, 0.05, c_k, c)
    assert np.array_equal(moved, theta - 0.05 * (got - c_k + c[..., None, :]))


def test_kernel_wrappers_reject_bad_input():
    theta, X, y, idx = _batch(5, SMALL, (2,), 6, 3)
    data = mlp.batch_data(X, y, SMALL)
    with pytest.raises(ValueError, match="y"):
        mlp.batch_data(X, np.full(y.shape, SMALL[-1]), SMALL)
    with pytest.raises(ValueError, match="X"):
        mlp.batch_data(X[..., :-1], y, SMALL)
    with pytest.raises(ValueError, match="idx"):
        mlp.batch_gradients(theta, data, idx + 6)
    with pytest.raises(ValueError, match="idx"):
        mlp.batch_gradients(theta, data, idx[None])
    with pytest.raises(ValueError, match="theta"):
        mlp.batch_gradients(theta[:, :-1], data, idx)
    with pytest.raises(ValueError, match="theta"):
        mlp.sgd_step(np.asfortranarray(theta), data, idx, 0.1)
    with pytest.raises(ValueError, match="c_k"):
        mlp.sgd_step(theta.copy(), data, idx, 0.1, c_k=np.zeros_like(theta))
    with pytest.raises(ValueError, match="c_k"):
        mlp.sgd_step(theta.copy(), data, idx, 0.1, np.zeros_like(theta), np.zeros_like(theta))
