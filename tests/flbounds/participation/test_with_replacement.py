"""Sampling with replacement (Li et al.'s Scheme I): exact count moments by enumeration,
the drawn law against them, and validation."""

import itertools
import math

import numpy as np
import pytest

from flbounds.participation import Excluding, WithReplacement


def _enumerate(p, K):
    """All count vectors of K draws with their multinomial probabilities."""
    n = p.size
    for combo in itertools.combinations_with_replacement(range(n), K):
        counts = np.bincount(combo, minlength=n)
        prob = math.factorial(K) * np.prod(p**counts) / np.prod(
            [math.factorial(int(c)) for c in counts])
        yield counts, prob


@pytest.mark.parametrize("p, K", [([0.1, 0.2, 0.7], 4), ([0.25, 0.25, 0.5, 0.0], 3),
                                  ([1.0, 0.0], 2), ([0.5, 0.5], 1)])
def test_moments_by_enumeration(p, K):
    p = np.array(p)
    proc = WithReplacement(p, K)
    mean, second, incl, total = np.zeros(p.size), np.zeros((p.size,) * 2), np.zeros(p.size), 0.0
    for counts, prob in _enumerate(p, K):
        total += prob
        mean += prob * counts
        second += prob * np.outer(counts, counts)
        incl += prob * (counts > 0)
    assert total == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_allclose(proc.count_means(), mean, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(proc.count_second_moments(), second, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(proc.inclusion_probabilities(), incl, rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(proc.aggregation_weights(), p)
    assert proc.empty_probability() == 0.0


def test_plans_follow_the_moments():
    """Counts drawn: rows sum to K; the sample means of c_i and c_i c_j are within 5
    standard errors (variance from the exact fourth-order moments bounded by K^4 p)."""
    p = np.array([0.05, 0.15, 0.3, 0.5])
    K, R = 5, 40_000
    proc = WithReplacement(p, K)
    plan = proc.plan(np.random.default_rng(0), R)
    assert plan.dtype == np.int64 and plan.shape == (R, 4)
    assert np.all(plan.sum(axis=1) == K) and plan.min() >= 0
    var = K * p * (1 - p)                       # multinomial variance of c_i
    assert np.all(np.abs(plan.mean(axis=0) - proc.count_means()) <= 5 * np.sqrt(var / R))
    second = np.einsum("ri,rj->ij", plan, plan) / R
    bound = 5 * np.sqrt(K**4 / R)               # |c_i c_j| <= K^2
    assert np.all(np.abs(second - proc.count_second_moments()) <= bound)
    # a planted bias of the draws (a reweighted p) is caught by the same rule
    biased = WithReplacement(np.array([0.1, 0.15, 0.3, 0.45]), K).plan(
        np.random.default_rng(0), R)
    assert np.any(np.abs(biased.mean(axis=0) - proc.count_means()) > 5 * np.sqrt(var / R))


def test_validation():
    with pytest.raises(ValueError, match="p must sum to 1"):
        WithReplacement([0.5, 0.6], 2)
    with pytest.raises(ValueError, match="p must be nonnegative"):
        WithReplacement([1.5, -0.5], 2)
    with pytest.raises(ValueError, match="n_draws"):
        WithReplacement([0.5, 0.5], 0)
    with pytest.raises(ValueError, match="n_rounds"):
        WithReplacement([0.5, 0.5], 2).plan(np.random.default_rng(0), -1)
    with pytest.raises(ValueError, match="rng"):
        WithReplacement([0.5, 0.5], 2).plan(0, 3)
    assert WithReplacement([0.5, 0.5], 2).plan(np.random.default_rng(0), 0).shape == (0, 2)
    with pytest.raises(ValueError, match="base draws plans of counts"):
        Excluding(WithReplacement([0.5, 0.5], 2), [2], 3)
