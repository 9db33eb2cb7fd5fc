"""Replicate-batched Monte Carlo (:mod:`flbounds.kernels.replicates`): every replicate of a
batched run equals its single run bit for bit, for every problem kind and thread count."""

import numba
import numpy as np
import pytest

from flbounds.algorithms import fedavg, fedavg_batched, safari, safari_batched, safari_plan
from flbounds.kernels.block_gradients import block_gradients_at
from flbounds.kernels.gradients import gradients_at
from flbounds.kernels.replicates import SAFARI_MIN_BLOCK
from flbounds.participation import Bernoulli
from flbounds.problems import (
    NonconvexLogistic,
    random_logistic,
    random_quadratics,
    random_ridge,
    random_scalar_pl,
)

KINDS = ("quadratic", "ridge", "logistic", "nonconvex_logistic")


def _problem(kind, dim):
    rng = np.random.default_rng(dim)
    if kind == "quadratic":
        return random_quadratics(rng, 6, dim, mu=0.5 if dim > 1 else 2.0, L=2.0)
    if kind == "ridge":
        return random_ridge(rng, 6, 7, dim, lam=0.1)
    base = random_logistic(rng, 6, 9, dim, lam=0.05)
    if kind == "logistic":
        return base
    return NonconvexLogistic(base.features, base.labels, lam=0.05, rho=0.3)


@pytest.mark.parametrize("kind", KINDS + ("scalar_pl",))
@pytest.mark.parametrize("dim", [1, 3, 4, 9])
def test_block_gradient_columns_equal_one_point_gradient(kind, dim):
    if kind == "scalar_pl":
        if dim != 1:
            pytest.skip("scalar PL is one-dimensional")
        problem = random_scalar_pl(np.random.default_rng(0), 6)
    else:
        problem = _problem(kind, dim)
    data = problem.kernel_data
    Z = np.random.default_rng(5).normal(size=(problem.dim, 11)) * 3.0
    for c in range(problem.n_clients):
        out = np.empty_like(Z)
        block_gradients_at(data, Z, c, out)
        ref = np.empty((Z.shape[1], problem.dim))
        gradients_at(data, np.ascontiguousarray(Z.T), np.full(Z.shape[1], c), ref)
        assert np.array_equal(out.T, ref)


@pytest.fixture(params=[1, 2])
def threads(request):
    old = numba.get_num_threads()
    numba.set_num_threads(min(request.param, numba.config.NUMBA_NUM_THREADS))
    yield
    numba.set_num_threads(old)


@pytest.mark.parametrize("kind", KINDS)
def test_fedavg_batched_equals_single_runs(kind, threads):
    problem = _problem(kind, 5)
    proc = Bernoulli(np.linspace(0.1, 0.9, problem.n_clients))
    plans = np.stack([proc.plan(r, 30) for r in np.random.default_rng(1).spawn(7)])
    batch = fedavg_batched(problem, plans, step=0.05, local_steps=3).x
    for b in range(plans.shape[0]):
        assert np.array_equal(batch[b], fedavg(problem, plans[b], step=0.05, local_steps=3).x)


def _plan_kwargs(dim, q):
    return dict(n_rounds=25, q=q, eligible=np.arange(1, 6), n_sampled=3, local_steps=3,
                dim=dim, client_noise_std=0.2, server_noise_std=0.3)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("q", [0.0, 0.5])
# groups narrower than SAFARI_MIN_BLOCK run one replicate after the other; with 2
# SAFARI_MIN_BLOCK + 2 replicates every group (1 or 2 threads) runs client blocks
@pytest.mark.parametrize("n_reps", [6, 2 * SAFARI_MIN_BLOCK + 2])
def test_safari_batched_equals_single_runs(kind, q, n_reps, threads):
    problem = _problem(kind, 5)
    plans = [safari_plan(r, **_plan_kwargs(5, q))
             for r in np.random.default_rng(2).spawn(n_reps)]
    x0 = np.linspace(-1.0, 1.0, 5)
    batch = safari_batched(problem, plans, step_client=0.05, step_server=0.1, x0=x0)
    for b, plan in enumerate(plans):
        one = safari(problem, plan, step_client=0.05, step_server=0.1, x0=x0)
        assert np.array_equal(batch.x[b], one.x)
        assert np.array_equal(batch.local_grad_norm2[b], one.local_grad_norm2, equal_nan=True)


def test_batched_paths_fail_on_a_planted_change():
    """The equality checks can fail: a replicate with another plan differs."""
    problem = _problem("ridge", 5)
    proc = Bernoulli(np.full(problem.n_clients, 0.5))
    plans = np.stack([proc.plan(r, 20) for r in np.random.default_rng(3).spawn(2)])
    batch = fedavg_batched(problem, plans, step=0.05, local_steps=2).x
    assert not np.array_equal(batch[0], fedavg(problem, plans[1], step=0.05,
                                               local_steps=2).x)


@pytest.mark.parametrize("kind", KINDS)
def test_local_update_blocks_equal_numpy_local_steps(kind):
    """The sampler path's pseudo-gradients: the block kernel against the NumPy loop over
    stacked (replicate, client) points."""
    from flbounds.algorithms.sampler_rounds import replicate_local_updates

    problem = _problem(kind, 5)
    x = np.random.default_rng(6).normal(size=(4, 5))
    n, step = problem.n_clients, 0.07
    X = np.repeat(x, n, axis=0)
    for _ in range(3):
        X = X - step * problem.client_gradients(X, clients=np.tile(np.arange(n), 4))
    ref = x[:, None, :] - X.reshape(4, n, 5)
    assert np.array_equal(replicate_local_updates(problem, x, 3, step), ref)


@pytest.mark.parametrize("n_reps", [3, 2 * SAFARI_MIN_BLOCK + 2])   # single runs; blocks
def test_safari_batched_one_start_per_replicate(n_reps, threads):
    problem = _problem("quadratic", 3)
    plans = [safari_plan(r, **_plan_kwargs(3, 0.5))
             for r in np.random.default_rng(8).spawn(n_reps)]
    starts = np.random.default_rng(9).normal(size=(n_reps, 3))
    batch = safari_batched(problem, plans, step_client=0.05, step_server=0.1, x0=starts)
    for b, plan in enumerate(plans):
        one = safari(problem, plan, step_client=0.05, step_server=0.1, x0=starts[b])
        assert np.array_equal(batch.x[b], one.x)
    with pytest.raises(ValueError, match="x0"):
        safari_batched(problem, plans, step_client=0.05, step_server=0.1, x0=starts[:2])
