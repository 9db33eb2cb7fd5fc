"""Schedules in the sampler runs, FedALS, the matrix forms and the batched kernels: NumPy
twins, the federated forms, and replicate b of a batched run equal to the single run."""

import numba
import numpy as np
import pytest

from flbounds.algorithms import (
    fedals,
    fedavg,
    fedavg_batched,
    fedavg_matrix,
    fedavg_sampler,
    fedavg_sampler_batched,
    fedavg_virtual,
    focus,
    focus_batched,
    focus_matrix,
    local_sgd_fedavg,
    sampler_uniforms,
    schedules,
)
from flbounds.participation import Bernoulli
from flbounds.sampling import KVib, UniformISP
from tests import reference as ref
from tests.flbounds.algorithms.fedavg_twin import RTOL, TAU, D, N, R, make_problems


@pytest.fixture(scope="module")
def problems():
    return make_problems()


def _steps(n):
    return 0.3 / (2.0 + np.arange(n))


@pytest.mark.parametrize("diagnostics", [True, False])
def test_sampler_run_with_a_schedule_matches_the_twin(problems, diagnostics):
    """A per-round schedule leaves the one compiled loop for the round-by-round path; both
    agree with the NumPy twin of FedAvg with a uniform ISP sampler and steps eta_t."""
    prob, K = problems["ridge"], 3
    plan = sampler_uniforms([np.random.default_rng(1)], n_rounds=R, n_clients=N)
    got = fedavg_sampler_batched(prob, [UniformISP(N, K)], plan, local_steps=TAU,
                                 step=_steps(R), server_step=0.9, diagnostics=diagnostics)
    want = ref.fedavg_uniform_isp(prob, plan[0], K, _steps(R), TAU, 0.9, np.zeros(D))
    np.testing.assert_allclose(got.x[0], want, rtol=RTOL, atol=RTOL * np.abs(want).max())
    single = fedavg_sampler(prob, UniformISP(N, K), np.random.default_rng(1), n_rounds=R,
                            local_steps=TAU, step=_steps(R), server_step=0.9,
                            diagnostics=diagnostics)
    assert np.array_equal(single.x, got.x[0])


def test_sampler_constant_schedule_is_the_number(problems):
    prob = problems["quadratic"]
    plan = sampler_uniforms([np.random.default_rng(s) for s in (2, 3)], n_rounds=R,
                            n_clients=N)
    runs = [fedavg_sampler_batched(prob, [KVib(N, 3, R, G=1.0), KVib(N, 3, R, G=1.0)], plan,
                                   local_steps=TAU, step=step, diagnostics=False).x
            for step in (0.1, schedules.constant(0.1), np.full(R, 0.1))]
    assert all(np.array_equal(runs[0], other) for other in runs[1:])
    changed = fedavg_sampler_batched(prob, [KVib(N, 3, R, G=1.0), KVib(N, 3, R, G=1.0)], plan,
                                     local_steps=TAU, step=np.r_[np.full(R - 1, 0.1), 0.05],
                                     diagnostics=False).x
    assert np.array_equal(changed[:, :-1], runs[0][:, :-1])
    assert not np.array_equal(changed[:, -1], runs[0][:, -1])


@pytest.mark.parametrize("step, match", [
    (np.full(R - 1, 0.1), "shorter than the run"),
    (-0.1, "step"),
    (schedules.inverse_time(1.0, 2.0, per="local_step"), "one step per round"),
])
def test_sampler_bad_steps(problems, step, match):
    with pytest.raises(ValueError, match=match):
        fedavg_sampler(problems["ridge"], UniformISP(N, 3), np.random.default_rng(0),
                       n_rounds=R, local_steps=TAU, step=step)


def test_matrix_forms_take_schedules(problems):
    """The literal matrix forms with steps eta_{r,t} (FedAvg) and eta_r (FOCUS) are the
    federated forms with the same schedule."""
    prob = problems["quadratic"]
    plan = Bernoulli(np.full(N, 0.6)).plan(np.random.default_rng(4), R)
    per_step = schedules.inverse_time(2.0, 10.0, per="local_step")
    want = fedavg(prob, plan, step=per_step, local_steps=TAU).x
    for form in (fedavg_matrix, fedavg_virtual):
        got = form(prob, plan, step=per_step, local_steps=TAU)
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())
    tracked = focus(prob, plan, step=_steps(R), local_steps=TAU).x
    got = focus_matrix(prob, plan, step=_steps(R), local_steps=TAU)
    np.testing.assert_allclose(got, tracked, rtol=RTOL, atol=RTOL * np.abs(tracked).max())
    with pytest.raises(ValueError, match="step"):
        fedavg_matrix(prob, plan, step=np.full(R - 2, 0.1), local_steps=TAU)
    with pytest.raises(ValueError, match="one step per round"):
        focus_matrix(prob, plan, step=per_step, local_steps=TAU)


