"""SAFARI's worst-case SDPs (flbounds.pep.server_steps): closed forms, witnesses, bad input, and
the tightness claims' verdicts with and without a planted bug."""

import functools

import numpy as np
import pytest

from flbounds.ledger import bounds, get
from flbounds.pep import gap_tolerance, gd_contraction
from flbounds.pep.server_steps import safari_nonconvex_rate, safari_rate, thm5_steps
from flbounds.pep.server_steps_witness import safari_witness

MU, L = 1.0, 2.0


@pytest.mark.parametrize("step", [0.02, 0.1, 2 / 3])
@pytest.mark.parametrize("K", [1, 3])
def test_server_only_round_is_gradient_descent(step, K):
    res = safari_rate(MU, L, 0.0, K, step, q_condition=None)
    assert res.worst == pytest.approx(gd_contraction(MU, L, step), abs=gap_tolerance(1.0))


@pytest.mark.parametrize("step", [0.02, 0.1])
@pytest.mark.parametrize("K", [1, 3])
def test_client_only_round_is_gd_to_the_K(step, K):
    eta_c, _ = thm5_steps(MU, L, K, step)
    res = safari_rate(MU, L, 1.0, K, step, q_condition=None)
    assert res.worst == pytest.approx(gd_contraction(MU, L, eta_c) ** K, abs=gap_tolerance(1.0))


def test_printed_rate_is_one_minus_eta_bar_and_tight_for_server_gd():
    """Bubeck's Lemma 3.11 factor at eta_s = 2/(L + mu) is gradient descent's exact rate."""
    step = 2 / (L + MU)
    printed = bounds.get("safari.thm5").evaluate(  # R = 1, ||x_0 - x*||^2 = 1, no noise
        mu=MU, L=L, local_steps=1, n_sampled=1, q=1e-300, R=1, dist0=1.0, sigma2=0.0,
        sigma_s2=0.0, sigma_G2=0.0, step=step).value
    res = safari_rate(MU, L, 0.0, 1, step, q_condition=None, printed=printed)
    assert res.printed == pytest.approx(1 - thm5_steps(MU, L, 1, step)[1])
    assert res.tight


@pytest.mark.parametrize("q, K, step", [(0.5, 3, 0.02), (0.5, 1, 2 / 3), (0.8, 5, 0.1)])
def test_one_dimensional_witness_replays_the_worst_case(q, K, step):
    """Mixed rounds of gradient steps: the SDP's worst case is a 1-D quadratic, which the
    project's SAFARI replays (a lower bound that here meets the upper one)."""
    res = safari_rate(MU, L, q, K, step, q_condition=None)
    wit = safari_witness(MU, L, q, K, step, q_condition=None, n_grid=401)
    assert wit.replayed <= res.worst + gap_tolerance(res.worst)
    assert wit.replayed == pytest.approx(res.worst, rel=1e-5)


def test_q_condition_excludes_the_expanding_client_round():
    """At eta_s = 2/(L + mu), K = 1, eta_c = 16/9 > 2/L: without the q-condition the round
    expands; with it only x* remains (the theorem is vacuous there, not violated)."""
    free = safari_rate(MU, L, 0.5, 1, 2 / 3, q_condition=None)
    assert free.worst > 1
    assert safari_rate(MU, L, 0.5, 1, 2 / 3).worst <= gap_tolerance(1.0)


def test_nonconvex_client_round_with_K1_is_a_server_step_of_twice_the_step():
    """eta_c = 2 eta_s / K: one local step is a server step with 2 eta_s."""
    step = 0.01
    client = safari_nonconvex_rate(L, 1.0, 1, step, 2)
    server = safari_nonconvex_rate(L, 0.0, 1, 2 * step, 2)
    assert client.worst == pytest.approx(server.worst, rel=1e-5)


def test_nonconvex_worst_case_is_below_the_printed_bound():
    step = 1 / (8 * np.sqrt(30) * L)
    printed = bounds.get("safari.thm4").evaluate(
        L=L, local_steps=3, n_sampled=1, q=0.5, R=2, delta_f=1.0, sigma2=0.0, sigma_s2=0.0,
        sigma_G2=0.0, step=step).value
    res = safari_nonconvex_rate(L, 0.5, 3, step, 2, printed=printed)
    assert 0 < res.worst < res.printed
    assert res.params["q_condition_trivial"]


@pytest.mark.parametrize("call, name", [
    (lambda: safari_rate(MU, L, 1.5, 2, 0.1), "q"),
    (lambda: safari_rate(MU, L, 0.5, 0, 0.1), "local_steps"),
    (lambda: safari_rate(MU, L, 0.5, 2, -0.1), "step_server"),
    (lambda: safari_rate(MU, L, 0.5, 2, 0.1, q_condition="x"), "q_condition"),
    (lambda: safari_rate(3.0, L, 0.5, 2, 0.1), "L"),
    (lambda: safari_nonconvex_rate(L, 0.5, 2, 0.01, 0), "n_rounds"),
    (lambda: safari_nonconvex_rate(-1.0, 0.5, 2, 0.01, 1), "L"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


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
