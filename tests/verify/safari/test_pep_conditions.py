"""What SAFARI's Theorems 4-5 ask of flbounds.pep's rounds (verify.safari.pep_conditions): the
coupled steps, Theorem 5's q-condition as a state constraint, the proof's one-round inequality
(83), Theorem 4's q-condition at sigma_G = 0, and the tightness claims' verdicts with and
without a planted bug."""

import functools

import numpy as np
import pytest

from flbounds.ledger import bounds, get
from flbounds.pep import gap_tolerance, safari_hetero_rate
from flbounds.pep.server_steps import safari_nonconvex_rate, safari_rate
from flbounds.pep.server_steps_witness import safari_witness
from verify.safari.pep_conditions import (
    one_round_bound,
    q_condition_coefficients,
    thm4_client_step,
    thm4_q_condition_trivial,
    thm5_hetero_witness,
    thm5_state_constraint,
    thm5_steps,
    thm5_witness,
)
from verify.safari.thm5 import client_step

MU, L = 1.0, 2.0
Q, K, STEP = 0.5, 2, 0.1 / 3


def test_thm5_steps_are_the_coupling_of_the_hypothesis():
    eta_c, eta_bar = thm5_steps(MU, L, 3, 0.02)
    assert eta_c == client_step(step_server=0.02, L=L, mu=MU, local_steps=3)
    assert eta_bar == pytest.approx(2 * 0.02 * L * MU / (L + MU), rel=1e-14)
    assert thm4_client_step(3, 0.03) == 2 * 0.03 / 3


def test_state_constraint_is_the_q_conditions_linear_form():
    _, eta_bar = thm5_steps(MU, L, K, STEP)
    for name, corrected in (("printed", False), ("corrected", True)):
        a, b, _ = q_condition_coefficients(MU, L, Q, eta_bar, corrected)
        assert thm5_state_constraint(MU, L, Q, K, STEP, name) == (a, b)
    assert thm5_state_constraint(MU, L, Q, K, STEP, None) is None
    with pytest.raises(ValueError, match="q_condition"):
        thm5_state_constraint(MU, L, Q, K, STEP, "x")


def test_printed_rate_is_one_minus_eta_bar_and_tight_for_server_gd():
    """Bubeck's Lemma 3.11 factor at eta_s = 2/(L + mu) is gradient descent's exact rate."""
    step = 2 / (L + MU)
    printed = bounds.get("safari.thm5").evaluate(  # R = 1, ||x_0 - x*||^2 = 1, no noise
        mu=MU, L=L, local_steps=1, n_sampled=1, q=1e-300, R=1, dist0=1.0, sigma2=0.0,
        sigma_s2=0.0, sigma_G2=0.0, step=step).value
    eta_c, eta_bar = thm5_steps(MU, L, 1, step)
    res = safari_rate(MU, L, 0.0, 1, eta_c, step, printed=printed)
    assert res.printed == pytest.approx(1 - eta_bar)
    assert res.tight


def test_q_condition_excludes_the_expanding_client_round():
    """At eta_s = 2/(L + mu), K = 1, eta_c = 16/9 > 2/L: without the q-condition the round
    expands; with it only x* remains (the theorem is vacuous there, not violated)."""
    eta_c, _ = thm5_steps(MU, L, 1, 2 / 3)
    assert safari_rate(MU, L, 0.5, 1, eta_c, 2 / 3).worst > 1
    constrained = safari_rate(MU, L, 0.5, 1, eta_c, 2 / 3,
                              state_constraint=thm5_state_constraint(MU, L, 0.5, 1, 2 / 3))
    assert constrained.worst <= gap_tolerance(1.0)


def test_thm5_witness_is_empty_when_the_proofs_denominator_is_not_positive():
    """q = 0 at eta_s = 2/(L + mu): d <= 0, so no state meets the q-condition."""
    _, eta_bar = thm5_steps(MU, L, 1, 2 / 3)
    assert q_condition_coefficients(MU, L, 0.0, eta_bar)[2] <= 0
    assert not thm5_witness(MU, L, 0.0, 1, 2 / 3, n_grid=5).meets_state_constraint
    assert not thm5_hetero_witness(MU, L, 0.0, 1, 2 / 3, 2, n_grid=3).meets_state_constraint
    eta_c, _ = thm5_steps(MU, L, 1, 2 / 3)  # the library alone knows no d
    assert safari_witness(MU, L, 0.0, 1, eta_c, 2 / 3, n_grid=5).meets_state_constraint


