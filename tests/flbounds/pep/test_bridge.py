"""One local rule, two uses: the simulated algorithm and the described round replayed on
arrays agree on every participating set, and the round's worst case solves and bounds the
replayed instance."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli, all_masks
from flbounds.pep.bridge import (
    LocalRule,
    control_variates,
    gradient_steps,
    local_update,
    pep_round,
    proximal_steps,
    simulate,
)
from flbounds.pep.expect import law_of
from flbounds.pep.replay import QuadraticClient, expected_measure, run_round, start_state
from flbounds.problems import Quadratic

#: the same float64 arithmetic in another order (NumPy reductions against Python sums of
#: Vectors): a few roundings of O(1) numbers over two rounds of a few steps
ROUNDING = 1e-12
N, D = 3, 2
RULES = [gradient_steps(3, 0.1, global_step=0.8), proximal_steps(2, 0.15, 0.5),
         control_variates(2, 0.1, global_step=1.3)]


def _problem(common_minimizer=False):
    rng = np.random.default_rng(5)
    M = rng.standard_normal((N, D, D))
    A = np.einsum("nij,nkj->nik", M, M) + np.eye(D)
    b = np.zeros((N, D)) if common_minimizer else rng.standard_normal((N, D))
    return Quadratic(A, b)


def _free(rule, x0):
    return {"x": x0, "ci": np.zeros((N, D))} if rule.kind == "control variate" else {"x": x0}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.kind)
def test_replayed_description_is_the_simulation(rule):
    """Two rounds over every pair of participating sets (empty ones included), from zero
    controls for SCAFFOLD (the simulation's start)."""
    problem = _problem()
    clients = [QuadraticClient(problem, i) for i in range(N)]
    x0 = np.array([0.7, -1.1])
    rnd = pep_round(rule, N)
    for first in all_masks(N):
        for second in all_masks(N):
            state = start_state(rnd, clients, _free(rule, x0))
            server, own = run_round(rnd, clients, run_round(rnd, clients, state, first),
                                    second)
            trace = simulate(rule, problem, np.array([first, second]), x0=x0)
            np.testing.assert_allclose(server["x"].v, trace.x[-1], rtol=0, atol=ROUNDING)
            if rule.kind == "control variate":
                np.testing.assert_allclose(server["c"].v, trace.server, rtol=0,
                                           atol=ROUNDING)
                np.testing.assert_allclose([c["ci"].v for c in own], trace.state,
                                           rtol=0, atol=ROUNDING)


def test_a_wrong_rule_is_seen():
    """The check above fails when the two sides are built from different rules."""
    problem, x0 = _problem(), np.array([0.7, -1.1])
    clients = [QuadraticClient(problem, i) for i in range(N)]
    rnd = pep_round(proximal_steps(2, 0.15, 0.5), N)
    server, _ = run_round(rnd, clients, start_state(rnd, clients, {"x": x0}), np.ones(N, bool))
    other = simulate(gradient_steps(2, 0.15), problem, np.ones((1, N), bool), x0=x0)
    assert np.abs(server["x"].v - other.x[-1]).max() > 1e3 * ROUNDING


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.kind)
def test_worst_case_solves_and_bounds_the_replayed_instance(rule):
    """Clients mu-strongly convex and L-smooth (mu, L the instance's extreme eigenvalues)
    sharing x* = 0, Bernoulli participation: the worst case solves, and the exact
    expectation of the same measure on the instance (the description replayed on arrays over
    every set) lies below it."""
    problem = _problem(common_minimizer=True)
    eig = np.linalg.eigvalsh(np.asarray(problem.A))
    mu, L = float(eig.min()), float(eig.max())
    proc = Bernoulli([0.4, 0.7, 0.9])
    if rule.kind == "control variate":
        measure = pep.scaffold_lyapunov(1.0)
    else:
        measure = pep.distance()
    rnd = pep_round(rule, N)
    worst = pep.worst_case(rnd, pep.Setting(N, mu, L, common_minimizer=True), measure, proc)
    assert np.isfinite(worst.worst) and worst.worst > 0
    rng = np.random.default_rng(8)
    free = _free(rule, rng.standard_normal(D))
    if rule.kind == "control variate":
        free["ci"] = rng.standard_normal((N, D))
    replayed = expected_measure(rnd, problem, free, law_of(proc, N), measure)
    assert replayed <= worst.worst + 2 * pep.gap_tolerance(worst.worst)


def test_local_update_is_the_simulation_step():
    assert local_update(gradient_steps(2, 0.1)).label == "gradient step"
    prox = local_update(proximal_steps(2, 0.1, 0.3))
    assert prox.params.tolist() == [0.3]
    with pytest.raises(ValueError, match="dim"):
        local_update(control_variates(2, 0.1))
    assert local_update(control_variates(2, 0.1), dim=3).server_size == 3


@pytest.mark.parametrize("make, match", [
    (lambda: gradient_steps(0, 0.1), "local_steps"),
    (lambda: gradient_steps(2, -0.1), "step"),
    (lambda: proximal_steps(2, 0.1, 0.0), "prox"),
    (lambda: control_variates(2, 0.1, global_step=0.0), "global_step"),
    (lambda: LocalRule("momentum", 2, 0.1), "kind"),
    (lambda: LocalRule("gradient", 2, 0.1, prox=0.2), "prox"),
    (lambda: pep_round(gradient_steps(2, 0.1), 0), "n_clients"),
    (lambda: simulate("fedavg", _problem(), np.ones((1, N), bool)), "rule"),
])
def test_bad_input_names_the_argument(make, match):
    with pytest.raises(ValueError, match=match):
        make()
