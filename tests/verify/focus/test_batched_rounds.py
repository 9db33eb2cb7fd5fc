"""The attacks' batched forms of one FOCUS round give the numbers of the round-by-round
forms up to the order of the sums: every participation set's next state from one library
round (all clients join), the exact noise expectation of SG-FOCUS from one round per noise
coordinate, FedAvg's local models of all clients together, and the per-class patterns."""

import itertools
from math import comb

import numpy as np
import pytest

from flbounds.participation import Bernoulli, subset_distribution
from flbounds.problems import random_quadratics
from verify.focus import lemma5_6
from verify.focus.classes import class_patterns, class_round, expect, expect_batched
from verify.focus.instances import consistent_state, focus_round, focus_round_outcomes
from verify.focus.lemma1_2 import (
    SHAPES,
    _instance,
    lemma1_sides,
    lemma1_sides_batched,
    local_models,
    local_models_together,
)
from verify.focus.thm6 import full_gradients


def _state(rng, problem, step):
    n, d = problem.n_clients, problem.dim
    x_prev = problem.x_star + rng.standard_normal(d)
    return consistent_state(problem, x_prev + 0.5 * rng.standard_normal((n, d)), x_prev, step)


@pytest.mark.parametrize("tau", [1, 3])
def test_every_set_from_one_round_is_the_round_of_that_set(tau):
    rng = np.random.default_rng(tau)
    problem = random_quadratics(rng, 4, 3, mu=1.0, L=2.0)
    state = _state(rng, problem, 0.05)
    masks, _ = subset_distribution(Bernoulli(np.full(4, 0.5)))
    out = focus_round_outcomes(problem, state, masks, 0.05, tau)
    for m, mask in enumerate(masks):
        one = focus_round(problem, state, mask, 0.05, tau)
        assert np.allclose(out.x[m], one.x, rtol=1e-15, atol=1e-15)
        assert np.allclose(out.y[m], one.y, rtol=1e-15, atol=1e-15)
        assert np.array_equal(out.models[m], one.models)
        assert np.isclose(out.consensus_error()[m], one.consensus_error(), rtol=1e-14, atol=0)


def test_class_expectation_batched_equals_round_by_round():
    rng = np.random.default_rng(7)
    problem = random_quadratics(rng, 5, 3, mu=1.0, L=2.0)
    state = _state(rng, problem, 0.02)
    masks, probs = class_patterns((0.2, 0.7), (3, 2))
    one_by_one = expect(problem, state, masks, probs, 0.02, 3,
                        [lambda s: s.consensus_error(),
                         lambda s: float(np.sum(problem.gradient(s.x) ** 2))])
    together = expect_batched(problem, state, masks, probs, 0.02, 3,
                              [lambda s: s.consensus_error(),
                               lambda s: np.sum(full_gradients(problem, s.x) ** 2, axis=1)])
    assert np.allclose(together, one_by_one, rtol=1e-13, atol=0)


@pytest.mark.parametrize("tau", [1, 2])
def test_noise_expectation_batched_equals_round_by_round(tau):
    rng = np.random.default_rng(8 + tau)
    problem = random_quadratics(rng, 3, 2, mu=1.0, L=2.0)
    masks, probs = subset_distribution(Bernoulli(np.array([0.2, 0.6, 1.0])))
    st = lemma5_6._state(rng, problem, 0.01, lemma5_6.SIGMA)
    fns = (lambda s: s.consensus_error(), lambda s: float(np.sum(problem.gradient(s.x) ** 2)),
           lambda s: float(np.sum((s.x - problem.x_star) ** 2)))
    batched = (lambda s: s.consensus_error(),
               lambda s: np.sum(full_gradients(problem, s.x) ** 2, axis=1),
               lambda s: np.sum((s.x - problem.x_star) ** 2, axis=1))
    one_by_one = lemma5_6._expect_all(problem, st, masks, probs, 0.01, tau, lemma5_6.SIGMA, fns)
    together = lemma5_6.expect_batched(problem, st, masks, probs, 0.01, tau, lemma5_6.SIGMA,
                                       batched)
    assert np.allclose(together, one_by_one, rtol=1e-13, atol=0)


def test_local_models_together_are_the_one_client_runs():
    rng = np.random.default_rng(9)
    for shape in SHAPES:
        problem = _instance(rng, *shape)[0]
        start = problem.x_star + rng.standard_normal(problem.dim)
        assert np.allclose(local_models_together(problem, start, step=0.05, local_steps=5),
                           local_models(problem, start, step=0.05, local_steps=5),
                           rtol=1e-15, atol=1e-15)


def test_lemma1_sides_batched_are_the_per_state_sides():
    """Both sides of Lemma 1's (49) over a batch of states equal the per-state ones to
    rounding (relative to the larger side, as the claim's tolerance), at states spread over
    four orders of magnitude; a planted slip (the weights rolled) is caught."""
    rng = np.random.default_rng(11)
    for shape in SHAPES:
        problem, q, delta_q2, _ = _instance(rng, *shape)
        n, d = problem.n_clients, problem.dim
        X = problem.x_star + 10 ** rng.uniform(-3, 1, (40, 1, 1)) * rng.standard_normal(
            (40, n, d))
        lhs, rhs = lemma1_sides_batched(problem, q, delta_q2, X, 0.1 / problem.L)
        one = np.array([lemma1_sides(problem, q, delta_q2, x, 0.1 / problem.L) for x in X])
        scale = np.max(np.abs(one), axis=1)  # the claim's tolerance is relative to it
        assert np.all(np.abs(lhs - one[:, 0]) <= 1e-13 * scale)
        assert np.all(np.abs(rhs - one[:, 1]) <= 1e-13 * scale)
        slipped = lemma1_sides_batched(problem, np.roll(q, 1), delta_q2, X, 0.1 / problem.L)
        assert np.any(np.abs(slipped[1] - one[:, 1]) > 1e-6 * scale)


def _patterns_by_product(p_class, sizes):
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    masks, probs = [], []
    for counts in itertools.product(*(range(s + 1) for s in sizes)):
        mask = np.zeros(sum(sizes), dtype=bool)
        prob = 1.0
        for m, n, p, start in zip(counts, sizes, p_class, starts, strict=True):
            mask[start:start + m] = True
            prob *= comb(n, m) * float(p) ** m * (1.0 - float(p)) ** (n - m)
        masks.append(mask)
        probs.append(prob)
    return np.array(masks), np.array(probs)


@pytest.mark.parametrize("sizes", [(1, 1, 1, 1), (4, 1, 3, 2), (4, 4, 4, 4)])
def test_class_patterns_are_the_product_enumeration(sizes):
    p_class = (0.01, 0.3, 1.0, 0.77)
    masks, probs = class_patterns(p_class, sizes)
    ref_masks, ref_probs = _patterns_by_product(p_class, sizes)
    assert np.array_equal(masks, ref_masks)
    assert np.array_equal(probs, ref_probs)


def test_a_point_builds_its_round_once_and_equal_points_share_it():
    from verify.focus.classes import fixed_classes

    rule = lambda problem, tau, q_min: 0.01  # noqa: E731
    point = fixed_classes()
    first = class_round(point, rule)
    assert class_round({k: np.copy(v) for k, v in point.items()}, rule) is first
    assert class_round(dict(point, step_frac=0.5), rule) is not first
