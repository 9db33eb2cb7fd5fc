"""The class form of one FOCUS round's expectation (clients in classes of identical clients,
a sum over per-class counts with binomial weights) against the direct enumeration of the 2^N
participation sets at N <= 4, and the one-round attacks it carries to N = 16: points outside
the hypotheses are rejected, and a bound planted too small is crossed."""

import numpy as np
import pytest

import verify.focus.lemma4.attacks as lemma4_attacks
import verify.focus.thm1.attacks as thm1_attacks
from flbounds.falsify.surfaces import get_surface
from flbounds.participation import Bernoulli, subset_distribution
from flbounds.problems import Quadratic
from verify.focus.classes import class_patterns, expand, expect, fixed_classes
from verify.focus.instances import consistent_state, focus_round
from verify.focus.lemma4.corrected import printed_constant


@pytest.mark.parametrize("sizes", [(2, 2), (3, 1), (1, 1, 2), (4,), (1, 2)])
def test_class_sum_equals_the_enumeration_of_every_set(sizes):
    rng = np.random.default_rng(sum(sizes) * 10 + len(sizes))
    c, d = len(sizes), 3
    hess = np.stack([np.diag(rng.uniform(1, 2, d)) for _ in range(c)])
    problem = Quadratic(expand(hess, sizes), expand(rng.normal(size=(c, d)), sizes))
    p_class = rng.uniform(0.05, 0.95, c)
    models = problem.x_star + 0.5 + expand(rng.normal(size=(c, d)), sizes)
    step = 0.01
    state = consistent_state(problem, models, problem.x_star + 0.3, step)
    fns = [lambda s: s.consensus_error(),
           lambda s: float(np.sum((s.x - problem.x_star) ** 2)),
           lambda s: float(np.sum(problem.gradient(s.x) ** 2))]
    masks, probs = class_patterns(p_class, sizes)
    assert abs(probs.sum() - 1) <= 1e-14
    by_class = expect(problem, state, masks, probs, step, 3, fns)
    all_masks, all_probs = subset_distribution(Bernoulli(expand(p_class, sizes)))
    direct = np.zeros(len(fns))
    for mask, prob in zip(all_masks, all_probs, strict=True):
        nxt = focus_round(problem, state, mask, step, 3)
        direct += prob * np.array([fn(nxt) for fn in fns])
    assert np.allclose(by_class, direct, rtol=1e-12, atol=0)


@pytest.mark.parametrize("claim_id", ["focus.thm1a.mc_below_bound", "focus.thm1b.printed_rate",
                                      "focus.lemma4.corrected"])
def test_points_beyond_the_step_bound_are_rejected(claim_id):
    valid = get_surface(claim_id).effective_validator()
    point = fixed_classes(sizes=(4, 4, 4, 4))
    assert valid(**point) is True
    assert valid(**dict(point, reading=1)) is True
    assert valid(**dict(point, step_frac=1.5)) is not True


def test_thm1a_at_n16_holds_and_a_planted_rate_is_crossed(monkeypatch):
    point = fixed_classes((0.05, 0.3, 0.6, 0.9), 4, sizes=(4, 4, 4, 4))
    assert 0 < thm1_attacks.thm1a_one_round(**point) <= 1
    real = thm1_attacks.thm1a
    monkeypatch.setattr(thm1_attacks, "thm1a", lambda **c: real(**c) / 1e3)
    assert thm1_attacks.thm1a_one_round(**point) > 1


def test_thm1b_planted_rate_is_crossed(monkeypatch):
    point = fixed_classes((0.05, 0.3, 0.6, 0.9), 4, sizes=(3, 1, 2, 1))
    assert 0 < thm1_attacks.thm1b_one_round(**point) <= 1
    real = thm1_attacks.thm1b
    monkeypatch.setattr(thm1_attacks, "thm1b", lambda **c: real(**c) / 1e3)
    assert thm1_attacks.thm1b_one_round(**point) > 1


def test_lemma4_corrected_planted_constant_is_crossed(monkeypatch):
    """At the rare-participation witness, the printed constant (the factor N + 1 dropped) in
    place of the corrected one is crossed."""
    point = lemma4_attacks._fixed_corrected()[1]
    assert 0 < lemma4_attacks.lemma4_corrected(**point) <= 1
    monkeypatch.setattr(lemma4_attacks, "corrected_constant", printed_constant)
    assert lemma4_attacks.lemma4_corrected(**point) > 1


def test_one_client_per_class_is_the_four_client_round():
    """At one client per class the class space is the former N = 4 round space: Lemma 4's
    ratio is the same number through both."""
    point = lemma4_attacks.fixed_round()[0]
    by_class = lemma4_attacks.lemma4(**lemma4_attacks._as_classes(point))
    direct = lemma4_attacks._lemma4_ratio(point, printed_constant)
    assert abs(by_class - direct) <= 1e-12 * direct
