"""Batched SAFARI and FedAvg-with-sampler equal their unbatched runs bit for bit, replicate by
replicate, whatever the number of numba threads."""

import numba
import numpy as np
import pytest

from flbounds.algorithms import (
    SafariPlan,
    fedavg_sampler,
    fedavg_sampler_batched,
    safari,
    safari_batched,
    safari_plan,
    safari_plans,
    sampler_uniforms,
)
from flbounds.algorithms.batched_safari import stack_safari_plans
from flbounds.algorithms.batched_sampler import ReplayUniforms
from flbounds.algorithms.fedavg_sampler import local_updates
from flbounds.algorithms.safari import kernel_plan
from flbounds.kernels.gradients import population
from flbounds.kernels.isp_round import isp_probabilities, numpy_sum
from flbounds.kernels.mixed_rounds import MixedPlan, safari_replicates, safari_rounds
from flbounds.participation import Bernoulli
from flbounds.problems import random_quadratics, random_ridge
from flbounds.sampling import KVib, OracleISP, UniformISP, UniformRSP, optimal_isp_probabilities
from flbounds.sampling.optimal import COMPILED_MAX_N, waterfill_numpy
from tests import reference

N_REPS = 5


@pytest.fixture(scope="module")
def quad():
    return random_quadratics(np.random.default_rng(0), 7, 3, mu=0.5, L=2.0)


def _plan_kwargs(q, dim=3):
    return dict(n_rounds=40, q=q, eligible=np.arange(2, 7), n_sampled=3, local_steps=3,
                dim=dim, client_noise_std=0.2, server_noise_std=0.3)


def _assert_safari_equal(problem, batch, rngs, q):
    x0 = np.array([1.0, -2.0, 0.5])
    for b, rng in enumerate(rngs):
        one = safari(problem, safari_plan(rng, **_plan_kwargs(q)), step_client=0.05,
                     step_server=0.1, x0=x0)
        assert np.array_equal(batch.x[b], one.x)
        assert np.array_equal(batch.client_round[b], one.client_round)
        assert np.array_equal(batch.local_grad_norm2[b], one.local_grad_norm2, equal_nan=True)


@pytest.mark.parametrize("q", [0.0, 0.4, 1.0])
def test_stacked_plans_are_the_single_plans(q):
    """``safari_plans`` draws straight into the stacked arrays: replicate b is
    ``safari_plan(rngs[b])``, every field, dtype and value."""
    stacked = safari_plans(np.random.default_rng(9).spawn(N_REPS), **_plan_kwargs(q))
    for b, rng in enumerate(np.random.default_rng(9).spawn(N_REPS)):
        one = safari_plan(rng, **_plan_kwargs(q))
        for mine, single in zip(stacked, one, strict=True):
            assert mine.dtype == single.dtype and np.array_equal(mine[b], single)


@pytest.mark.parametrize("kwargs", [_plan_kwargs(0.4), _plan_kwargs(1.0, dim=1),
                                    dict(_plan_kwargs(0.0), eligible=[5, 0, 3],
                                         client_noise_std=0.0)])
def test_plans_are_the_reference_draws(kwargs):
    """``safari_plan`` and every replicate of ``safari_plans`` against the plan drawn
    straight from the generator in the documented order (``tests.reference``)."""
    want = reference.safari_plan(np.random.default_rng(11), **kwargs)
    one = safari_plan(np.random.default_rng(11), **kwargs)
    stacked = safari_plans(np.random.default_rng(11).spawn(3), **kwargs)
    for got, ref in zip(one, want, strict=True):
        assert got.dtype == ref.dtype and np.array_equal(got, ref)
    for b, child in enumerate(np.random.default_rng(11).spawn(3)):
        for got, ref in zip(stacked, reference.safari_plan(child, **kwargs), strict=True):
            assert np.array_equal(got[b], ref)


def test_plan_draws_need_c_order_arrays():
    from flbounds.algorithms.safari import SafariPlan, _draw_plan
    out = SafariPlan(np.empty(4, dtype=bool), np.empty((4, 2), dtype=np.int64),
                     np.empty((4, 2, 3, 2), order="F"), np.empty((4, 2)))
    with pytest.raises(ValueError, match="C-contiguous"):
        _draw_plan(np.random.default_rng(0), out, q=0.5, eligible=np.arange(3),
                   client_noise_std=0.1, server_noise_std=0.1)


