"""Aggregation rules and plans of counts (sampling with replacement) against NumPy twins,
and the objective each rule converges to."""

import numpy as np
import pytest

from flbounds.algorithms import aggregation as agg
from flbounds.algorithms import fedavg, focus, scaffold, schedules
from flbounds.participation import Bernoulli, WithReplacement
from flbounds.problems import Quadratic
from tests.flbounds.algorithms.fedavg_twin import RTOL, TAU, D, N, R, make_problems
from tests.flbounds.algorithms.fedavg_twin import twin_fedavg as _twin_fedavg


@pytest.fixture(scope="module")
def problems():
    return make_problems()


# ----------------------------------------------------------------------------- aggregation
def _rules(prob):
    n = np.arange(1.0, N + 1.0)
    return {"scheme_ii": (agg.scheme_ii(N), N * prob.weights / N, "absolute"),
            "inverse_probability": (agg.inverse_probability(np.full(N, 0.5)),
                                    prob.weights / 0.5, "increment"),
            "sample_counts": (agg.sample_counts(n), n, "normalized")}


@pytest.mark.parametrize("rule", ["scheme_ii", "inverse_probability", "sample_counts"])
@pytest.mark.parametrize("counts", [False, True])
def test_aggregation_twin(problems, rule, counts):
    prob = problems["quadratic"]
    rng = np.random.default_rng(7)
    plan = (WithReplacement(prob.weights, 4).plan(rng, R) if counts
            else Bernoulli(np.full(N, 0.5)).plan(rng, R).astype(np.int64))
    aggregation, coefficients, form = _rules(prob)[rule]
    steps = schedules.inverse_time(0.5, 4.0)
    got = fedavg(prob, plan, step=steps, local_steps=TAU, aggregation=aggregation).x
    want = _twin_fedavg(prob, plan, steps.steps(R), coefficients, form, np.zeros(D))
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())


def test_scheme_one_counts_twin(problems):
    """Li et al.'s Scheme I: K draws with replacement, x <- (1/K) sum_k z_{i_k}."""
    prob = problems["ridge"]
    plan = WithReplacement(np.full(N, 1.0 / N), 5).plan(np.random.default_rng(8), R)
    assert plan.max() > 1
    got = fedavg(prob, plan, step=0.05, local_steps=TAU).x
    want = _twin_fedavg(prob, plan, np.full((R, 1), 0.05), None, "normalized", np.zeros(D))
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())


def test_each_rule_converges_to_its_objective(problems):
    """Full participation, one local step: every rule is gradient descent on the objective
    it targets (module docstring of aggregation), so it reaches that minimiser to rounding;
    the uniform and the weighted minimisers are far apart, so a rule aimed at the wrong
    objective fails."""
    prob = problems["quadratic"]
    plan = np.ones((600, N), dtype=bool)
    n = np.arange(1.0, N + 1.0)
    targets = {"uniform": (agg.uniform(), prob.with_weights(None).x_star),
               "scheme_ii": (agg.scheme_ii(N), prob.x_star),
               "inverse_probability": (agg.inverse_probability(np.ones(N)), prob.x_star),
               "sample_counts": (agg.sample_counts(n), prob.with_weights(n / n.sum()).x_star)}
    assert np.linalg.norm(prob.x_star - targets["uniform"][1]) > 0.05
    assert np.linalg.norm(prob.x_star - targets["sample_counts"][1]) > 0.05
    for name, (rule, x_target) in targets.items():
        x = fedavg(prob, plan, step=0.3, local_steps=1, aggregation=rule).x[-1]
        # GD with step 0.3 <= 1/L contracts by (1 - 0.3 mu) >= 0.85 per round: 600 rounds
        # leave 1e-42 of the start; what remains is rounding, ~ 100 eps |x|
        assert np.linalg.norm(x - x_target) <= 1e-13 * max(1.0, np.linalg.norm(x_target)), name


