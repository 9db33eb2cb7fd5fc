"""Ridge round loops at scale: the compiled FedAvg / FOCUS equal the NumPy twins to rounding,
do not depend on the thread count or on running a round in parallel, and the batched runs are
the unbatched ones bit for bit."""

import numba
import numpy as np
import pytest

from flbounds.algorithms import fedavg, fedavg_batched, focus, focus_batched, sg_focus
from flbounds.kernels import rounds
from tests import reference as ref

# The twins sum the same terms in other orders (residual, gradient): rounding ~ n d eps.
RTOL = 1e-12
N_CLIENTS, N_SAMPLES, DIM = 80, 7, 6  # n = 7, d = 6: exercises the 4-way tails


@pytest.fixture(scope="module")
def ridge():
    from flbounds.problems import random_ridge
    return random_ridge(np.random.default_rng(11), N_CLIENTS, N_SAMPLES, DIM, lam=0.1)


@pytest.fixture(scope="module")
def plan():
    rng = np.random.default_rng(12)
    p = rng.choice([0.05, 0.5, 1.0], size=(30, 1))  # ~4, ~40, 80 participants
    out = rng.random((30, N_CLIENTS)) < p
    out[3] = False  # one empty round
    return out


@pytest.fixture()
def always_parallel(monkeypatch):
    """Every round with participants opens a parallel region (the default cut would keep
    these tiny rounds serial)."""
    monkeypatch.setattr(rounds, "PARALLEL_MIN_WORK", 0)


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-13 * max(np.abs(want).max(), 1))


def test_ridge_gradient_matches_numpy(ridge):
    X = np.random.default_rng(13).standard_normal((3, DIM))
    clients = np.array([0, 17, N_CLIENTS - 1])
    want = ref.ridge_gradients(ridge.features, ridge.targets, ridge.lam, X, clients)
    close(ridge.client_gradients(X, clients=clients), want)


@pytest.mark.parametrize("tau", [1, 5])
def test_matches_twins_in_parallel(ridge, plan, tau, always_parallel):
    x0 = np.zeros(DIM)
    close(fedavg(ridge, plan, step=0.05, local_steps=tau).x,
          ref.fedavg(ridge, plan, 0.05, tau, x0))
    tr = focus(ridge, plan, step=0.05, local_steps=tau, record_sum=True)
    for got, want in zip((tr.x, tr.y, tr.g), ref.focus(ridge, plan, 0.05, tau, x0),
                         strict=True):
        close(got, want)
    np.testing.assert_allclose(tr.y, tr.g_sum, rtol=1e-12, atol=1e-12)  # tracking invariant
    noise = 0.1 * np.random.default_rng(14).standard_normal((plan.shape[0], N_CLIENTS, tau,
                                                              DIM))
    close(sg_focus(ridge, plan, noise, step=0.05, local_steps=tau).x,
          ref.focus(ridge, plan, 0.05, tau, x0, noise)[0])


def test_parallel_rounds_equal_serial_rounds(ridge, plan, monkeypatch):
    runs = []
    for cut in (-1, 0):  # never / always parallel
        monkeypatch.setattr(rounds, "PARALLEL_MIN_WORK", cut)
        tr = focus(ridge, plan, step=0.05, local_steps=4)
        runs.append((fedavg(ridge, plan, step=0.05, local_steps=4).x, tr.x, tr.g))
    for one, two in zip(*runs, strict=True):
        assert np.array_equal(one, two)


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


@pytest.mark.parametrize("init", ["zero", "gradient"])
def test_batched_equals_unbatched(ridge, init, always_parallel):
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


def test_batched_other_problem_and_validation(ridge):
    quad = ridge.as_quadratic()
    plans = np.random.default_rng(16).random((2, 4, N_CLIENTS)) < 0.5
    got = focus_batched(quad, plans, step=0.05, local_steps=2).x
    assert np.array_equal(got[1], focus(quad, plans[1], step=0.05, local_steps=2).x)
    with pytest.raises(ValueError, match="plans"):
        fedavg_batched(ridge, plans[0], step=0.05, local_steps=2)
    with pytest.raises(ValueError, match="plans"):
        focus_batched(ridge, 2 * plans.astype(int), step=0.05, local_steps=2)
    with pytest.raises(ValueError, match="init"):
        focus_batched(ridge, plans, step=0.05, local_steps=2, init="ones")