@pytest.mark.parametrize("bad", [dict(q=1.5), dict(n_sampled=9), dict(dim=0),
                                 dict(client_noise_std=-1.0)])
def test_stacked_plans_check_their_arguments(bad):
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError):
        safari_plans([rng], **{**_plan_kwargs(0.5), **bad})
    assert rng.bit_generator.state == state           # nothing drawn
    with pytest.raises(ValueError, match="rngs"):
        safari_plans([], **_plan_kwargs(0.5))


@pytest.mark.parametrize("q", [0.0, 0.4, 1.0])
def test_safari_batched_equals_unbatched(quad, q):
    plans = safari_plans(np.random.default_rng(1).spawn(N_REPS), **_plan_kwargs(q))
    batch = safari_batched(quad, plans, step_client=0.05, step_server=0.1,
                           x0=[1.0, -2.0, 0.5])
    assert batch.x.shape == (N_REPS, 41, 3) and batch.local_grad_norm2.shape == (N_REPS, 40)
    _assert_safari_equal(quad, batch, np.random.default_rng(1).spawn(N_REPS), q)


def test_safari_batched_list_of_plans_and_ridge(quad):
    plans = [safari_plan(r, **_plan_kwargs(0.5)) for r in np.random.default_rng(2).spawn(3)]
    batch = safari_batched(quad, plans, step_client=0.05, step_server=0.1, x0=[1.0, -2.0, 0.5])
    _assert_safari_equal(quad, batch, np.random.default_rng(2).spawn(3), 0.5)
    ridge = random_ridge(np.random.default_rng(9), 7, 4, 3, lam=0.1)
    batch = safari_batched(ridge, plans, step_client=0.05, step_server=0.1,
                           x0=[1.0, -2.0, 0.5])
    _assert_safari_equal(ridge, batch, np.random.default_rng(2).spawn(3), 0.5)


def test_safari_replicates_kernel_is_the_single_kernel_per_replicate(quad):
    """Kernel level: the replicate axis against the one-run kernel called in a loop."""
    plan = kernel_plan(safari_plans(np.random.default_rng(3).spawn(4), **_plan_kwargs(0.5)))
    data, x0 = quad.kernel_data, np.zeros(3)
    xs, g2 = np.empty((4, 41, 3)), np.empty((4, 40))
    safari_replicates(data, population(data), plan, (0.05, 0.1), x0, (xs, g2))
    for rep in range(4):
        x1, g1 = np.empty((41, 3)), np.empty(40)
        safari_rounds(data, population(data), MixedPlan(*(f[rep] for f in plan)), (0.05, 0.1),
                      x0, (x1, g1))
        assert np.array_equal(xs[rep], x1) and np.array_equal(g2[rep], g1, equal_nan=True)
        twin = reference.safari(quad, MixedPlan(*(f[rep] for f in plan)), 0.05, 0.1, x0)[0]
        np.testing.assert_allclose(xs[rep], twin, rtol=1e-12, atol=1e-14)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_safari_batched_same_for_one_and_two_threads(quad):
    plans = safari_plans(np.random.default_rng(4).spawn(6), **_plan_kwargs(0.5))
    before = numba.get_num_threads()
    runs = []
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            runs.append(safari_batched(quad, plans, step_client=0.05, step_server=0.1).x)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(runs[0], runs[1])


def test_safari_batched_rejects_bad_plans(quad):
    good = safari_plans(np.random.default_rng(5).spawn(2), **_plan_kwargs(0.5))
    with pytest.raises(ValueError, match="plans"):
        safari_batched(quad, [], step_client=0.05, step_server=0.1)
    other = safari_plan(np.random.default_rng(6), **{**_plan_kwargs(0.5), "n_rounds": 10})
    with pytest.raises(ValueError, match="same shapes"):
        stack_safari_plans([SafariPlan(*(f[0] for f in good)), other])
    bad = good._replace(clients=good.clients + 10)
    with pytest.raises(ValueError, match="plan.clients"):
        safari_batched(quad, bad, step_client=0.05, step_server=0.1)
    with pytest.raises(ValueError, match="step_client"):
        safari_batched(quad, good, step_client=-1.0, step_server=0.1)