def test_scheme_one_and_two_reach_the_weighted_minimiser(problems):
    """Partial participation with decaying steps eta_r = 2/(mu (gamma + r)) (Li et al.):
    Scheme I (counts, uniform rule) and Scheme II (K of N without replacement, balanced
    weights on the rescaled clients N p_k f_k, Li et al.'s Theorem 3 setting) end far closer
    to the p-weighted minimiser than to the plain mean's; Scheme II as printed with unequal
    weights does not settle there (its coefficients sum to 1 only in expectation)."""
    prob = problems["quadratic"]
    rng = np.random.default_rng(9)
    K, rounds = 3, 4000
    step = schedules.inverse_time(2.0 / prob.mu, 8.0 * prob.L / prob.mu)
    far = np.linalg.norm(prob.x_star - prob.with_weights(None).x_star)
    plan_one = WithReplacement(prob.weights, K).plan(rng, rounds)
    x_one = fedavg(prob, plan_one, step=step, local_steps=2).x[-1]
    keys = rng.random((rounds, N))
    plan_two = keys < np.sort(keys, axis=1)[:, K:K + 1]
    assert np.all(plan_two.sum(axis=1) == K)
    scale = N * prob.weights
    rescaled = Quadratic(prob.A * scale[:, None, None], prob.b * scale[:, None])
    np.testing.assert_allclose(rescaled.x_star, prob.x_star, rtol=1e-10)
    step_two = schedules.inverse_time(2.0 / rescaled.mu, 8.0 * rescaled.L / rescaled.mu)
    x_two = fedavg(rescaled, plan_two, step=step_two, local_steps=2,
                   aggregation=agg.scheme_ii(K)).x[-1]
    assert np.linalg.norm(x_one - prob.x_star) < 0.1 * far
    assert np.linalg.norm(x_two - prob.x_star) < 0.1 * far
    # the uniform rule over the K sampled clients targets the plain mean instead
    x_plain = fedavg(prob, plan_two, step=step, local_steps=2).x[-1]
    assert np.linalg.norm(x_plain - prob.with_weights(None).x_star) < 0.1 * far
    # Scheme II as printed on the unequal weights: the iterate is rescaled every round
    x_printed = fedavg(prob, plan_two, step=step, local_steps=2,
                       aggregation=agg.scheme_ii(K)).x[-1]
    assert np.linalg.norm(x_printed - prob.x_star) > far


def test_bad_counts_and_rules(problems):
    prob = problems["quadratic"]
    counts = WithReplacement(prob.weights, 4).plan(np.random.default_rng(10), R)
    counts[0, 0] = 2
    with pytest.raises(ValueError, match="plan holds counts"):
        focus(prob, counts, step=0.1, local_steps=TAU)
    with pytest.raises(ValueError, match="plan holds counts"):
        scaffold(prob, counts, step=0.1, local_steps=TAU)
    bad = counts.copy()
    bad[0, 1] = -1
    with pytest.raises(ValueError, match="plan: counts must be >= 0"):
        fedavg(prob, bad, step=0.1, local_steps=TAU)
    with pytest.raises(ValueError, match="plan"):
        fedavg(prob, counts + 0.5, step=0.1, local_steps=TAU)
    with pytest.raises(ValueError, match="aggregation"):
        fedavg(prob, counts, step=0.1, local_steps=TAU, aggregation="mean")
    with pytest.raises(ValueError, match="aggregation: coefficients has length"):
        fedavg(prob, counts, step=0.1, local_steps=TAU, aggregation=agg.sample_counts([1, 2]))
    with pytest.raises(ValueError, match="aggregation: n_sampled"):
        fedavg(prob, counts, step=0.1, local_steps=TAU, aggregation=agg.scheme_ii(N + 1))
    with pytest.raises(ValueError, match="probabilities"):
        agg.inverse_probability([0.5, 0.0])
    with pytest.raises(ValueError, match="weights"):
        agg.scheme_ii(2, weights=[0.5, 0.6])
    with pytest.raises(ValueError, match="n_samples"):
        agg.sample_counts([1.0, 0.0])




def test_uniform_rule_under_unequal_participation_targets_q(problems):
    """Bernoulli participation with unequal probabilities, one local step, decaying steps:
    the uniform rule settles near the minimiser of sum_k q_k f_k (q the process's exact
    aggregation weights), far from the plain mean's."""
    prob = problems["quadratic"].with_weights(None)
    process = Bernoulli(np.array([0.9, 0.9, 0.15, 0.15, 0.5, 0.3]))
    q = process.aggregation_weights()
    target = prob.with_weights(q / q.sum()).x_star
    far = np.linalg.norm(target - prob.x_star)
    assert far > 0.05
    plan = process.plan(np.random.default_rng(14), 4000)
    step = schedules.inverse_time(2.0 / prob.mu, 8.0 * prob.L / prob.mu)
    x = fedavg(prob, plan, step=step, local_steps=1).x[-1]
    assert np.linalg.norm(x - target) < 0.1 * far
