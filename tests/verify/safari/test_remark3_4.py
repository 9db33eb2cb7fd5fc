"""Remarks 3 and 4 of SAFARI read as the paper states them: each claim changes verdict under a
planted defect of the fixed-point computation it rests on."""

import numpy as np
import pytest

import verify.safari.remark3_4 as rem
from flbounds.ledger import get


def test_reading_one_fails_and_reading_two_holds():
    out = get("safari.remark3.fixed_q_reaches_stationarity").check(seed=0)
    assert out.verdict == "violated"
    assert out.measured == pytest.approx((2 * 0.8 / 1.8) ** 2, rel=1e-12)
    assert all(out.hypotheses.values())
    # the exact floors approach the closed-form limit as eta_s falls
    gaps = np.abs(out.details["floor_minus_limit"])
    assert np.all(np.diff(gaps) < 0) and gaps[-1] < 1e-6
    assert get("safari.remark3.vanishing_q_reaches_stationarity").check(seed=0).verdict == "holds"


def test_every_gated_step_carries_its_own_instances():
    """The q-condition and the step condition are read at each step: a step above Theorem 4's
    limit (eta_c = 2 eta_s/K = 0.02 > 1/(4 sqrt 30 K)) makes the claim not-applicable."""
    claim = get("safari.remark3.fixed_q_reaches_stationarity")
    out = claim.check(seed=0)
    assert set(out.details["per_step_seed_G1_G2"]) == {str(e) for e in out.details["steps"]}
    assert claim.check(seed=0, steps=[1e-4, 0.05]).verdict == "not-applicable"


def test_closed_form_limit_matches_the_exact_fixed_point():
    prob = rem.two_group_problem()
    for eta in (1e-2, 1e-4, 1e-6):
        xbar = rem.safari_mean_limit(prob, rem.ELIGIBLE, q=0.8, step_client=2 * eta / 5,
                                     step_server=eta, local_steps=5)
        closed, t = rem.identity_hessian_limit(prob, rem.ELIGIBLE, 0.8, eta, 5)
        assert np.allclose(xbar, closed, rtol=0.0, atol=1e-10)
    assert t == pytest.approx(2 * 0.8 / 1.8, rel=1e-5)
    with pytest.raises(ValueError, match="prob"):
        rem.identity_hessian_limit(rem.biased_strongly_convex()[0], [2], 0.8, 1e-2, 5)


def test_no_excluded_clients_would_clear_reading_one():
    """Planted: every client eligible (c_D = cbar, no participation bias): the limit is 0 and
    reading 1 holds."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rem, "ELIGIBLE", np.arange(10))
        out = get("safari.remark3.fixed_q_reaches_stationarity").check(seed=0)
    assert out.verdict == "holds"


def test_a_wrong_fixed_point_is_an_error_not_an_accusation():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rem, "safari_mean_limit", lambda prob, *a, **k: prob.x_star.copy())
        assert get("safari.remark3.fixed_q_reaches_stationarity").check(seed=0).verdict == "error"


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
