"""Described rounds replayed under sampling with replacement (flbounds.pep.replay with
counts): the replay is flbounds.algorithms.fedavg on every count plan, its exact expectation
over the enumerated count vectors reaches the solved worst case, a replay that reads the
counts as a set does not, and witness_rate takes counts."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import WithReplacement
from flbounds.pep.expect import law_of
from flbounds.pep.replay import QuadraticClient, expected_measure, run_round, start_state

#: two evaluations of the same float64 arithmetic in another order (test_replay.py)
ROUNDING = 1e-12
Q, K = np.array([0.2, 0.3, 0.5]), 2        # E[c_i] = K q_i <= 1: inverse_probability takes it
PROCESS = WithReplacement(Q, K)


@pytest.fixture
def problem():
    from flbounds.problems import Quadratic

    rng = np.random.default_rng(3)
    M = rng.standard_normal((3, 2, 2))
    A = np.einsum("nij,nkj->nik", M, M) + np.eye(2)
    return Quadratic(A, rng.standard_normal((3, 2)))


def _clients(problem):
    return [QuadraticClient(problem, i) for i in range(problem.n_clients)]


@pytest.mark.parametrize("rule", ["uniform", "unbiased"])
def test_the_replay_is_fedavg_on_every_count_plan(problem, rule):
    """A drawn client runs once and enters the aggregate once per draw, in both; the
    unbiased rule divides by E[c_i] = K q_i (the algorithm's inverse_probability)."""
    from flbounds.algorithms import fedavg
    from flbounds.algorithms.aggregation import inverse_probability, uniform

    law = law_of(PROCESS, 3)
    assert law.counts.shape[0] == 6 and np.all(law.counts.sum(axis=1) == K)
    x0 = np.array([0.3, -1.2])
    rnd = pep.fedavg_round(3, 0.05, aggregate=rule)
    ref_rule = uniform() if rule == "uniform" else inverse_probability(K * Q)
    clients = _clients(problem)
    for counts in law.counts:
        server, _ = run_round(rnd, clients, start_state(rnd, clients, {"x": x0}), None,
                              law.count_means, counts)
        ref = fedavg(problem, counts.astype(np.int64)[None, :], step=0.05, local_steps=3,
                     x0=x0, aggregation=ref_rule).x[-1]
        np.testing.assert_allclose(server["x"].v, ref, atol=ROUNDING)


def _identical(a):
    from flbounds.problems import Quadratic

    return Quadratic(np.full((3, 1, 1), a), np.zeros((3, 1)))


def test_the_replayed_expectation_reaches_the_worst_case():
    """Identical clients, one local step, the unbiased rule (its weights sum to a random W
    whose law is the counts'): E||x - W eta g||^2 is convex in g, and the interpolation
    conditions of F_{mu,L} between x and x* put g in the ball of centre (mu + L) x / 2 and
    radius (L - mu) ||x|| / 2, so the worst g is a x with a in {mu, L}, f = a x^2 / 2. The
    exact expectation over the enumerated count vectors equals the solved worst case, and
    reading the counts as a set (planted bug: each drawn client once) moves it beyond the
    tolerance."""
    mu, L, step, tau = 1.0, 2.0, 0.7, 1
    rnd = pep.fedavg_round(tau, step, aggregate="unbiased")
    worst = pep.worst_case(rnd, pep.Setting(3, mu, L, identical=True), pep.distance(), PROCESS)
    law = law_of(PROCESS, 3)
    replayed = max(expected_measure(rnd, _identical(a), {"x": np.ones(1)}, law,
                                    pep.distance()) for a in (mu, L))
    assert abs(replayed - worst.worst) <= 2 * pep.gap_tolerance(worst.worst)

    class AsSets:           # the planted bug: counts dropped, their support kept
        masks, probs, counts, count_means = law.masks, law.probs, None, law.count_means

    planted = max(expected_measure(rnd, _identical(a), {"x": np.ones(1)}, AsSets,
                                   pep.distance()) for a in (mu, L))
    assert abs(planted - worst.worst) > 10 * pep.gap_tolerance(worst.worst)


def test_the_replay_stays_below_the_worst_case_of_heterogeneous_clients(problem):
    """Any instance of the class replayed over the counts is at most the worst case."""
    from flbounds.problems import Quadratic

    eig = np.linalg.eigvalsh(problem.A)
    mu, L = float(eig.min()), float(eig.max())
    instance = Quadratic(problem.A, np.zeros((3, 2)))     # x* = 0 shared
    rnd = pep.fedavg_round(2, 0.5 / L)
    worst = pep.worst_case(rnd, pep.Setting(3, mu, L, common_minimizer=True), pep.distance(),
                           PROCESS)
    replayed = expected_measure(rnd, instance, {"x": np.array([1.0, -0.4])},
                                law_of(PROCESS, 3), pep.distance())
    assert replayed <= worst.worst + pep.gap_tolerance(worst.worst)


def test_witness_rate_takes_counts():
    """1-D FedAvg: the second-moment rate of a witness is its one-round E x+^2 / x^2, so the
    rate equals the expected_measure replay of the witness found, and stays below the
    solved worst case."""
    from flbounds.problems import Quadratic

    mu, L = 1.0, 2.0
    rnd = pep.fedavg_round(2, 0.6, aggregate="unbiased")
    setting = pep.Setting(3, mu, L, common_minimizer=True)
    rate, where = pep.witness_rate(rnd, setting, PROCESS)
    instance = Quadratic(np.asarray(where, float)[:, None, None], np.zeros((3, 1)))
    replayed = expected_measure(rnd, instance, {"x": np.ones(1)}, law_of(PROCESS, 3),
                                pep.distance())
    assert rate == pytest.approx(replayed, abs=ROUNDING)
    worst = pep.worst_case(rnd, setting, pep.distance(), PROCESS)
    assert rate <= worst.worst + pep.gap_tolerance(worst.worst)


def test_bad_counts_name_the_argument(problem):
    rnd = pep.fedavg_round(1, 0.1)
    clients = _clients(problem)
    state = start_state(rnd, clients, {"x": np.zeros(2)})
    with pytest.raises(ValueError, match="counts"):
        run_round(rnd, clients, state, None, None, np.array([1, -1, 2]))
    with pytest.raises(ValueError, match="counts"):
        run_round(rnd, clients, state, None, None, np.array([1, 1]))
    with pytest.raises(ValueError, match="mask"):
        run_round(rnd, clients, state, np.array([True, False, False]), None,
                  np.array([1, 1, 0]))


def test_the_symmetric_fedavg_witness_replays_count_plans_at_n_100():
    """One quadratic per class fitted to the symmetric solve, replayed by
    flbounds.algorithms.fedavg on a count plan per value of the class totals (10 draws, two
    classes of draw probabilities 1:3)."""
    from flbounds.pep.symmetric_witness import fedavg_symmetric_witness
    from flbounds.pep.witness import witness_tolerance

    n = 100
    groups = [list(range(40)), list(range(40, n))]
    q = np.r_[np.full(40, 1.0), np.full(60, 3.0)]
    w = fedavg_symmetric_witness(1.0, 2.0, WithReplacement(q / q.sum(), 10), groups, 2, 0.2)
    assert w.deviation < 1e-4
    assert abs(w.witness.replayed - w.witness.pep) <= witness_tolerance(w.witness)


def test_the_focus_witness_replays_counts_through_the_description():
    """flbounds.algorithms.focus runs sets, so FOCUS drawn with replacement (the engine's
    count rule: a correction enters y once per draw) is replayed through its description,
    over every split of the class totals; N = 3, one class, K = 2."""
    from flbounds.pep.symmetric_witness import focus_symmetric_witness
    from flbounds.pep.witness import witness_tolerance

    w = focus_symmetric_witness(1.0, 2.0, WithReplacement(np.full(3, 1 / 3), 2), [[0, 1, 2]],
                                1, 0.1, 1.0)
    assert w.witness.replayed <= w.witness.pep + witness_tolerance(w.witness)