# ----------------------------------------------------------------- FedAvg with a sampler

N, K, T, TAU, DIM = 30, 4, 25, 3, 5


@pytest.fixture(scope="module")
def ridge_setup():
    problem = random_ridge(np.random.default_rng(7), N, 8, DIM, lam=1.0, heterogeneity=3.0)
    step = 1.0 / (8 * TAU * problem.L)
    z0 = local_updates(problem, np.zeros(DIM), local_steps=TAU, step=step) / N
    return problem, step, float(np.linalg.norm(z0, axis=1).mean())


MAKERS = {"uniform_isp": lambda G: UniformISP(N, K), "kvib": lambda G: KVib(N, K, T, G=G),
          "kvib_code": lambda G: KVib(N, K, T, G=G, variant="code"),
          "oracle": lambda G: OracleISP(N, K)}


def test_uniform_plan_replays_the_per_round_draws():
    rng_a, rng_b = np.random.default_rng(8), np.random.default_rng(8)
    plan = sampler_uniforms([rng_a], n_rounds=6, n_clients=N)[0]
    assert np.array_equal(plan, np.stack([rng_b.random(N) for _ in range(6)]))
    replay = ReplayUniforms(plan)
    assert np.array_equal(replay.random(N), plan[0])
    with pytest.raises(ValueError, match="size"):
        replay.random(N + 1)


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_fedavg_sampler_batched_equals_unbatched(ridge_setup, name):
    problem, step, G = ridge_setup
    make = MAKERS[name]
    plan = sampler_uniforms(np.random.default_rng(9).spawn(N_REPS), n_rounds=T, n_clients=N)
    batch = fedavg_sampler_batched(problem, [make(G) for _ in range(N_REPS)], plan,
                                   local_steps=TAU, step=step, server_step=0.9)
    assert batch.x.shape == (N_REPS, T + 1, DIM)
    for b, rng in enumerate(np.random.default_rng(9).spawn(N_REPS)):
        one = fedavg_sampler(problem, make(G), rng, n_rounds=T, local_steps=TAU, step=step,
                             server_step=0.9)
        for field in one._fields:
            assert np.array_equal(getattr(batch, field)[b], getattr(one, field)), field


def test_fedavg_sampler_batched_with_stragglers(ridge_setup):
    problem, step, G = ridge_setup
    probs = np.linspace(0.3, 1.0, N)
    rngs = np.random.default_rng(10).spawn(3)
    avail = np.stack([Bernoulli(probs).plan(np.random.default_rng(20 + b), T) for b in range(3)])
    plan = sampler_uniforms(rngs, n_rounds=T, n_clients=N)
    batch = fedavg_sampler_batched(problem, [MAKERS["kvib"](G) for _ in range(3)], plan,
                                   local_steps=TAU, step=step, availability=avail,
                                   avail_probs=probs)
    for b, rng in enumerate(np.random.default_rng(10).spawn(3)):
        one = fedavg_sampler(problem, MAKERS["kvib"](G), rng, n_rounds=T, local_steps=TAU,
                             step=step, availability=avail[b], avail_probs=probs)
        assert np.array_equal(batch.x[b], one.x) and np.array_equal(batch.sizes[b], one.sizes)


