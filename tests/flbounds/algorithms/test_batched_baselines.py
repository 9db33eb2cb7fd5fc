"""The batched baselines equal the per-plan functions replicate by replicate, bit for bit."""

import numpy as np
import pytest

from flbounds import algorithms
from flbounds.algorithms import batched_baselines as bb
from flbounds.participation import Bernoulli
from flbounds.problems import random_quadratics

NAMES = ("fedau", "mifa", "scaffold", "fedawe", "local_sgd_gossip")


class _Tape:
    """A problem whose gradients add the next rows of ``tape`` in call order."""

    def __init__(self, problem, tape):
        self.problem, self.tape, self.pos = problem, tape, 0
        self.n_clients, self.dim = problem.n_clients, problem.dim

    def client_gradients(self, X, *, clients=None):
        G = self.problem.client_gradients(X, clients=clients)
        k = G.shape[0]
        G = G + self.tape[self.pos:self.pos + k]
        self.pos += k
        return G


def _instance(n_clients, dim, p, n_reps=5, n_rounds=120, seed=0):
    rng = np.random.default_rng(seed)
    problem = random_quadratics(rng, n_clients, dim, mu=0.3, L=1.0)
    plans = np.array([Bernoulli(p).plan(child, n_rounds) for child in rng.spawn(n_reps)])
    return rng, problem, plans


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n_clients,dim,p", [(6, 3, 0.4), (10, 4, 0.2)])
def test_batched_equals_per_plan(name, n_clients, dim, p):
    _, problem, plans = _instance(n_clients, dim, np.full(n_clients, p))
    batched = getattr(bb, f"{name}_batched")(problem, plans, step=0.05, local_steps=3).x
    for b, plan in enumerate(plans):
        single = getattr(algorithms, name)(problem, plan, step=0.05, local_steps=3).x
        np.testing.assert_array_equal(batched[b], single)


@pytest.mark.parametrize("name", ("fedau", "mifa", "scaffold", "fedawe"))
def test_tapes_are_read_in_call_order(name):
    rng, problem, plans = _instance(8, 3, np.linspace(0.1, 0.9, 8))
    tapes = [rng.standard_normal((int(plan.sum()) * 2, 3)) for plan in plans]
    batched = getattr(bb, f"{name}_batched")(problem, plans, step=0.02, local_steps=2,
                                             tapes=tapes).x
    for b, plan in enumerate(plans):
        single = getattr(algorithms, name)(_Tape(problem, tapes[b]), plan, step=0.02,
                                           local_steps=2).x
        np.testing.assert_array_equal(batched[b], single)


def test_options_and_schedules_match():
    _, problem, plans = _instance(6, 3, np.full(6, 0.5))
    steps = np.linspace(0.08, 0.02, plans.shape[1])
    for kw in (dict(weights_from="current", max_interval=3, server_step=0.7), {}):
        batched = bb.fedau_batched(problem, plans, step=steps, local_steps=2, **kw).x
        for b, plan in enumerate(plans):
            np.testing.assert_array_equal(
                batched[b], algorithms.fedau(problem, plan, step=steps, local_steps=2, **kw).x)
    batched = bb.scaffold_batched(problem, plans, step=0.05, local_steps=2, server_step=0.5).x
    for b, plan in enumerate(plans):
        np.testing.assert_array_equal(batched[b], algorithms.scaffold(
            problem, plan, step=0.05, local_steps=2, server_step=0.5).x)


def test_bad_input_raises_before_work():
    rng, problem, plans = _instance(6, 3, np.full(6, 0.5))
    with pytest.raises(ValueError, match="plans"):
        bb.mifa_batched(problem, plans[0], step=0.1, local_steps=2)
    with pytest.raises(ValueError, match="tapes"):
        bb.mifa_batched(problem, plans, step=0.1, local_steps=2, tapes=[np.zeros((9, 3))])
    with pytest.raises(ValueError, match="exhausted"):
        bb.scaffold_batched(problem, plans, step=0.1, local_steps=2,
                            tapes=[np.zeros((3, 3))] * plans.shape[0])
    with pytest.raises(ValueError, match="weights_from"):
        bb.fedau_batched(problem, plans, step=0.1, local_steps=2, weights_from="future")
