"""The generic round with a server state: SCAFFOLD's control variates through
``fedavg_family`` against the built-in ``scaffold``, the Python path against the compiled one,
and the checks of the new arguments."""

import numpy as np
import pytest

from flbounds.algorithms import (
    aggregation,
    fedavg_family,
    fedavg_family_batched,
    local_gd,
    local_scaffold,
    local_update,
    scaffold,
)
from flbounds.participation import Bernoulli
from flbounds.problems import random_quadratics, random_ridge

#: the two SCAFFOLDs divide by tau*eta and by a sum of tau etas, and sum the control updates in
#: another order: a few roundings of O(1) numbers per round over <= 30 contractive rounds
ROUNDING = 1e-12
N, D = 7, 3


def _plan(rounds=30, p=0.5, seed=2):
    plan = Bernoulli(np.full(N, p)).plan(np.random.default_rng(seed), rounds)
    plan[min(4, rounds - 1)] = False                  # an empty round
    return plan


@pytest.mark.parametrize("make", [random_quadratics, random_ridge])
@pytest.mark.parametrize("server_step", [1.0, 0.7])
def test_scaffold_through_the_generic_round(make, server_step):
    rng = np.random.default_rng(11)
    problem = make(rng, N, 10, D, lam=0.1) if make is random_ridge else \
        make(rng, N, D, mu=0.3, L=2.0)
    plan, x0 = _plan(), rng.standard_normal(D)
    want = scaffold(problem, plan, step=0.05, local_steps=4, x0=x0, server_step=server_step)
    got = fedavg_family(problem, plan, local_scaffold(D), step=0.05, local_steps=4, x0=x0,
                        server_step=server_step)
    np.testing.assert_allclose(got.x, want.x, rtol=0, atol=ROUNDING)
    np.testing.assert_allclose(got.server, want.c[-1], rtol=0, atol=ROUNDING)
    np.testing.assert_allclose(got.state, want.c_clients, rtol=0, atol=ROUNDING)
    plain = fedavg_family(problem, plan, local_gd(), step=0.05, local_steps=4, x0=x0,
                          server_step=server_step)
    assert np.abs(plain.x - want.x).max() > 1e3 * ROUNDING    # the controls matter here


def _py_step(z, g, x, state, server, eta, params):
    for p in range(z.shape[0]):
        z[p] -= eta * (g[p] - state[p] + server[p])


def _py_finish(z, x, state, server, report, eta_sum, params):
    for p in range(z.shape[0]):
        new = state[p] - server[p] + (x[p] - z[p]) / eta_sum
        report[p] = new - state[p]
        state[p] = new


def test_python_path_is_the_compiled_path():
    problem = random_quadratics(np.random.default_rng(3), N, D, mu=0.3, L=2.0)
    plan = _plan(12)
    counts = plan.astype(np.int64) * 2                 # counts weight the reports too
    python = local_update(_py_step, state_size=D, finish=_py_finish, server_size=D)
    assert not python.compiled and local_scaffold(D).compiled
    for p in (plan, counts):
        a = fedavg_family(problem, p, local_scaffold(D), step=0.05, local_steps=3,
                          server0=np.full(D, 0.1))
        b = fedavg_family(problem, p, python, step=0.05, local_steps=3,
                          server0=np.full(D, 0.1))
        assert np.array_equal(a.x, b.x) and np.array_equal(a.server, b.server)
        assert np.array_equal(a.state, b.state)


def test_batched_replicates_are_single_runs():
    problem = random_quadratics(np.random.default_rng(4), N, D, mu=0.3, L=2.0)
    plans = np.array([_plan(10, seed=s) for s in range(3)])
    batch = fedavg_family_batched(problem, plans, local_scaffold(D), step=0.05,
                                  local_steps=2, aggregation=aggregation.uniform())
    for b, plan in enumerate(plans):
        one = fedavg_family(problem, plan, local_scaffold(D), step=0.05, local_steps=2)
        assert np.array_equal(batch.x[b], one.x) and np.array_equal(batch.server[b],
                                                                     one.server)
    assert fedavg_family(problem, plans[0], local_gd(), step=0.05, local_steps=2).server \
        is None


def _small():
    return random_quadratics(np.random.default_rng(0), N, D, mu=0.3, L=2.0)


@pytest.mark.parametrize("make, match", [
    (lambda: local_update(_py_step, finish=3), "finish"),
    (lambda: local_update(_py_step, server_size=2), "server_size"),
    (lambda: local_update(local_scaffold(D).step, finish=_py_finish, server_size=D), "finish"),
    (lambda: fedavg_family(_small(), _plan(3),
                           local_scaffold(D), step=0.1, local_steps=1, server0=np.zeros(2)),
     "server0"),
    (lambda: fedavg_family(_small(), _plan(3),
                           local_gd(), step=0.1, local_steps=1, server0=np.zeros(D)),
     "server0"),
    (lambda: fedavg_family(_small(), _plan(3),
                           local_update(lambda z, g, x, s, e, p: None, finish=_py_finish),
                           step=0.1, local_steps=1), "local"),
    (lambda: local_scaffold(0), "dim"),
])
def test_bad_input_names_the_argument(make, match):
    with pytest.raises(ValueError, match=match):
        make()
