"""flbounds.participation: exact moments vs Monte Carlo, vs brute-force oracles, validation."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flbounds.participation import (
    Bernoulli,
    Cyclic,
    Excluding,
    MarkovOnOff,
    UniformWithoutReplacement,
    WeightedWithoutReplacement,
    exact_weights_from_subsets,
    subset_distribution,
)
from flbounds.participation.independent import _bernoulli_aggregation as bernoulli_aggregation_rule
from flbounds.stats import mc_mean

# Tolerance for Monte Carlo checks: 4 standard errors per coordinate (plus rounding, for
# coordinates whose indicator is constant, so that their SE is 0).
N_SE = 4.0
MC_ROUNDS = 40_000
# Exact-vs-exact comparisons: different summation orders of O(2^N) terms, a few ulps each.
EXACT_RTOL, EXACT_ATOL = 1e-10, 1e-13
PROPERTY = settings(max_examples=60, deadline=None, derandomize=True)


# ---------------------------------------------------------------------------- oracles
def brute_bernoulli(p):
    """(pi, q, P(empty)) by summing over all 2^N subsets, independently of the module."""
    n = len(p)
    pi, q, empty = np.zeros(n), np.zeros(n), 0.0
    for bits in itertools.product((0, 1), repeat=n):
        prob = math.prod(pj if b else 1 - pj for pj, b in zip(p, bits, strict=True))
        size = sum(bits)
        empty += prob if size == 0 else 0.0
        for i in range(n):
            pi[i] += prob * bits[i]
            q[i] += prob * bits[i] / size if size else 0.0
    return pi, q, empty


def brute_successive(w, m):
    """Inclusion probabilities of successive sampling, over all ordered draws."""
    w = np.asarray(w, dtype=float)
    pi = np.zeros(w.size)
    for seq in itertools.permutations(range(w.size), m):
        prob, drawn = 1.0, []
        for j in seq:
            remaining = np.delete(w, drawn).sum()  # summed afresh: no cancellation
            prob *= w[j] / remaining if remaining > 0 else 0.0
            drawn.append(j)
        pi[list(seq)] += prob
    return pi


def poisson_binomial(p):
    dist = np.zeros(len(p) + 1)
    dist[0] = 1.0
    for k, pk in enumerate(p):
        dist[1 : k + 2] = dist[1 : k + 2] * (1 - pk) + dist[: k + 1] * pk
        dist[0] *= 1 - pk
    return dist


def assert_mc_agrees(process, plan, batch=1):
    """Exact moments within N_SE standard errors of the plan's; batch > 1 uses batch means
    (for processes whose rounds are correlated)."""
    sizes = plan.sum(axis=1, keepdims=True)
    share = np.divide(plan, sizes, out=np.zeros(plan.shape), where=sizes > 0)
    pairs = [
        (plan.astype(float), process.inclusion_probabilities()),
        (share, process.aggregation_weights()),
        ((sizes == 0).astype(float), np.array([process.empty_probability()])),
    ]
    for samples, exact in pairs:
        samples = samples.reshape(-1, batch, samples.shape[1]).mean(axis=1)
        est = mc_mean(samples)
        assert np.all(np.abs(est.mean - exact) <= N_SE * est.se + 1e-12), (est, exact)


# ---------------------------------------------------------------------------- fixtures
def processes():
    w = np.array([0.05, 0.3, 0.0, 0.1, 0.25, 0.3])
    return [
        Bernoulli([0.3, 0.5, 0.7, 0.9, 0.0, 1.0]),
        Bernoulli([0.1, 0.2, 0.05]),
        UniformWithoutReplacement(7, 3),
        WeightedWithoutReplacement(w, 3),
        Excluding(Bernoulli([0.2, 0.6, 0.4]), never=[0, 3], n_clients=5),
        Excluding(WeightedWithoutReplacement([1.0, 2.0, 5.0, 0.5], 2), [2], 5),
    ]


@pytest.mark.parametrize("process", processes(), ids=repr)
def test_iid_processes_match_monte_carlo(process):
    plan = process.plan(np.random.default_rng(20250101), MC_ROUNDS)
    assert_mc_agrees(process, plan)


def test_markov_matches_monte_carlo_with_batch_means():
    process = MarkovOnOff([0.4, 0.9, 0.2, 0.7], stay_on=[0.8, 0.95, 0.5, 0.7])
    plan = process.plan(np.random.default_rng(7), MC_ROUNDS)
    assert_mc_agrees(process, plan, batch=400)  # 100 batches >> correlation time ~ 5


def test_markov_consecutive_rounds_are_correlated_as_specified():
    process = MarkovOnOff([0.4, 0.5], stay_on=[0.8, 0.5])  # 2nd client: i.i.d. (a = b = pi)
    np.testing.assert_allclose(process.switch_on, [0.4 * 0.2 / 0.6, 0.5])
    np.testing.assert_allclose(process.lag_one_correlation, [0.8 - 0.4 / 3, 0.0])
    plan = process.plan(np.random.default_rng(11), MC_ROUNDS)
    prev, nxt = plan[:-1], plan[1:]
    for i, a in enumerate(process.stay_on):
        stays = nxt[prev[:, i], i].astype(float)  # given on: Bernoulli(a) draws
        est = mc_mean(stays)
        assert abs(est.mean - a) <= N_SE * est.se
    corr = np.corrcoef(prev[:, 0], nxt[:, 0])[0, 1]
    assert abs(corr - process.lag_one_correlation[0]) < 0.03  # ~ 4 SE of a lag-1 estimate


def test_markov_moments_equal_bernoulli():
    rates = [0.1, 0.6, 1.0, 0.0]
    process = MarkovOnOff(rates, stay_on=[0.5, 0.9, 1.0, 0.2])
    bern = Bernoulli(rates)
    np.testing.assert_array_equal(process.aggregation_weights(), bern.aggregation_weights())
    np.testing.assert_array_equal(process.inclusion_probabilities(), rates)
    assert process.empty_probability() == 0.0


def test_cyclic_plan_and_exact_period_average():
    process = Cyclic(6, 4, offset=1)
    plan = process.plan(None, 3 * process.period)
    np.testing.assert_array_equal(plan[0], [0, 1, 1, 1, 1, 0])
    np.testing.assert_array_equal(plan[1], [1, 1, 1, 0, 0, 1])
    assert process.period == 3
    np.testing.assert_allclose(plan.mean(axis=0), process.inclusion_probabilities(), atol=1e-15)
    np.testing.assert_allclose(process.aggregation_weights(), np.full(6, 1 / 6), atol=1e-15)
    np.testing.assert_array_equal(process.plan(np.random.default_rng(0), 5), process.plan(None, 5))


# ---------------------------------------------------------------------------- exact values
def test_two_client_formula():
    p1, p2 = 0.3, 0.8
    q = Bernoulli([p1, p2]).aggregation_weights()
    np.testing.assert_allclose(q, [p1 * (1 - p2 / 2), p2 * (1 - p1 / 2)], rtol=1e-15)


def test_spec_example_weights_differ_from_p_over_sum():
    # spec/002 section 1.5: p = (.3, .5, .7, .9) gives q = (.104, .186, .284, .414)
    q = Bernoulli([0.3, 0.5, 0.7, 0.9]).aggregation_weights()
    np.testing.assert_allclose(q, [0.104, 0.186, 0.284, 0.414], atol=5e-4)


def test_uniform_weight_is_one_over_n_not_one_over_m():
    process = UniformWithoutReplacement(10, 3)
    np.testing.assert_array_equal(process.aggregation_weights(), np.full(10, 0.1))
    np.testing.assert_array_equal(process.inclusion_probabilities(), np.full(10, 0.3))


def test_weighted_caveat_pi_over_m_is_not_the_nominal_weight():
    weights = np.random.default_rng(5).random(16)
    process = WeightedWithoutReplacement(weights, 4)
    q, nominal = process.aggregation_weights(), weights / weights.sum()
    assert np.max(np.abs(q - nominal)) > 3e-3  # the spec's caveat: q_i = pi_i / m != w_i
    plan = process.plan(np.random.default_rng(1), MC_ROUNDS)
    est = mc_mean(plan / 4.0)
    assert np.all(np.abs(est.mean - q) <= N_SE * est.se)  # Monte Carlo agrees with q ...
    assert np.any(np.abs(est.mean - nominal) > N_SE * est.se)  # ... and rejects w / sum(w)


def test_bernoulli_large_n_quadrature_against_poisson_binomial():
    p = np.random.default_rng(3).random(1500)
    q = Bernoulli(p).aggregation_weights()
    for i in (0, 7, 1499):
        exact = p[i] * np.sum(poisson_binomial(np.delete(p, i)) / np.arange(1, p.size + 1))
        np.testing.assert_allclose(q[i], exact, rtol=1e-11)


def test_bernoulli_quadrature_rule_matches_exact_gauss_rule():
    p = np.random.default_rng(4).random(60) * 0.3  # exact rule: ceil(60 / 2) nodes on [0, 1]
    np.testing.assert_allclose(Bernoulli(p).aggregation_weights(),
                               bernoulli_aggregation_rule(p, 30, 1.0), rtol=1e-13)


def test_bernoulli_n_clients_1e5():
    p = np.random.default_rng(5).random(100_000)
    process = Bernoulli(p)
    q = process.aggregation_weights()
    assert np.all(np.isfinite(q)) and np.all(q <= p)
    assert abs(q.sum() - (1.0 - process.empty_probability())) < 1e-12
    np.testing.assert_allclose(Bernoulli(np.ones(100_000)).aggregation_weights(), 1e-5,
                               rtol=1e-12)  # full participation: q_i = 1/N


def test_subset_distribution_matches_exact_methods():
    for process in [*processes(), Cyclic(5, 2, offset=3), MarkovOnOff([0.3, 0.8], 0.8)]:
        masks, probs = subset_distribution(process)
        assert masks.shape == (2**process.n_clients, process.n_clients) and masks.dtype == bool
        inclusion, aggregation, empty = exact_weights_from_subsets(masks, probs)
        np.testing.assert_allclose(inclusion, process.inclusion_probabilities(), atol=1e-14)
        np.testing.assert_allclose(aggregation, process.aggregation_weights(), atol=1e-14)
        assert abs(empty - process.empty_probability()) < 1e-14


@pytest.mark.parametrize("process", [*processes(), Cyclic(4, 3), MarkovOnOff([0.5], 0.5)],
                         ids=repr)
def test_plan_shape_dtype_and_reproducibility(process):
    plan = process.plan(np.random.default_rng(9), 17)
    assert plan.shape == (17, process.n_clients) and plan.dtype == bool
    np.testing.assert_array_equal(plan, process.plan(np.random.default_rng(9), 17))
    assert process.plan(np.random.default_rng(9), 0).shape == (0, process.n_clients)


def test_weighted_large_n_limits():
    process = WeightedWithoutReplacement(np.arange(1.0, 21.0), 3)
    assert abs(process.inclusion_probabilities().sum() - 3) < 1e-12
    with pytest.raises(ValueError, match="n_clients"):      # 23 distinct weights
        WeightedWithoutReplacement(np.arange(1.0, 24.0) ** 0.5, 12).aggregation_weights()
    # few distinct weights: the class recursion, at any N
    q = WeightedWithoutReplacement(np.ones(23), 2).aggregation_weights()
    np.testing.assert_allclose(q, np.full(23, 1 / 23), rtol=1e-13)
    with pytest.raises(ValueError, match="n_clients"):
        subset_distribution(WeightedWithoutReplacement(np.ones(23), 2))
    with pytest.raises(ValueError, match="n_clients"):
        subset_distribution(Bernoulli(np.full(17, 0.5)))
    assert WeightedWithoutReplacement(np.ones(40), 5).plan(np.random.default_rng(0), 3).shape \
        == (3, 40)


# ---------------------------------------------------------------------------- validation
BAD_INPUTS = [
    (lambda: Bernoulli([0.5, 1.2]), "^p "),
    (lambda: Bernoulli([0.5, np.nan]), "^p "),
    (lambda: Bernoulli([]), "^p "),
    (lambda: UniformWithoutReplacement(5, 0), "^m "),
    (lambda: UniformWithoutReplacement(5, 6), "^m "),
    (lambda: UniformWithoutReplacement(0, 1), "^n_clients "),
    (lambda: WeightedWithoutReplacement([-1.0, 2.0], 1), "^weights "),
    (lambda: WeightedWithoutReplacement([0.0, 0.0], 1), "^weights "),
    (lambda: WeightedWithoutReplacement([1.0, np.inf], 1), "^weights "),
    (lambda: WeightedWithoutReplacement([1.0, 0.0, 0.0], 2), "^m "),
    (lambda: Cyclic(5, 6), "^per_round "),
    (lambda: Cyclic(5, 2, offset=1.5), "^offset "),
    (lambda: MarkovOnOff([1.2], 0.5), "^rates "),
    (lambda: MarkovOnOff([0.9], 0.5), "^stay_on "),
    (lambda: MarkovOnOff([1.0], 0.5), "^stay_on "),
    (lambda: MarkovOnOff([0.5, 0.5], [0.5, 0.5, 0.5]), "^stay_on "),
    (lambda: Excluding(Bernoulli([0.5]), [2], 2), "^never "),
    (lambda: Excluding(Bernoulli([0.5]), [0, 0], 3), "^never "),
    (lambda: Excluding(Bernoulli([0.5]), [0], 3), "^base "),
    (lambda: Bernoulli([0.5]).plan(np.random.default_rng(0), -1), "^n_rounds "),
    (lambda: Bernoulli([0.5]).plan(np.random.default_rng(0), 2.5), "^n_rounds "),
    (lambda: Bernoulli([0.5]).plan(np.random.default_rng(0), True), "^n_rounds "),
    (lambda: Bernoulli([0.5]).plan(None, 3), "^rng "),
    (lambda: Cyclic(3, 1).plan(None, -2), "^n_rounds "),
    (lambda: exact_weights_from_subsets([[1, 0]], [0.5]), "^probs "),
    (lambda: exact_weights_from_subsets([[2, 0]], [1.0]), "^masks "),
]


@pytest.mark.parametrize(("make", "pattern"), BAD_INPUTS)
def test_bad_input_raises_value_error_naming_argument(make, pattern):
    with pytest.raises(ValueError, match=pattern):
        make()


# ---------------------------------------------------------------------------- properties
@PROPERTY
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=8))
@example([1.0])
@example([0.0])
@example([0.0, 0.0, 1.0])
@example([1e-300, 1.0 - 1e-16])
def test_bernoulli_exact_against_enumeration(p):
    process = Bernoulli(p)
    pi, q, empty = brute_bernoulli(p)
    got = process.aggregation_weights()
    np.testing.assert_allclose(got, q, rtol=EXACT_RTOL, atol=EXACT_ATOL)
    np.testing.assert_array_equal(process.inclusion_probabilities(), p)
    np.testing.assert_allclose(pi, p, rtol=EXACT_RTOL, atol=EXACT_ATOL)  # oracle sanity
    assert abs(process.empty_probability() - empty) <= EXACT_ATOL
    assert abs(got.sum() - (1.0 - process.empty_probability())) <= EXACT_ATOL
    assert np.all(got <= np.asarray(p) + EXACT_ATOL)  # q_i <= p_i ...
    assert np.all(got >= np.asarray(p) / len(p) - EXACT_ATOL)  # ... and >= p_i / N


@st.composite
def weights_and_m(draw):
    w = draw(st.lists(st.floats(0.0, 10.0), min_size=1, max_size=6))
    w[draw(st.integers(0, len(w) - 1))] = draw(st.floats(0.01, 10.0))  # one positive
    return w, draw(st.integers(1, int(np.count_nonzero(w))))


@PROPERTY
@given(weights_and_m())
@example(([1.0], 1))
@example(([0.0, 3.0, 1e-9], 2))
def test_weighted_exact_against_ordered_draws(case):
    w, m = case
    process = WeightedWithoutReplacement(w, m)
    pi = process.inclusion_probabilities()
    np.testing.assert_allclose(pi, brute_successive(w, m), rtol=EXACT_RTOL, atol=EXACT_ATOL)
    assert abs(pi.sum() - m) <= 1e-12 * m and np.all(pi <= 1 + 1e-12)
    np.testing.assert_allclose(process.aggregation_weights(), pi / m, rtol=1e-15)
    assert process.empty_probability() == 0.0


@PROPERTY
@given(st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n))))
def test_uniform_exact_against_subsets(case):
    n, m = case
    process = UniformWithoutReplacement(n, m)
    inclusion, aggregation, empty = exact_weights_from_subsets(*subset_distribution(process))
    np.testing.assert_allclose(aggregation, np.full(n, 1 / n), rtol=1e-12)
    np.testing.assert_allclose(inclusion, np.full(n, m / n), rtol=1e-12)
    assert empty == 0.0


@PROPERTY
@given(st.integers(1, 12).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(1, n), st.integers(-20, 20))))
def test_cyclic_long_run_weights(case):
    n, per_round, offset = case
    process = Cyclic(n, per_round, offset=offset)
    plan = process.plan(None, process.period)
    assert np.all(plan.sum(axis=1) == per_round)
    np.testing.assert_allclose(process.inclusion_probabilities(), plan.mean(axis=0), atol=1e-15)
    np.testing.assert_allclose(process.inclusion_probabilities(), per_round / n, rtol=1e-14)
    np.testing.assert_allclose(process.aggregation_weights(), 1 / n, rtol=1e-14)


@PROPERTY
@given(st.data())
def test_excluding_embeds_base(data):
    n = data.draw(st.integers(2, 8))
    never = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n - 1, unique=True))
    p = data.draw(st.lists(st.floats(0.0, 1.0), min_size=n - len(never),
                           max_size=n - len(never)))
    process = Excluding(Bernoulli(p), never, n)
    keep = np.setdiff1d(np.arange(n), never)
    q = process.aggregation_weights()
    np.testing.assert_array_equal(q[never], 0.0)
    np.testing.assert_array_equal(q[keep], Bernoulli(p).aggregation_weights())
    plan = process.plan(np.random.default_rng(0), 50)
    assert not plan[:, never].any()
    np.testing.assert_array_equal(plan[:, keep], Bernoulli(p).plan(np.random.default_rng(0), 50))
    _, aggregation, empty = exact_weights_from_subsets(*subset_distribution(process))
    np.testing.assert_allclose(aggregation, q, rtol=EXACT_RTOL, atol=EXACT_ATOL)


@PROPERTY
@given(st.integers(1, 400), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1))
@example(400, 1.0, 0)
@example(1, 1.0, 0)
def test_bernoulli_quadrature_against_poisson_binomial(n, scale, seed):
    p = np.random.default_rng(seed).random(n) * scale
    q = Bernoulli(p).aggregation_weights()
    for i in {0, n - 1}:
        exact = p[i] * np.sum(poisson_binomial(np.delete(p, i)) / np.arange(1, n + 1))
        np.testing.assert_allclose(q[i], exact, rtol=1e-12, atol=1e-300)