def test_fedavg_sampler_batched_rejects_bad_input(ridge_setup):
    problem, step, G = ridge_setup
    plan = sampler_uniforms(np.random.default_rng(11).spawn(2), n_rounds=T, n_clients=N)
    with pytest.raises(ValueError, match="procedure 'isp'"):
        fedavg_sampler_batched(problem, [UniformRSP(N, K), UniformRSP(N, K)], plan,
                               local_steps=TAU, step=step)
    with pytest.raises(ValueError, match="one fresh sampler per replicate"):
        fedavg_sampler_batched(problem, [UniformISP(N, K)], plan, local_steps=TAU, step=step)
    shared = UniformISP(N, K)
    with pytest.raises(ValueError, match="distinct"):
        fedavg_sampler_batched(problem, [shared, shared], plan, local_steps=TAU, step=step)
    with pytest.raises(ValueError, match="uniforms"):
        fedavg_sampler_batched(problem, [UniformISP(N, K)], plan[:1, :, :-1],
                               local_steps=TAU, step=step)
    for value in (1.0, -0.5, float("nan")):     # above, below and NaN: two reductions see each
        bad = plan[:1].copy()
        bad[0, T // 2, N // 2] = value
        with pytest.raises(ValueError, match="uniforms"):
            fedavg_sampler_batched(problem, [UniformISP(N, K)], bad, local_steps=TAU, step=step)
    with pytest.raises(ValueError, match="local_steps"):
        fedavg_sampler_batched(problem, [UniformISP(N, K)], plan[:1], local_steps=0, step=step)
    with pytest.raises(ValueError, match="step"):
        fedavg_sampler_batched(problem, [UniformISP(N, K)], plan[:1], local_steps=TAU,
                               step=float("nan"))


def test_fedavg_sampler_batched_generic_path_for_mixed_samplers(ridge_setup):
    """Samplers with different settings run through their own methods (no compiled round)."""
    problem, step, G = ridge_setup
    makers = [lambda: KVib(N, K, T, G=G), lambda: KVib(N, K, T, G=2 * G), lambda: UniformISP(N, K)]
    plan = sampler_uniforms(np.random.default_rng(12).spawn(3), n_rounds=T, n_clients=N)
    batch = fedavg_sampler_batched(problem, [m() for m in makers], plan, local_steps=TAU,
                                   step=step)
    for b, rng in enumerate(np.random.default_rng(12).spawn(3)):
        one = fedavg_sampler(problem, makers[b](), rng, n_rounds=T, local_steps=TAU, step=step)
        assert np.array_equal(batch.x[b], one.x) and np.array_equal(batch.q_gap[b], one.q_gap)


def test_batched_kvib_leaves_sampler_state_as_unbatched(ridge_setup):
    problem, step, G = ridge_setup
    plan = sampler_uniforms(np.random.default_rng(13).spawn(2), n_rounds=T, n_clients=N)
    samplers = [KVib(N, K, T, G=G), KVib(N, K, T, G=G)]
    fedavg_sampler_batched(problem, samplers, plan, local_steps=TAU, step=step)
    for b, rng in enumerate(np.random.default_rng(13).spawn(2)):
        one = KVib(N, K, T, G=G)
        fedavg_sampler(problem, one, rng, n_rounds=T, local_steps=TAU, step=step)
        assert np.array_equal(samplers[b].omega, one.omega)


@pytest.mark.parametrize("n", [1, 5, 8, 9, 127, 128, 129, 300, 1031])
def test_numpy_sum_port_matches_np_sum(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n) * 10.0 ** rng.uniform(-4, 4, n)
    assert numpy_sum(a, n) == np.sum(a)


def test_isp_probabilities_port_matches_library_solver():
    rng = np.random.default_rng(14)
    for _ in range(300):
        n = int(rng.integers(1, 60))
        a = rng.exponential(size=n) ** rng.uniform(0.2, 4)
        a[rng.random(n) < rng.uniform(0, 0.5)] = 0.0
        k = float(rng.uniform(0.1, n)) if rng.random() < 0.5 else float(rng.integers(1, n + 1))
        p_min = 0.0 if rng.random() < 0.5 else float(rng.uniform(0, k / n))
        out = np.empty(n)
        isp_probabilities(a, k, p_min, np.empty(n), np.empty(n + 1), out)
        assert np.array_equal(out, waterfill_numpy(a, k, p_min))     # the NumPy twin
        assert np.array_equal(out, optimal_isp_probabilities(a, k, p_min=p_min))


def test_large_inputs_take_the_numpy_path_with_the_same_numbers():
    """Above COMPILED_MAX_N weights the solver is the NumPy twin; the port agrees there too."""
    rng = np.random.default_rng(15)
    n = COMPILED_MAX_N + 40
    a = rng.lognormal(0.0, 1.5, n)
    out = np.empty(n)
    isp_probabilities(a, n / 7, 0.01, np.empty(n), np.empty(n + 1), out)
    assert np.array_equal(out, optimal_isp_probabilities(a, n / 7, p_min=0.01))
