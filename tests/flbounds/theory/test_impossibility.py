"""Unit tests of the Theorem 1 construction in flbounds.theory.impossibility (SAFARI)."""

import numpy as np
import pytest

from flbounds.theory.impossibility import (
    LEARNERS,
    adversarial_selection,
    client_level_x2_probabilities,
    draw_plan,
    failure_indicators,
    learner_predictions,
    true_risk,
    two_point_distribution,
)


def test_two_point_masses():
    eps, p1, p2 = two_point_distribution(10, 5)
    assert eps == 0.0625 and p1 == 0.75 and p2 == 0.25


def test_adversary_prefers_x1():
    k1, k2 = adversarial_selection(np.array([0, 5, 6, 10]), 10, 5, 1)
    assert k1.tolist() == [5, 5, 4, 0] and k2.tolist() == [0, 0, 1, 5]


def test_client_level_pooled_mass_matches():
    probs = client_level_x2_probabilities(10, 3)
    assert probs[:3].sum() == 0 and probs.mean() == pytest.approx((1 - 0.3) / 2)


@pytest.mark.parametrize("learner", LEARNERS)
def test_learners_are_correct_when_x2_seen(learner):
    coins = np.ones((2, 1), dtype=int)
    for target in ("f1", "f2"):
        h1, h2 = learner_predictions(learner, np.array([3]), np.array([1]), target, coins=coins)
        assert true_risk(h1, h2, target, 0.25)[0] == 0.0


def test_unseen_x2_fools_one_target():
    h1, h2 = learner_predictions("erm", np.array([4]), np.array([0]), "f2")
    assert true_risk(h1, h2, "f2", 0.25)[0] == 0.25
    h1, h2 = learner_predictions("erm", np.array([4]), np.array([0]), "f1")
    assert true_risk(h1, h2, "f1", 0.25)[0] == 0.0


def test_plan_is_reproducible_and_server_helps():
    a = draw_plan(np.random.default_rng(1), 10, 5, 2, n_reps=100, n_server=50)
    b = draw_plan(np.random.default_rng(1), 10, 5, 2, n_reps=100, n_server=50)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    fail, _ = failure_indicators(a, "erm", "f2", 10, 5)
    assert fail.mean() < 0.01   # (3/4)^50


@pytest.mark.parametrize(("kwargs", "name"), [(dict(learner="svm"), "learner"),
                                              (dict(target="f3"), "target")])
def test_learner_input_validation(kwargs, name):
    args = dict(learner="erm", kept_x1=np.array([1]), kept_x2=np.array([0]), target="f1")
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        learner_predictions(**args)


def test_bad_counts_rejected():
    with pytest.raises(ValueError, match="x2_counts"):
        adversarial_selection(np.array([11]), 10, 5, 1)
    with pytest.raises(ValueError, match="kept_x1"):
        learner_predictions("erm", np.array([-1]), np.array([0]), "f1")
    with pytest.raises(ValueError, match="coins"):
        learner_predictions("randomized", np.array([1]), np.array([0]), "f1", coins=None)
