"""Data models' fast paths (ridge moments, sphere points, mini-batches, the softmax pools'
maximum and class sums, the draws without kept samples, the control variates computed once)
give numpy's numbers, bit for bit."""

import numpy as np
import pytest

from flbounds.kernels.moments import normalize_rows, ridge_moment_sums
from flbounds.theory.data_models import (
    RidgeModel,
    _last_axis_max,
    _last_axis_sum,
    logistic_pool,
    sphere_points,
)
from flbounds.theory.generalization import _control_variate, one_round_draws
from flbounds.theory.generalization_rounds import batch_rows

SHAPES = [(1, 1, 1), (3, 7, 1), (5, 64, 1), (4, 9, 2), (2, 33, 3), (6, 20, 5), (1, 100, 10)]


def _in_sample_order(X, y):
    gram, xy = np.zeros((X.shape[0], X.shape[2], X.shape[2])), np.zeros(X.shape[::2])
    for m in range(X.shape[1]):
        gram += X[:, m, :, None] * X[:, m, None, :]
        xy += X[:, m, :] * y[:, m, None]
    return gram, xy


@pytest.mark.parametrize("shape", SHAPES)
def test_moment_sums_add_the_samples_in_order(shape):
    rng = np.random.default_rng(sum(shape))
    X, y = rng.standard_normal(shape), rng.standard_normal(shape[:2])
    gram, xy = np.empty((shape[0], shape[2], shape[2])), np.empty(shape[::2])
    ridge_moment_sums(X, y, gram, xy)
    want_gram, want_xy = _in_sample_order(X, y)
    assert np.array_equal(gram, want_gram) and np.array_equal(xy, want_xy)
    if shape[2] >= 2:    # numpy's einsum sums in sample order too (see the kernel's module)
        assert np.array_equal(gram, np.einsum("tni,tnj->tij", X, X))
        assert np.array_equal(xy, np.einsum("tni,tn->ti", X, y))


@pytest.mark.parametrize("covariates", ["sphere", "gaussian"])
def test_sampled_moments_are_those_of_the_samples(covariates):
    model = RidgeModel(theta_star=np.random.default_rng(0).standard_normal((3, 4)), lam=0.1,
                       noise_sd=0.5, covariates=covariates)
    data = model.sample(np.random.default_rng(1), 6, 11)
    assert np.array_equal(data.gram, np.einsum("tkni,tknj->tkij", data.X, data.X) / 11)
    assert np.array_equal(data.xy, np.einsum("tkni,tkn->tki", data.X, data.y) / 11)


def test_batch_rows_is_take_along_axis():
    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((5, 3, 8, 4)), rng.standard_normal((5, 3, 8))
    idx = rng.integers(0, 8, (5, 3, 6))
    assert np.array_equal(batch_rows(X, idx), np.take_along_axis(X, idx[..., None], axis=2))
    assert np.array_equal(batch_rows(y, idx), np.take_along_axis(y, idx, axis=2))


@pytest.mark.parametrize("bad", [8, -1])
def test_batch_rows_rejects_an_index_outside_the_dataset(bad):
    X = np.zeros((2, 3, 8, 4))
    idx = np.zeros((2, 3, 2), dtype=int)
    idx[1, 2, 1] = bad       # would silently read the next dataset's row
    with pytest.raises(ValueError, match="idx"):
        batch_rows(X, idx)
    with pytest.raises(ValueError, match="idx"):
        batch_rows(X, idx[:, :2])


@pytest.mark.parametrize("classes", [1, 2, 3, 10])
def test_last_axis_max_is_numpys(classes):
    a = np.random.default_rng(classes).standard_normal((4, 3, 5, classes))
    a[0, 0, 0, -1] = np.nan
    a[1, 1, 1, 0] = -np.inf
    a[2, 2, 2, :] = -0.0
    got, want = _last_axis_max(a), a.max(axis=-1, keepdims=True)
    assert got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("classes", [1, 2, 3, 7, 8, 10])
def test_last_axis_sum_is_numpys(classes):
    rng = np.random.default_rng(classes)
    a = rng.standard_normal((4, 30, classes)) * np.exp(5 * rng.standard_normal((4, 30, classes)))
    got, want = _last_axis_sum(a), a.sum(axis=-1, keepdims=True)
    assert got.shape == want.shape and np.array_equal(got, want)


@pytest.mark.parametrize("dim", [1, 2, 5, 7])
def test_normalized_rows_are_numpys(dim):
    x = np.random.default_rng(dim).standard_normal((50, 40, dim))
    want = x / np.linalg.norm(x, axis=-1, keepdims=True)
    normalize_rows(x.reshape(-1, dim))
    assert np.array_equal(x, want)


