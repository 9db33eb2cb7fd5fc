"""SAFARI, FedAU, MIFA and K-Vib's sampled step as descriptions (flbounds.pep.described_server)
run on arrays agree with flbounds.algorithms on a small quadratic instance, round by round."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import all_masks
from flbounds.pep.described_server import (
    fedau_round,
    kvib_round,
    mifa_round,
    safari_round,
    server_gradient_round,
)
from flbounds.pep.replay import QuadraticClient, run_round, start_state

#: two evaluations of the same float64 arithmetic in another order: a few roundings of O(1)
#: numbers over a handful of steps
ROUNDING = 1e-12


@pytest.fixture
def problem():
    from flbounds.problems import Quadratic

    rng = np.random.default_rng(3)
    M = rng.standard_normal((3, 2, 2))
    A = np.einsum("nij,nkj->nik", M, M) + np.eye(2)
    return Quadratic(A, rng.standard_normal((3, 2)))


def _clients(problem):
    return [QuadraticClient(problem, i) for i in range(problem.n_clients)]


def _safari_step(problem, client_round, members, x0, K, eta_c, eta_s):
    from flbounds.algorithms.safari import SafariPlan, safari

    m = len(members)
    plan = SafariPlan(np.array([client_round]), np.array([members], dtype=np.int64),
                      np.zeros((1, m, K, 2)), np.zeros((1, 2)))
    return safari(problem, plan, step_client=eta_c, step_server=eta_s, x0=x0).x[-1]


def test_safari_description_is_safari(problem):
    """Both branches: the client round on every non-empty set, the server step (all clients)."""
    x0, K, eta_c, eta_s = np.array([0.4, -0.9]), 3, 0.05, 0.07
    mixture = safari_round(0.5, K, eta_c, eta_s)
    client, server = (b.round for b in mixture.branches)
    clients = _clients(problem)
    state = start_state(client, clients, {"x": x0})
    for mask in all_masks(3)[1:]:
        got, _ = run_round(client, clients, state, mask)
        ref = _safari_step(problem, True, np.flatnonzero(mask).tolist(), x0, K, eta_c, eta_s)
        np.testing.assert_allclose(got["x"].v, ref, atol=ROUNDING)
    got, _ = run_round(server, clients, state, np.ones(3, dtype=bool))
    ref = _safari_step(problem, False, [0], x0, K, eta_c, eta_s)
    np.testing.assert_allclose(got["x"].v, ref, atol=ROUNDING)
    assert server.local.label == server_gradient_round(eta_s).local.label


def test_safari_mixture_rejects_bad_input():
    with pytest.raises(ValueError, match="q"):
        safari_round(1.5, 2, 0.1, 0.1)
    with pytest.raises(ValueError, match="probabilities"):
        pep.Mixture("bad", ((0.5, server_gradient_round(0.1)),))


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("weights_from, row", [("past", 0), ("current", 1)])
def test_fedau_description_is_fedau(problem, normalize, weights_from, row):
    """Four rounds of FedAU; each replayed round uses the weights FedAU used in it (row r of
    the trace's omega by default, row r + 1 when the round's own interval counts)."""
    from flbounds.algorithms.baselines import fedau

    plan = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]], dtype=bool)
    x0 = np.array([1.0, -0.5])
    trace = fedau(problem, plan, step=0.05, local_steps=2, x0=x0, server_step=1.3,
                  max_interval=2, normalize=normalize, weights_from=weights_from)
    clients = _clients(problem)
    for r, mask in enumerate(plan):
        rnd = fedau_round(2, 0.05, trace.omega[r + row], server_step=1.3, normalize=normalize)
        got, _ = run_round(rnd, clients, start_state(rnd, clients, {"x": trace.x[r]}), mask)
        np.testing.assert_allclose(got["x"].v, trace.x[r + 1], atol=ROUNDING)


def test_mifa_description_is_mifa(problem):
    """Four rounds from an empty memory; the memory carries from round to round."""
    from flbounds.algorithms.baselines import mifa

    plan = np.array([[1, 0, 0], [0, 1, 1], [1, 0, 1], [0, 0, 0]], dtype=bool)
    x0 = np.array([0.2, 0.7])
    trace = mifa(problem, plan, step=0.05, local_steps=3, x0=x0)
    rnd = mifa_round(3, 0.05, 3)
    clients = _clients(problem)
    state = start_state(rnd, clients, {"x": x0, "u": np.zeros((3, 2))})
    for r, mask in enumerate(plan):
        state = run_round(rnd, clients, state, mask)
        np.testing.assert_allclose(state[0]["x"].v, trace.x[r + 1], atol=ROUNDING)
        mean = np.mean([c["u"].v for c in state[1]], axis=0)
        np.testing.assert_allclose(state[0]["ubar"].v, mean, atol=ROUNDING)
    np.testing.assert_allclose([c["u"].v / (0.05 * 3) for c in state[1]], trace.memory,
                               atol=ROUNDING)


def test_kvib_description_is_the_unbiased_step(problem):
    """x+ = x + eta_g sum_S (lambda_i / pi_i)(z_i - x), the update of K-Vib's Algorithm 1
    (``flbounds.algorithms.fedavg_sampler``: d = sum_S w_i lambda_i (x - z_i), w_i = 1/pi_i)."""
    x0, lam, pi = np.array([0.3, 0.1]), np.array([0.5, 0.3, 0.2]), np.array([0.9, 0.6, 0.4])
    rnd = kvib_round(2, 0.05, step_global=0.8, weights=lam)
    clients = _clients(problem)
    state = start_state(rnd, clients, {"x": x0})
    for mask in all_masks(3):
        got, _ = run_round(rnd, clients, state, mask, inclusion=pi)
        ref = x0.copy()
        for i in np.flatnonzero(mask):
            z = x0.copy()
            for _ in range(2):
                z = z - 0.05 * (problem.A[i] @ z - problem.b[i])
            ref = ref - 0.8 * (lam[i] / pi[i]) * (x0 - z)
        np.testing.assert_allclose(got["x"].v, ref, atol=ROUNDING)
