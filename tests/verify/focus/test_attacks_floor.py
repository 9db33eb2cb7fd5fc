"""The Monte Carlo attacks on SG-FOCUS's Theorem 4 and 5 floors: the claims' setting is inside
and holds, a step above the theorem's is rejected, ratios replay (common random numbers), and
a planted eta^2 for eta in a floor is found from x* (the pure floor)."""

import numpy as np
import pytest

import verify.focus.attacks_floor as floor
from flbounds.falsify.surfaces import get_surface

CLAIMS = ["focus.thm4.floor_bound", "focus.thm5.floor_bound",
          "focus.thm4.corrected_floor_bound", "focus.thm5.repaired_bound"]


@pytest.mark.parametrize("claim_id", CLAIMS)
def test_fixed_points_hold_replay_and_a_large_step_is_rejected(claim_id):
    surface = get_surface(claim_id)
    for point in surface.fixed_instances():
        assert surface.effective_validator()(**point) is True
        ratio = surface.ratio(**point)
        assert ratio <= surface.threshold
        assert surface.ratio(**point) == ratio
    rejected = surface.effective_validator()(**dict(surface.fixed_instances()[0], step_frac=1.2))
    assert isinstance(rejected, str) and "step" in rejected


@pytest.mark.parametrize("claim_id, name", [("focus.thm4.floor_bound", "thm4_floor"),
                                            ("focus.thm5.floor_bound", "thm5_floor")])
def test_a_floor_with_eta_squared_is_found(monkeypatch, claim_id, name):
    surface = get_surface(claim_id)
    point = dict(surface.fixed_instances()[0], offset=0.0, p=np.full(16, 0.05))
    original = getattr(floor, name)
    monkeypatch.setattr(floor, name, lambda **kw: original(**kw) * kw["step"])
    assert surface.ratio(**point) > surface.threshold


def test_thm6_repaired_fixed_points_hold_a_large_step_is_rejected_and_a_tenth_is_found(
        monkeypatch):
    surface = get_surface("focus.thm6.repaired_bound")
    ratios = []
    for point in surface.fixed_instances():
        assert surface.effective_validator()(**point) is True
        ratios.append(surface.ratio(**point))
    assert max(ratios) <= surface.threshold
    point = surface.fixed_instances()[int(np.argmax(ratios))]
    rejected = surface.effective_validator()(**dict(point, step_frac=1.2))
    assert isinstance(rejected, str) and "step" in rejected
    original = floor.thm6_repaired
    monkeypatch.setattr(floor, "thm6_repaired", lambda *a: 0.1 * original(*a))
    assert surface.ratio(**point) > surface.threshold
