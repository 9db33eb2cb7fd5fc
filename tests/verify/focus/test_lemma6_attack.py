"""The attack of Lemma 6 (SG-FOCUS consensus): a step beyond the lemma's bound is rejected by
its predicates, and a right side planted too small is crossed."""

import verify.focus.attacks as attacks
from flbounds.falsify.surfaces import get_surface


def test_lemma6_points_beyond_the_step_are_rejected():
    point = attacks._fixed_lemma6()[0]
    valid = get_surface("focus.lemma6.sg_consensus").effective_validator()
    assert valid(**point) is True
    assert valid(**dict(point, step_frac=1.5)) is not True


def test_lemma6_planted_small_bound_is_crossed(monkeypatch):
    point = dict(attacks._fixed_lemma6()[0], spread_scale=1.0, offset_scale=1.0)
    assert 0 < attacks.lemma6_consensus(**point) <= 1
    real = attacks.lemma6_rhs
    monkeypatch.setattr(attacks, "lemma6_rhs", lambda **c: real(**c) / 1e3)
    assert attacks.lemma6_consensus(**point) > 1
