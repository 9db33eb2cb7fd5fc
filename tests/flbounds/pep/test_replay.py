"""Described rounds run on arrays agree with the simulated algorithms of flbounds.algorithms
on every participating set, and the PEP's worst case is attained by a replayed instance."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli, all_masks
from flbounds.pep.expect import law_of
from flbounds.pep.replay import QuadraticClient, expected_measure, run_round, start_state

#: two evaluations of the same float64 arithmetic in another order: a few roundings of O(1)
#: numbers over a handful of steps
ROUNDING = 1e-12


@pytest.fixture
def problem():
    from flbounds.problems import Quadratic

    rng = np.random.default_rng(0)
    M = rng.standard_normal((3, 2, 2))
    A = np.einsum("nij,nkj->nik", M, M) + np.eye(2)
    return Quadratic(A, rng.standard_normal((3, 2)))


def _clients(problem):
    return [QuadraticClient(problem, i) for i in range(problem.n_clients)]


def test_fedavg_description_is_fedavg(problem):
    from flbounds.algorithms import fedavg

    x0 = np.array([0.3, -1.2])
    rnd = pep.fedavg_round(3, 0.05)
    for mask in all_masks(3):
        server, _ = run_round(rnd, _clients(problem), start_state(rnd, _clients(problem),
                                                                  {"x": x0}), mask)
        ref = fedavg(problem, mask[None, :], step=0.05, local_steps=3, x0=x0).x[-1]
        np.testing.assert_allclose(server["x"].v, ref, atol=ROUNDING)


def test_focus_description_is_focus(problem):
    from flbounds.algorithms import FocusState, focus

    rng = np.random.default_rng(1)
    x0, z = rng.standard_normal(2), rng.standard_normal((3, 2))
    rnd = pep.focus_round(3, 0.05)
    clients = _clients(problem)
    state = start_state(rnd, clients, {"x": x0, "z": z})
    g = np.array([c["g"].v for c in state[1]])
    for mask in all_masks(3):
        server, own = run_round(rnd, clients, state, mask)
        start = FocusState(x0.copy(), g.sum(axis=0), g.copy(), z.copy())
        ref = focus(problem, mask[None, :], step=0.05, local_steps=3, start=start)
        np.testing.assert_allclose(server["x"].v, ref.x[-1], atol=ROUNDING)
        np.testing.assert_allclose(server["y"].v, ref.y[-1], atol=ROUNDING)
        np.testing.assert_allclose([c["g"].v for c in own], ref.g, atol=ROUNDING)
        np.testing.assert_allclose([c["z"].v for c in own], ref.models, atol=ROUNDING)


def test_scaffold_description_is_scaffold(problem):
    """Two rounds from zero controls (the second uses the controls the first stored)."""
    from flbounds.algorithms import scaffold

    x0 = np.array([1.0, 0.5])
    rnd = pep.scaffold_round(2, 0.05, 3)
    clients = _clients(problem)
    for first in all_masks(3)[1:]:
        for second in all_masks(3)[1:]:
            state = start_state(rnd, clients, {"x": x0, "ci": np.zeros((3, 2))})
            state = run_round(rnd, clients, run_round(rnd, clients, state, first), second)
            ref = scaffold(problem, np.array([first, second]), step=0.05, local_steps=2,
                           x0=x0).x[-1]
            np.testing.assert_allclose(state[0]["x"].v, ref, atol=ROUNDING)


def test_the_fedavg_worst_case_is_attained_by_a_replayed_instance():
    """Identical clients f = a x^2 / 2 with a in {mu, L} maximising |1 - eta a| (the
    gradient-descent extremal quadratic): the description, run on it over every set, gives
    the PEP's worst case."""
    from flbounds.problems import Quadratic

    proc = Bernoulli([0.3, 0.6, 0.9])
    mu, L, step, tau = 1.0, 2.0, 0.7, 2
    a = mu if abs(1 - step * mu) >= abs(1 - step * L) else L
    instance = Quadratic(np.full((3, 1, 1), a), np.zeros((3, 1)))
    rnd = pep.fedavg_round(tau, step)
    worst = pep.worst_case(rnd, pep.Setting(3, mu, L, identical=True), pep.distance(), proc)
    replayed = expected_measure(rnd, instance, {"x": np.ones(1)}, law_of(proc, 3),
                                pep.distance())
    assert abs(replayed - worst.worst) <= 2 * pep.gap_tolerance(worst.worst)