@pytest.mark.parametrize("dim", [3, 9])
def test_sphere_points_are_numpys(dim):
    x = np.random.default_rng(dim).standard_normal((20, 7, dim))
    got = sphere_points(np.random.default_rng(dim), (20, 7), dim)
    assert np.array_equal(got, x / np.linalg.norm(x, axis=-1, keepdims=True))


def test_samples_not_kept_are_the_same_draws():
    model = RidgeModel(theta_star=np.random.default_rng(0).standard_normal((3, 4)), lam=0.1)
    kept = model.sample(np.random.default_rng(1), 6, 11)
    lean = model.sample(np.random.default_rng(1), 6, 11, keep_samples=False)
    assert lean.X is None and lean.y is None
    for a, b in zip(kept[:3], lean[:3], strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("kind", ["ridge", "pool"])
def test_control_variate_is_per_draw_numbers(kind):
    rng = np.random.default_rng(4)
    model = (RidgeModel(rng.standard_normal((3, 4)), lam=0.1) if kind == "ridge"
             else logistic_pool(rng, rng.standard_normal((3, 4)), 50, 0.1))
    data = model.sample(rng, 9, 12)
    ref = model.reference_theta
    star = np.broadcast_to(ref, (9, *ref.shape))
    want = model.population_risk(star) - model.empirical_risk(data, star)
    assert np.array_equal(_control_variate(model, data, ref), want)
    w = np.full(3, 1 / 3)
    first = one_round_draws(model, w, 12, 5, np.random.default_rng(2))
    again = one_round_draws(model, w, 12, 5, np.random.default_rng(2))
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))


@pytest.mark.parametrize("view", ["contiguous", "client_broadcast", "draw_broadcast",
                                  "strided"])
@pytest.mark.parametrize("dim", [1, 2, 5, 9])
def test_quadratic_forms_are_the_einsum(view, dim):
    """The compiled quadratic forms of the ridge risk are einsum's numbers, for the views
    the generalization engine passes (the average broadcast over clients, fixed points over
    draws)."""
    from flbounds.kernels.moments import batched_quadratic_forms as _quadratic_forms
    from flbounds.kernels.moments import quadratic_forms
    rng = np.random.default_rng(dim)
    T, K = 700, 24
    gram = rng.standard_normal((T, K, dim, dim))
    theta = {"contiguous": lambda: rng.standard_normal((T, K, dim)),
             "client_broadcast": lambda: np.broadcast_to(rng.standard_normal((T, 1, dim)),
                                                         (T, K, dim)),
             "draw_broadcast": lambda: np.broadcast_to(rng.standard_normal((K, dim)),
                                                       (T, K, dim)),
             "strided": lambda: rng.standard_normal((T, K, 2 * dim))[..., ::2]}[view]()
    want = np.einsum("tki,tkij,tkj->tk", theta, gram, theta)
    out = np.empty((T, K))
    quadratic_forms(theta, gram, out)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(_quadratic_forms(theta, gram), want)


@pytest.mark.parametrize("classes", [2, 3, 10])
def test_pool_population_risk_is_the_numpy_form_to_rounding(classes):
    """The compiled pool risk (two classes by their softplus) against the (T, K, M, C) form
    of the empirical risk on the whole pool: not bit for bit (another order), to 1e-12;
    large logits do not overflow."""
    from flbounds.theory.data_models import SoftmaxPool
    rng = np.random.default_rng(classes)
    pool = SoftmaxPool(rng.standard_normal((3, 50, 4)), rng.integers(0, classes, (3, 50)),
                       classes, 0.1)
    theta = 30.0 * rng.standard_normal((6, 3, classes * 4))
    labels = np.broadcast_to(pool.labels, (6, *pool.labels.shape))
    numpy_form = pool._risk_grad(pool.features[None], labels, theta, need_grad=False)[0]
    got = pool.population_risk(theta)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, numpy_form, rtol=1e-12, atol=1e-12)


def test_two_class_newton_reaches_the_batched_loops_minimizers(monkeypatch):
    """The compiled two-class Newton (``binary_pool_newton``) against the batched loop of
    ``SoftmaxPool.erm`` (run by declaring the kernel failed): the same ERMs to the Newton
    tolerance, every gradient below it."""
    from flbounds.theory import data_models
    rng = np.random.default_rng(7)
    pool = logistic_pool(rng, 2.0 * rng.standard_normal((3, 5)), 300, 0.05)
    data = pool.sample(rng, 40, 25)
    fast = pool.erm(data)
    assert np.linalg.norm(pool.empirical_grad(data, fast), axis=-1).max() <= 1e-12
    monkeypatch.setattr(data_models, "binary_pool_newton", lambda *args: 1)
    np.testing.assert_allclose(fast, pool.erm(data), rtol=0, atol=1e-10)