def _quadratic_oracle(K, P, rng):
    A = rng.random((K, P)) + 0.5
    b = rng.standard_normal((K, P))
    return lambda theta, batch: A * theta - b + 0.01 * batch


def test_fedals_with_a_schedule_is_local_sgd(problems):
    """FedALS with one group synced every tau steps is FedAvg (Algorithm 2) with the same
    per-step schedule, bit for bit; the twin reads the schedule per (round, local step)."""
    rng = np.random.default_rng(5)
    K, P, rounds = 4, 3, 5
    grad = _quadratic_oracle(K, P, rng)
    plan = rng.standard_normal((rounds * TAU, K, P))
    theta0 = np.zeros((K, P))
    steps = schedules.inverse_time(1.0, 4.0, per="local_step")
    flat = steps.steps(rounds, TAU).ravel()
    sync = np.zeros((rounds * TAU, 1), dtype=bool)
    sync[TAU - 1::TAU] = True
    got = fedals(grad, theta0, plan, step=flat, sync=sync, groups=[slice(0, P)]).output
    want = local_sgd_fedavg(grad, theta0, plan, step=steps, local_steps=TAU,
                            n_rounds=rounds)
    assert np.array_equal(got, want)
    with pytest.raises(ValueError, match="shorter than the run"):
        fedals(grad, theta0, plan, step=flat[:-1], sync=sync, groups=[slice(0, P)])


def test_fedals_scaffold_schedule_twin():
    """SCAFFOLD controls with a schedule divide the drift by the steps taken since the sync
    (eta P for a constant step); NumPy twin with one group."""
    rng = np.random.default_rng(6)
    K, P, n_steps, period = 3, 2, 12, 3
    grad = _quadratic_oracle(K, P, rng)
    plan = rng.standard_normal((n_steps, K, P))
    steps = 0.2 / (1.0 + 0.1 * np.arange(n_steps))
    sync = np.zeros((n_steps, 1), dtype=bool)
    sync[period - 1::period] = True
    got = fedals(grad, np.zeros((K, P)), plan, step=steps, sync=sync, groups=[slice(0, P)],
                 control="scaffold", periods=[period])
    theta, prev = np.zeros((K, P)), np.zeros((K, P))
    c_k, c, since = np.zeros((K, P)), np.zeros(P), 0.0
    for s in range(n_steps):
        theta = theta - steps[s] * (grad(theta, plan[s]) - c_k + c)
        since += steps[s]
        if sync[s, 0]:
            c_k = c_k - c_k.mean(axis=0) + (prev - theta) / since
            c = c_k.mean(axis=0)
            theta = np.tile(theta.mean(axis=0), (K, 1))
            prev, since = theta.copy(), 0.0
    np.testing.assert_allclose(got.output, theta.mean(axis=0), rtol=1e-12, atol=1e-14)
    constant = fedals(grad, np.zeros((K, P)), plan, step=0.2, sync=sync,
                      groups=[slice(0, P)], control="scaffold", periods=[period])
    same = fedals(grad, np.zeros((K, P)), plan, step=schedules.constant(0.2), sync=sync,
                  groups=[slice(0, P)], control="scaffold", periods=[period])
    assert np.array_equal(constant.output, same.output)


@pytest.mark.parametrize("threads", [1, 2])
def test_batched_kernels_run_a_varying_schedule(problems, threads):
    """FedAvg and FOCUS replicate-batched with steps eta_r: replicate b is the single run,
    bit for bit, on one thread and on two."""
    if threads > numba.config.NUMBA_NUM_THREADS:
        pytest.skip("one thread only")
    prob = problems["quadratic"]
    plans = Bernoulli(np.full(N, 0.5)).plan(np.random.default_rng(7), 3 * R).reshape(3, R, N)
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        batched = fedavg_batched(prob, plans, step=_steps(R), local_steps=TAU)
        tracked = focus_batched(prob, plans, step=_steps(R), local_steps=TAU)
    finally:
        numba.set_num_threads(before)
    for b in range(3):
        assert np.array_equal(batched.x[b], fedavg(prob, plans[b], step=_steps(R),
                                                    local_steps=TAU).x)
        single = focus(prob, plans[b], step=_steps(R), local_steps=TAU)
        assert np.array_equal(tracked.x[b], single.x) and np.array_equal(tracked.y[b], single.y)
    with pytest.raises(ValueError, match="shorter than the run"):
        fedavg_batched(prob, plans, step=_steps(R - 1), local_steps=TAU)


def test_local_sgd_fedavg_checks_weights_before_work():
    calls = []

    def grad(theta, batch):
        calls.append(1)
        return theta

    with pytest.raises(ValueError, match="weights"):
        local_sgd_fedavg(grad, np.zeros((3, 2)), [None] * 4, step=0.1, local_steps=2,
                         n_rounds=2, weights=[0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="step"):
        local_sgd_fedavg(grad, np.zeros((3, 2)), [None] * 4, step=-0.1, local_steps=2,
                         n_rounds=2)
    assert calls == []
