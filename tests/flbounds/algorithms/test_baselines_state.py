"""FedAU, MIFA, FedProx and FedNova with their state in the trace, against the NumPy twins
of tests/reference.py (one participant at a time, from the papers' algorithms)."""

import numpy as np
import pytest

from flbounds.algorithms import fedau, fedavg, fednova, fedprox, mifa, schedules
from flbounds.participation import Bernoulli
from tests import reference as ref
from tests.flbounds.algorithms.fedavg_twin import RTOL, TAU, D, N, R, make_problems


@pytest.fixture(scope="module")
def problems():
    return make_problems()


def _plan(seed, p=0.5):
    return Bernoulli(np.full(N, p)).plan(np.random.default_rng(seed), R)


STEPS = 0.2 / (1.0 + 0.2 * np.arange(R))


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("kind", ["quadratic", "ridge"])
def test_fedau_twin_and_weight_estimates(problems, kind):
    """The twin counts round r's own interval in its weights (``weights_from="current"``);
    the default, the authors' order, is checked against their code in test_authors_code."""
    prob, plan = problems[kind], _plan(1, 0.3)
    tr = fedau(prob, plan, step=STEPS, local_steps=TAU, server_step=0.8, max_interval=4,
               weights_from="current")
    xs, omegas = ref.fedau(prob, plan, STEPS, TAU, 0.8, 4, np.zeros(D))
    _close(tr.x, xs)
    np.testing.assert_array_equal(tr.omega, omegas)
    assert tr.omega.shape == (R + 1, N) and np.all(tr.omega[0] == 1.0)


@pytest.mark.parametrize("steps", [0.15, STEPS])
def test_mifa_twin_and_memory(problems, steps):
    prob, plan = problems["quadratic"], _plan(2)
    tr = mifa(prob, plan, step=steps, local_steps=TAU)
    xs, memory = ref.mifa(prob, plan, np.broadcast_to(steps, (R,)), TAU, np.zeros(D))
    _close(tr.x, xs)
    _close(tr.memory, memory)
    never = ~plan.any(axis=0)
    assert np.all(tr.memory[never] == 0.0)


def test_fedprox_twin_and_inexactness(problems):
    prob, plan = problems["ridge"], _plan(3)
    tr = fedprox(prob, plan, step=STEPS, local_steps=TAU, mu=0.5)
    _close(tr.x, ref.fedprox(prob, plan, STEPS, TAU, 0.5, np.zeros(D)))
    assert tr.mu == 0.5
    assert np.array_equal(np.isnan(tr.inexactness), ~plan)
    # more local steps solve the proximal subproblem better: gamma shrinks
    long = fedprox(prob, plan[:1] | True, step=0.1, local_steps=200, mu=1.0)
    short = fedprox(prob, plan[:1] | True, step=0.1, local_steps=1, mu=1.0)
    assert np.all(long.inexactness < short.inexactness)


def test_fedprox_without_proximal_term_is_fedavg(problems):
    prob, plan = problems["quadratic"], _plan(4)
    _close(fedprox(prob, plan, step=0.1, local_steps=TAU, mu=0.0).x,
           fedavg(prob, plan, step=0.1, local_steps=TAU).x)


def test_fednova_twin_with_heterogeneous_local_steps(problems):
    prob, plan = problems["quadratic"], _plan(5)
    taus = np.array([1, 2, 3, 4, 5, 6])
    tr = fednova(prob, plan, step=STEPS, local_steps=taus, server_step=0.9)
    xs, effs = ref.fednova(prob, plan, STEPS, taus, 0.9, np.zeros(D))
    _close(tr.x, xs)
    np.testing.assert_allclose(tr.tau_eff, effs, rtol=1e-14)
    assert np.array_equal(np.isnan(tr.updates[..., 0]), ~plan)


def test_fednova_with_equal_steps_and_uniform_weights_is_fedavg(problems):
    prob, plan = problems["ridge"], _plan(6)
    _close(fednova(prob, plan, step=0.1, local_steps=TAU).x,
           fedavg(prob, plan, step=0.1, local_steps=TAU).x)


def test_fednova_removes_the_objective_inconsistency():
    """Full participation, unequal tau_i, small steps: FedAvg (averaging the models) settles
    near the minimiser x_tau of the tau-weighted objective sum_i tau_i f_i, FedNova near x*
    of sum_i p_i f_i; both within the O(eta tau L) local drift, a tenth of |x* - x_tau| here."""
    from flbounds.problems import random_quadratics

    rng = np.random.default_rng(7)
    prob = random_quadratics(rng, 4, 2, mu=0.5, L=2.0)
    taus, eta, rounds = np.array([1, 1, 1, 20]), 0.01, 3000
    x_tau = np.linalg.solve(np.einsum("i,ipq->pq", taus * 1.0, prob.A), taus @ prob.b)
    gap = np.linalg.norm(prob.x_star - x_tau)
    x_nova = fednova(prob, np.ones((rounds, 4), dtype=bool), step=eta, local_steps=taus).x[-1]
    x = np.zeros(2)
    for _ in range(rounds):
        x = np.mean([ref._local(prob, x, i, [eta] * taus[i]) for i in range(4)], axis=0)
    assert np.linalg.norm(x_nova - prob.x_star) < 0.1 * gap
    assert np.linalg.norm(x - x_tau) < 0.1 * gap


@pytest.mark.parametrize("call, match", [
    (lambda p, plan: fedprox(p, plan, step=0.1, local_steps=TAU, mu=-1.0), "mu"),
    (lambda p, plan: fednova(p, plan, step=0.1, local_steps=np.array([1, 2]), ), "local_steps"),
    (lambda p, plan: fednova(p, plan, step=0.1, local_steps=TAU, server_step=0.0),
     "server_step"),
    (lambda p, plan: mifa(p, plan, step=np.full(R - 1, 0.1), local_steps=TAU), "step"),
    (lambda p, plan: fedau(p, plan, step=schedules.constant(0.1), local_steps=0),
     "local_steps"),
    (lambda p, plan: fedau(p, plan, step=0.1, local_steps=TAU, weights_from="now"),
     "weights_from"),
    (lambda p, plan: fedprox(p, plan.astype(int) * 2, step=0.1, local_steps=TAU, mu=0.1),
     "plan"),
])
def test_bad_input_names_the_argument(problems, call, match):
    with pytest.raises(ValueError, match=match):
        call(problems["quadratic"], _plan(8))