def test_thm5_witness_matches_the_library_witness_where_d_is_positive():
    eta_c, _ = thm5_steps(MU, L, 3, 0.02)
    ours = thm5_witness(MU, L, 0.5, 3, 0.02, n_grid=21)
    lib = safari_witness(MU, L, 0.5, 3, eta_c, 0.02, n_grid=21,
                         state_constraint=thm5_state_constraint(MU, L, 0.5, 3, 0.02))
    assert ours == lib and ours.meets_state_constraint


@pytest.mark.parametrize("s", [0.0, 1.0, 10.0])
def test_one_client_printed_bound_is_above_83_above_one_minus_eta_bar(s):
    printed = bounds.get("safari.thm5").evaluate(  # R = 1, ||x_0 - x*||^2 = 1, no noise
        mu=MU, L=L, local_steps=K, n_sampled=1, q=Q, R=1, dist0=1.0, sigma2=0.0, sigma_s2=0.0,
        sigma_G2=s, step=STEP).value
    _, eta_bar = thm5_steps(MU, L, K, STEP)
    assert printed >= one_round_bound(MU, L, Q, K, STEP, s) >= 1 - eta_bar


def test_hetero_worst_case_stays_below_83():
    eta_c, _ = thm5_steps(MU, L, K, STEP)
    for s in (0.0, 0.1, 1.0, 10.0):
        res = safari_hetero_rate(MU, L, Q, K, eta_c, STEP, 3, n_sampled=1, eligible=[0, 1],
                                 sigma_g2_ratio=s,
                                 state_constraint=thm5_state_constraint(MU, L, Q, K, STEP))
        assert res.worst <= one_round_bound(MU, L, Q, K, STEP, s) + gap_tolerance(res.worst)


def test_nonconvex_worst_case_is_below_the_printed_bound():
    step = 1 / (8 * np.sqrt(30) * L)
    printed = bounds.get("safari.thm4").evaluate(
        L=L, local_steps=3, n_sampled=1, q=0.5, R=2, delta_f=1.0, sigma2=0.0, sigma_s2=0.0,
        sigma_G2=0.0, step=step).value
    res = safari_nonconvex_rate(L, 0.5, 3, thm4_client_step(3, step), step, 2, printed=printed)
    assert 0 < res.worst < res.printed
    assert thm4_q_condition_trivial(L, step)
    assert not thm4_q_condition_trivial(L, 1.0)


def test_tightness_claims_hold_on_quick():
    for cid in ("safari.thm5.tightness", "safari.thm4.tightness"):
        res = get(cid).check(seed=0)
        assert res.verdict == "holds", (cid, res.reason)
        assert res.worst_case["ratio"] <= 1


def test_dropping_the_server_step_changes_the_thm5_verdict(monkeypatch):
    """A SAFARI whose server rounds do nothing: its worst case exceeds 1 - eta_bar, and the
    1-D quadratic replay (run with the correct algorithm) does not, so the claim leaves
    'holds' without calling the paper wrong."""
    from verify.safari.thm5 import tightness
    monkeypatch.setattr(tightness, "safari_rate",
                        functools.partial(safari_rate, drop_server_step=True))
    res = get("safari.thm5.tightness").check(seed=0)
    assert res.verdict == "not-applicable", res.reason


def test_hetero_tightness_claim_holds_on_quick():
    res = get("safari.thm5.hetero_tightness").check(seed=0)
    assert res.verdict == "holds", res.reason
    assert res.worst_case["ratio"] <= 1


def test_planted_bugs_change_the_hetero_verdict(monkeypatch):
    """Server rounds that do nothing: above (83) at q = 0, and the replay (the correct
    algorithm) does not break it, so not-applicable; no heterogeneity bound: the SDP is
    unbounded, the claim is an error."""
    from verify.safari.thm5 import tightness_hetero

    monkeypatch.setattr(tightness_hetero, "safari_hetero_rate",
                        functools.partial(safari_hetero_rate, drop_server_step=True))
    assert get("safari.thm5.hetero_tightness").check(seed=0).verdict == "not-applicable"
    monkeypatch.setattr(tightness_hetero, "safari_hetero_rate",
                        functools.partial(safari_hetero_rate, drop_heterogeneity=True))
    assert get("safari.thm5.hetero_tightness").check(seed=0).verdict == "error"
