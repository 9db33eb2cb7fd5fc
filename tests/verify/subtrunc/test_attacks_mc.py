"""The Monte Carlo attack on SubTrunc's stochastic-greedy guarantee: fixed points inside and
holding, a sample size above n rejected, replayable ratios, and a planted sign error in the
guarantee found."""

import numpy as np

import verify.subtrunc.attacks_mc as mc
from flbounds.falsify.surfaces import get_surface

CLAIM = "subtrunc.greedy.stochastic"


def test_fixed_points_hold_and_replay():
    surface = get_surface(CLAIM)
    for point in surface.fixed_instances():
        assert surface.effective_validator()(**point) is True
        ratio = surface.ratio(**point)
        assert ratio <= surface.threshold
        assert surface.ratio(**point) == ratio


def test_a_sample_larger_than_n_is_rejected():
    surface = get_surface(CLAIM)
    rejected = surface.effective_validator()(**dict(surface.fixed_instances()[0], r=9))
    assert isinstance(rejected, str) and "sample" in rejected


def test_a_plus_sign_on_the_exponential_is_found(monkeypatch):
    """Planted: 1 - 1/e + exp(-r k/n), above 1 at r = 1: no mean ratio reaches it."""
    monkeypatch.setattr(mc, "stochastic_bound",
                        lambda r, k, n: mc.E_BOUND + np.exp(-r * k / n))
    surface = get_surface(CLAIM)
    assert surface.ratio(**surface.fixed_instances()[0]) > surface.threshold
