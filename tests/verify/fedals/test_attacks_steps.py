"""The attacks on the proof steps of FedALS Theorems 4.1 and B.1: the claims' own cells and the
corners are inside the hypotheses and hold (the tight per-draw steps reach 1 from below, never
above), the ratio replays, a point outside the hypotheses is rejected, and a factor dropped
from one step's right side gives a ratio above 1."""

import numpy as np
import pytest

import verify.fedals.attacks_steps as a2
import verify.fedals.attacks_steps as b1
from flbounds.falsify.surfaces import get_surface

THM41, THMB1 = "fedals.thm41.proof_steps", "fedals.thmB1.proof_steps"


@pytest.mark.parametrize("claim_id", [THM41, THMB1])
def test_fixed_points_are_inside_hold_and_replay(claim_id):
    surface = get_surface(claim_id)
    valid = surface.effective_validator()
    ratios = []
    for point in surface.fixed_instances():
        assert valid(**point) is True
        ratios.append(surface.ratio(**point))
    assert max(ratios) <= surface.threshold
    # the corners make the smoothness steps exact: the search starts at their supremum, 1
    assert max(ratios) > 1 - 1e-6
    point = surface.fixed_instances()[0]
    assert surface.ratio(**point) == ratios[0]


def test_every_checked_step_has_a_ratio():
    point = get_surface(THM41).fixed_instances()[0]
    names = " ".join(a2.thm41_step_ratios(**point))
    for ref in ("(16)", "(22)", "(29)", "(18)-(20)", "(21)-(22)", "(35)"):
        assert ref in names
    point = get_surface(THMB1).fixed_instances()[0]
    names = " ".join(b1.b1_step_ratios(**point))
    for ref in ("(16)", "(40)", "(41)-(44)", "(45)", "(47)-(49)", "(50)"):
        assert ref in names
    # (45) and (50) under both readings of eps_k (on S'_k as printed, on S_k as meant)
    assert sum(name.startswith(("(45)", "(50)")) and "as printed" in name
               for name in b1.b1_step_ratios(**point)) == 2


def test_points_outside_the_hypotheses_are_rejected():
    surface = get_surface(THM41)
    point = surface.fixed_instances()[0]
    rejected = surface.effective_validator()(**dict(point, lam=0.0))   # mu = 0
    assert isinstance(rejected, str) and "convex" in rejected
    surface = get_surface(THMB1)
    point = surface.fixed_instances()[0]
    rejected = surface.effective_validator()(**dict(point, tau=0))
    assert isinstance(rejected, str) and "sgd" in rejected


@pytest.mark.parametrize("factor, planted", [("pl", 1.0), ("smooth", 0.25), ("sc", 1.0),
                                             ("v_erm", 1.0)])
def test_a_dropped_factor_in_a_thm41_step_is_found(monkeypatch, factor, planted):
    """(29) with L for 2L, (16) with L/4, (22) with mu for mu/2, (21)-(22) with K^2 G/mu for
    2 K^2 G/mu: some fixed point of the surface goes above 1 (5 SE for the last)."""
    surface = get_surface(THM41)
    monkeypatch.setitem(a2.FACTORS, factor, planted)
    assert max(surface.ratio(**p) for p in surface.fixed_instances()) > surface.threshold


@pytest.mark.parametrize("factor, planted", [("parallelogram", 1.0), ("pl", 1.0),
                                             ("eps_50", 0.0)])
def test_a_dropped_term_in_a_thmB1_step_is_found(monkeypatch, factor, planted):
    """(40) with ||a||^2 + ||b||^2, (47)-(49) with L for 2L, (50) without eps_k."""
    surface = get_surface(THMB1)
    monkeypatch.setitem(a2.FACTORS, factor, planted)
    assert max(surface.ratio(**p) for p in surface.fixed_instances()) > surface.threshold


def test_step_ratio_forms():
    """Per-draw: the rounding allowance on the right; expectation: the 5-SE limit; identity:
    residual over 5 SE."""
    assert a2.per_draw_ratio([1.0], [1.0], 1e-10) < 1 < a2.per_draw_ratio([1.0 + 1e-9], [1.0],
                                                                            1e-10)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400, 1))
    assert a2.mc_ratio(1.0 + x, np.full((400, 1), 1.0), 1e-10) < 1     # equal means: holds
    assert a2.mc_ratio(2.0 + x, np.full((400, 1), 1.0), 1e-10) > 1     # 20 SE above: found
    assert a2.identity_ratio(x, np.zeros((400, 1)), 1e-10) < 1
    assert a2.identity_ratio(x + 1.0, np.zeros((400, 1)), 1e-10) > 1
