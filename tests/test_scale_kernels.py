"""Fast ridge kernels: close to the generic compiled loop and the NumPy twins (the residual is
summed in another order), independent of the thread count."""

import numba
import numpy as np
import pytest

from flbounds.algorithms import fedavg, fedavg_batched, focus, focus_batched, sg_focus
from flbounds.algorithms._common import kernel_data
from flbounds.kernels import focus_local, scale_ridge
from flbounds.problems import random_ridge

RTOL = 1e-12  # same operations as the NumPy twin up to summation order
N_CLIENTS, N_SAMPLES, DIM = 80, 7, 6  # n = 7, d = 6: exercises the 4-way tails


@pytest.fixture(scope="module")
def ridge():
    return random_ridge(np.random.default_rng(11), N_CLIENTS, N_SAMPLES, DIM, lam=0.1)


@pytest.fixture(scope="module")
def plan():
    rng = np.random.default_rng(12)
    p = rng.choice([0.05, 0.5, 1.0], size=(30, 1))  # ~4, ~40, 80 participants
    out = rng.random((30, N_CLIENTS)) < p
    out[3] = False  # one empty round
    return out


def numpy_ridge_gradient(features, targets, lam, c, z):
    """Slow twin: X_c'(X_c z - y_c)/n + lam z."""
    X = features[c]
    return X.T @ (X @ z - targets[c]) / X.shape[0] + lam * z


def test_ridge_gradient_matches_numpy(ridge):
    rng = np.random.default_rng(13)
    feats, targs = ridge.features, ridge.targets
    ft = np.empty((DIM, N_SAMPLES))
    resid = np.empty(N_SAMPLES)
    out = np.empty(DIM)
    for c in (0, 17, N_CLIENTS - 1):
        z = rng.standard_normal(DIM)
        scale_ridge.transpose_client(feats, c, ft)
        scale_ridge.ridge_gradient(feats, targs, ridge.lam, c, ft, z, resid, out)
        want = numpy_ridge_gradient(feats, targs, ridge.lam, c, z)
        np.testing.assert_allclose(out, want, rtol=RTOL, atol=1e-14 * np.abs(want).max())


def old_fedavg(problem, plan, step, tau):
    """The generic compiled loop of focus_local (the path used before the fast kernel)."""
    xs = np.empty((plan.shape[0] + 1, problem.dim))
    focus_local.fedavg_rounds(*kernel_data(problem), plan, step, tau, np.zeros(problem.dim), xs)
    return xs


def old_focus(problem, plan, step, tau, noise=None):
    n, d = problem.n_clients, problem.dim
    x, y, g = np.zeros(d), np.zeros(d), np.zeros((n, d))
    xs, ys, sums = (np.empty((plan.shape[0] + 1, d)) for _ in range(3))
    noise_arr = np.zeros((1, 1, 1, d)) if noise is None else noise
    focus_local.focus_rounds(*kernel_data(problem), plan, step, tau, noise_arr,
                             noise is not None, x, y, g, xs, ys, True, sums)
    return xs, ys, g, sums


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-13 * max(np.abs(want).max(), 1))


@pytest.mark.parametrize("tau", [1, 5])
def test_matches_generic_loop(ridge, plan, tau, always_parallel):
    close(fedavg(ridge, plan, step=0.05, local_steps=tau).x, old_fedavg(ridge, plan, 0.05, tau))
    tr = focus(ridge, plan, step=0.05, local_steps=tau, record_sum=True)
    for got, want in zip((tr.x, tr.y, tr.g, tr.g_sum), old_focus(ridge, plan, 0.05, tau),
                         strict=True):
        close(got, want)
    np.testing.assert_allclose(tr.y, tr.g_sum, rtol=1e-12, atol=1e-12)  # tracking invariant
    noise = 0.1 * np.random.default_rng(14).standard_normal((plan.shape[0], N_CLIENTS, tau,
                                                              DIM))
    tr = sg_focus(ridge, plan, noise, step=0.05, local_steps=tau)
    close(tr.x, old_focus(ridge, plan, 0.05, tau, noise)[0])


def test_close_to_numpy_path(ridge, plan):
    for algo in (fedavg, focus):
        fast = algo(ridge, plan, step=0.05, local_steps=3).x
        slow = algo(ridge, plan, step=0.05, local_steps=3, compiled=False).x
        np.testing.assert_allclose(fast, slow, rtol=RTOL, atol=1e-13)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_same_for_one_and_two_threads(ridge, plan, always_parallel):
    before = numba.get_num_threads()
    try:
        runs = []
        for threads in (1, 2):
            numba.set_num_threads(threads)
            tr = focus(ridge, plan, step=0.05, local_steps=4)
            runs.append((fedavg(ridge, plan, step=0.05, local_steps=4).x, tr.x, tr.g))
    finally:
        numba.set_num_threads(before)
    for one, two in zip(*runs, strict=True):
        assert np.array_equal(one, two)


@pytest.fixture()
def always_parallel(monkeypatch):
    """Every round with participants opens a parallel region (the default cut would keep
    these tiny rounds serial)."""
    monkeypatch.setattr(scale_ridge, "PARALLEL_MIN_WORK", 0)


@pytest.mark.parametrize("init", ["zero", "gradient"])
def test_batched_equals_unbatched(ridge, init):
    plans = np.random.default_rng(15).random((5, 12, N_CLIENTS)) < 0.3
    x0 = np.linspace(-1.0, 1.0, DIM)
    kw = dict(step=0.05, local_steps=3, x0=x0)
    fa = fedavg_batched(ridge, plans, **kw).x
    fo = focus_batched(ridge, plans, init=init, **kw)
    for b, plan in enumerate(plans):
        assert np.array_equal(fa[b], fedavg(ridge, plan, **kw).x)
        tr = focus(ridge, plan, init=init, **kw)
        assert np.array_equal(fo.x[b], tr.x)
        assert np.array_equal(fo.y[b], tr.y)
        assert np.array_equal(fo.g[b], tr.g)


def test_batched_generic_problem_and_validation(ridge):
    quad = ridge.as_quadratic()
    plans = np.random.default_rng(16).random((2, 4, N_CLIENTS)) < 0.5
    got = focus_batched(quad, plans, step=0.05, local_steps=2).x
    assert np.array_equal(got[1], focus(quad, plans[1], step=0.05, local_steps=2).x)
    with pytest.raises(ValueError, match="plans"):
        fedavg_batched(ridge, plans[0], step=0.05, local_steps=2)
    with pytest.raises(ValueError, match="plans"):
        focus_batched(ridge, 2 * plans.astype(int), step=0.05, local_steps=2)
