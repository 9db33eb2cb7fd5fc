"""Remarks 3 and 4 of SAFARI read as the paper states them: each claim changes verdict under a
planted defect of the fixed-point computation it rests on."""

import numpy as np
import pytest

import verify.safari.remark3_4 as rem
from flbounds.ledger import get


def test_reading_one_fails_and_reading_two_holds():
    out = get("safari.remark3.fixed_q_reaches_stationarity").check(seed=0)
    assert out.verdict == "violated"
    assert min(out.measured) > 0.78
    assert get("safari.remark3.vanishing_q_reaches_stationarity").check(seed=0).verdict == "holds"


def test_an_unbiased_fixed_point_would_clear_reading_one():
    """A planted fixed point at x* (what an unbiased method reaches) makes reading 1 hold."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rem, "safari_mean_limit", lambda prob, *a, **k: prob.x_star.copy())
        assert get("safari.remark3.fixed_q_reaches_stationarity").check(seed=0).verdict == "holds"


def test_a_fixed_q_fails_reading_two():
    real = rem._floor
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rem, "_floor", lambda prob, el, q, eta, k: real(prob, el, 0.5, eta, k))
        out = get("safari.remark3.vanishing_q_reaches_stationarity").check(seed=0)
    assert out.verdict == "violated"


def test_remark4_mitigation_needs_q_in_the_fixed_point():
    real = rem.safari_mean_limit
    assert get("safari.remark4.mitigates").check(seed=0).verdict == "holds"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rem, "safari_mean_limit",
                   lambda prob, el, *, q, **k: real(prob, el, q=1.0, **k))
        assert get("safari.remark4.mitigates").check(seed=0).verdict == "violated"


def test_remark4_contraction_fails_with_a_planted_large_client_step():
    assert get("safari.remark4.converges").check(seed=0).verdict == "holds"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rem, "_coupled", lambda prob, eta, k: 10 * eta)
        out = get("safari.remark4.converges").check(seed=0)
    assert out.verdict == "violated" and out.measured > 1.0


def test_remark3_vanishing_floor_matches_first_order():
    out = get("safari.remark3.vanishing_q_reaches_stationarity").check(seed=0)
    ratios = np.array(out.details["floor_over_first_order"])
    assert np.all((ratios > 0.95) & (ratios <= 1.0))
