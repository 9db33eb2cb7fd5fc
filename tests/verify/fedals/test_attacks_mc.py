"""The Monte Carlo attacks on FedALS's corrected Remark 4.2 bounds: the claims' own instances
are inside and hold, a point outside Case II is rejected, the ratio replays exactly (common
random numbers), and a planted defect in a bound gives a ratio above 1."""

import numpy as np
import pytest

import verify.fedals.attacks_mc as mc
from flbounds.falsify.surfaces import get_surface

CASES = ["fedals.remark42.case1_bound", "fedals.remark42.case2_bound"]


@pytest.mark.parametrize("claim_id", CASES)
def test_fixed_points_are_inside_hold_and_replay(claim_id):
    surface = get_surface(claim_id)
    point = surface.fixed_instances()[0]
    assert surface.effective_validator()(**point) is True
    ratio = surface.ratio(**point)
    assert ratio <= surface.threshold
    assert surface.ratio(**point) == ratio


def test_more_draws_than_clients_is_outside_case_two():
    surface = get_surface("fedals.remark42.case2_bound")
    point = dict(surface.fixed_instances()[0], n_clients=3, n_participants=5)
    rejected = surface.effective_validator()(**point)
    assert isinstance(rejected, str) and "case_II" in rejected
    # with replacement (Case I) the same sizes are inside
    assert get_surface("fedals.remark42.case1_bound").effective_validator()(**point) is True


def test_a_bound_a_tenth_of_case_one_is_found(monkeypatch):
    surface = get_surface(CASES[0])
    point = surface.fixed_instances()[0]
    original = mc._bound72
    monkeypatch.setattr(mc, "_bound72", lambda *a: tuple(0.1 * np.asarray(original(*a))))
    assert surface.ratio(**point) > surface.threshold


def test_a_bound_a_tenth_of_case_two_is_found(monkeypatch):
    surface = get_surface(CASES[1])
    point = dict(surface.fixed_instances()[0], n_participants=1, lam=10.0, n_samples=60)
    assert surface.ratio(**point) <= surface.threshold
    original = mc._bound73
    monkeypatch.setattr(mc, "_bound73", lambda *a: (0.1 * original(*a)[0], *original(*a)[1:]))
    assert surface.ratio(**point) > surface.threshold
