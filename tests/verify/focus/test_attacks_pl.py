"""The attack on Theorem 1(b)'s printed rate on the scalar PL problem: the claim's instance is
inside and holds, a step above the printed condition is rejected, and a planted rate a
thousand times as fast is found (the printed rate is loose by about two orders of magnitude
here, so a smaller planted factor still holds)."""

import verify.focus.attacks_pl as pl
from flbounds.falsify.surfaces import get_surface

CLAIM = "focus.thm1b.printed_rate_scalar_pl"


def test_fixed_point_holds_and_a_large_step_is_rejected():
    surface = get_surface(CLAIM)
    point = surface.fixed_instances()[0]
    assert surface.effective_validator()(**point) is True
    assert surface.ratio(**point) <= surface.threshold
    rejected = surface.effective_validator()(**dict(point, step_frac=1.2))
    assert isinstance(rejected, str) and "step" in rejected


def test_a_rate_a_thousand_times_as_fast_is_found(monkeypatch):
    surface = get_surface(CLAIM)
    point = surface.fixed_instances()[0]
    monkeypatch.setattr(pl, "thm1b", lambda *, beta, L, p, tau, step:
                        1 - 1000 * step * beta * len(p))
    assert surface.ratio(**point) > surface.threshold


def test_thm1c_fixed_point_holds_a_large_step_is_rejected_and_a_planted_constant_is_found(
        monkeypatch):
    """Planted: 8 (F(x_0) - F*)/(eta N R) with 8 replaced by 0.08."""
    surface = get_surface("focus.thm1c.nonconvex_rate")
    point = surface.fixed_instances()[0]
    assert surface.effective_validator()(**point) is True
    assert 0 < surface.ratio(**point) <= surface.threshold
    rejected = surface.effective_validator()(**dict(point, step_frac=1.2))
    assert isinstance(rejected, str) and "step" in rejected
    original = pl.thm1c
    monkeypatch.setattr(pl, "thm1c", lambda **kw: 0.01 * original(**kw))
    assert surface.ratio(**point) > surface.threshold
