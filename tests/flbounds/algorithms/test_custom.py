"""Custom local updates: the generic FedAvg-family round with a user's step, compiled or in
Python, against the built-ins (bit for bit) and NumPy twins."""

import numba
import numpy as np
import pytest

from flbounds.algorithms import (
    aggregation,
    fedavg,
    fedavg_batched,
    fedavg_family,
    fedavg_family_batched,
    fedprox,
    local_gd,
    local_momentum,
    local_prox,
    local_update,
    schedules,
)
from flbounds.participation import Bernoulli, WithReplacement
from tests import reference as ref
from tests.flbounds.algorithms.fedavg_twin import RTOL, TAU, D, N, R, make_problems


@pytest.fixture(scope="module")
def problems():
    return make_problems()


def _plan(seed, p=0.5):
    return Bernoulli(np.full(N, p)).plan(np.random.default_rng(seed), R)


@pytest.mark.parametrize("kind", ["quadratic", "ridge", "fused"])
def test_local_gd_is_fedavg_to_the_bit(problems, kind):
    """The constant-step default (FedAvg's parallel compiled loop), a per-local-step schedule
    and a counts plan with a weighted rule (the general loop): the same bits."""
    prob, plan = problems[kind], _plan(1)
    gd = local_gd()
    assert np.array_equal(fedavg_family(prob, plan, gd, step=0.1, local_steps=TAU).x,
                          fedavg(prob, plan, step=0.1, local_steps=TAU).x)
    sched = schedules.inverse_time(1.0, 8.0, per="local_step")
    assert np.array_equal(fedavg_family(prob, plan, gd, step=sched, local_steps=TAU).x,
                          fedavg(prob, plan, step=sched, local_steps=TAU).x)
    counts = WithReplacement(np.full(N, 1.0 / N), 4).plan(np.random.default_rng(2), R)
    rule = aggregation.sample_counts(np.arange(1.0, N + 1))
    assert np.array_equal(
        fedavg_family(prob, counts, gd, step=0.1, local_steps=TAU, aggregation=rule).x,
        fedavg(prob, counts, step=0.1, local_steps=TAU, aggregation=rule).x)


def test_python_step_is_the_compiled_step(problems):
    """The same step as a plain Python function (numba's ``py_func``) runs the Python loop
    with the same numbers, states included."""
    prob, plan = problems["ridge"], _plan(3)
    fast = local_momentum(0.7, D)
    slow = local_update(fast.step.py_func, params=fast.params, state_size=D)
    a = fedavg_family(prob, plan, fast, step=0.05, local_steps=TAU, server_step=0.8)
    b = fedavg_family(prob, plan, slow, step=0.05, local_steps=TAU, server_step=0.8)
    assert not slow.compiled and fast.compiled
    assert np.array_equal(a.x, b.x) and np.array_equal(a.state, b.state)


def test_momentum_twin(problems):
    prob, plan = problems["quadratic"], _plan(4)
    steps = 0.1 / (1.0 + 0.1 * np.arange(R))
    tr = fedavg_family(prob, plan, local_momentum(0.5, D), step=steps, local_steps=TAU,
                       server_step=0.9)
    xs, m = ref.fedavg_momentum(prob, plan, steps, TAU, 0.5, 0.9, np.zeros(D))
    np.testing.assert_allclose(tr.x, xs, rtol=RTOL, atol=RTOL * np.abs(xs).max())
    np.testing.assert_allclose(tr.state, m, rtol=RTOL, atol=RTOL * np.abs(m).max())


def test_prox_step_is_fedprox(problems):
    prob, plan = problems["ridge"], _plan(5)
    got = fedavg_family(prob, plan, local_prox(0.3), step=0.1, local_steps=TAU).x
    want = fedprox(prob, plan, step=0.1, local_steps=TAU, mu=0.3).x
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())


def test_replicates_and_threads(problems):
    """Replicate b of the batched run is the single run on plans[b]; the loop is serial, so
    the thread count does not change a bit; local_gd's replicates are fedavg_batched's."""
    prob = problems["quadratic"]
    plans = np.stack([_plan(s) for s in (6, 7, 8)])
    local = local_momentum(0.3, D)
    runs = []
    for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
        before = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            runs.append(fedavg_family_batched(prob, plans, local, step=0.1, local_steps=TAU))
        finally:
            numba.set_num_threads(before)
    assert np.array_equal(runs[0].x, runs[1].x) and np.array_equal(runs[0].state, runs[1].state)
    for b in range(3):
        single = fedavg_family(prob, plans[b], local, step=0.1, local_steps=TAU)
        assert np.array_equal(runs[0].x[b], single.x)
        assert np.array_equal(runs[0].state[b], single.state)
    assert np.array_equal(
        fedavg_family_batched(prob, plans, local_gd(), step=0.1, local_steps=TAU).x,
        fedavg_batched(prob, plans, step=0.1, local_steps=TAU).x)


@numba.njit
def _two_arguments(z, g):
    z[0] -= g[0]


@pytest.mark.parametrize("call, match", [
    (lambda p, plan: fedavg_family(p, plan, lambda *a: None, step=0.1, local_steps=1), "local"),
    (lambda p, plan: fedavg_family(p, plan, local_momentum(0.5, D), step=0.1, local_steps=1,
                                   state0=np.zeros((N, D + 1))), "state0"),
    (lambda p, plan: fedavg_family(p, plan, local_gd(), step=0.1, local_steps=1,
                                   server_step=-1.0), "server_step"),
    (lambda p, plan: fedavg_family(p, plan, local_gd(), step=np.full(R - 1, 0.1),
                                   local_steps=1), "shorter than the run"),
    (lambda p, plan: local_update(lambda *a: None, params=[np.nan]), "params"),
    (lambda p, plan: local_update(3.0), "step"),
    (lambda p, plan: fedavg_family(p, plan, local_update(lambda z, g: None), step=0.1,
                                   local_steps=1), "local"),
    (lambda p, plan: fedavg_family(p, plan, local_update(_two_arguments), step=0.1,
                                   local_steps=1), "local"),
    (lambda p, plan: local_momentum(1.0, D), "beta"),
    (lambda p, plan: local_prox(-1.0), "mu"),
    (lambda p, plan: fedavg_family(p, plan[None], local_gd(), step=0.1, local_steps=1),
     "plan"),
    (lambda p, plan: fedavg_family_batched(p, plan, local_gd(), step=0.1, local_steps=1),
     "plans"),
])
def test_bad_input_names_the_argument(problems, call, match):
    with pytest.raises(ValueError, match=match):
        call(problems["quadratic"], _plan(9))
