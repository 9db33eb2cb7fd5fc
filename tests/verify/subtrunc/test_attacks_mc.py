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


def test_lemma3_exact_moments_match_the_claims_simulator():
    from verify.subtrunc.lemma3 import _local_paths

    eig, w0, step, e, sigma2 = np.array([1.0, -0.5, 0.2]), np.array([1.0, 2.0, -1.0]), 0.06, 5, 2.0
    noise = np.random.default_rng(0).normal(size=(40000, e, 3))
    sq = _local_paths(lambda w: w * eig, w0, step, e, np.sqrt(sigma2), noise)
    exact = mc.lemma3_exact_lhs(eig, w0, step, e, sigma2)
    se = sq.std(axis=0, ddof=1) / np.sqrt(sq.shape[0])
    assert np.all(np.abs(sq.mean(axis=0) - exact) <= 5 * se + 1e-12)


def test_lemma3_rejects_a_step_above_one_third_and_finds_a_planted_constant(monkeypatch):
    """eta L E = 0.5 is outside; planted: (tau/8)(||grad||^2 + sigma^2) (18 dropped to 1)."""
    surface = get_surface("subtrunc.lemma3.local_growth")
    point = dict(surface.fixed_instances()[0], w0=np.ones(5), sigma2=0.01)
    assert surface.effective_validator()(**point) is True
    assert isinstance(surface.effective_validator()(**dict(point, step_frac=1.5)), str)
    assert surface.ratio(**point) <= surface.threshold
    monkeypatch.setattr(mc, "eq61_rhs", lambda tau, g, s2: tau / 8 * (g + s2))
    assert surface.ratio(**point) > surface.threshold
