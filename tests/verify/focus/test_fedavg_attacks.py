"""The attacks of FedAvg's Lemmas 1-2 (FOCUS, App. D.2): points beyond the lemmas' steps are
rejected by their predicates, and a bound planted too small is crossed."""

import numpy as np
import pytest

import verify.focus.attacks as attacks
from flbounds.falsify.surfaces import get_surface

WEIGHTS = np.linspace(1, 2, 16)
POINT = {**attacks.FEDAVG_FIXED[0], "n": 12, "q": WEIGHTS / WEIGHTS.sum()}
POINT2 = {**attacks.LEMMA2_FIXED[0], "n": 12, "tau": 6}


@pytest.mark.parametrize("claim_id, point", [("focus.lemma1.fedavg_descent", POINT),
                                             ("focus.lemma2.fedavg_consensus_x", POINT2),
                                             ("focus.lemma2.fedavg_consensus_y", POINT2)])
def test_points_beyond_the_step_are_rejected(claim_id, point):
    valid = get_surface(claim_id).effective_validator()
    assert valid(**point) is True
    assert valid(**dict(point, step_frac=1.5)) is not True


def test_lemma1_planted_bound_is_crossed(monkeypatch):
    assert 0 < attacks.lemma1_descent(**POINT) <= 1
    real = attacks.lemma1_sides
    monkeypatch.setattr(attacks, "lemma1_sides",
                        lambda *a: (real(*a)[0], real(*a)[1] / 1e3))
    assert attacks.lemma1_descent(**POINT) > 1


@pytest.mark.parametrize("name, fn", [("lemma2_x_bound", attacks.lemma2_x),
                                      ("lemma2_y_bound", attacks.lemma2_y)])
def test_lemma2_planted_bound_is_crossed(monkeypatch, name, fn):
    assert 0 < fn(**POINT2) <= 1
    real = getattr(attacks, name)
    monkeypatch.setattr(attacks, name, lambda **c: real(**c) / 1e3)
    assert fn(**POINT2) > 1
