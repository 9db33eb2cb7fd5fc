"""K-Vib's violated proof steps of Theorems 4.1, 5.1 and D.1 rest on instances where every
hypothesis of the printed statement is evaluated and true; an instance outside them (a step
above 1/(8RL), a budget above N) turns the accusation into not-applicable."""

import numpy as np
import pytest

import verify.kvib.thm4_1 as thm41
import verify.kvib.thm4_1.proof_gaps as gaps
import verify.kvib.thm4_1.proof_gaps_descent as gaps_descent
from flbounds.ledger.api.plugins import load_claims

PROOF_STEPS = [
    "kvib.thm4_1.bound_a_factor_six", "kvib.thm4_1.eq33_no_factor_two",
    "kvib.thm4_1.eta_g_range_needs_l_le_1", "kvib.thm4_1.last_term_printed",
    "kvib.thm4_1.proof_drops_2_over_r", "kvib.thm4_1.rho_positive_not_implied",
    "kvib.thm4_1.sampling_term_exponent_printed", "kvib.thm4_1.sigma2_constant_printed",
    "kvib.thm5_1.proof_average_from_above", "kvib.thm5_1.proof_pi_star_squared_printed",
    "kvib.thm5_1.proof_uncapped_minimum", "kvib.thm_d1.last_term_algebra",
    "kvib.thm_d1.pmin_branch_ignored",
]


@pytest.mark.parametrize("cid", PROOF_STEPS)
def test_violated_under_every_hypothesis(cid):
    res = load_claims()[cid].check(profile="quick")
    assert res.verdict == "violated"
    assert res.hypotheses and all(v is True for v in res.hypotheses.values()), res.hypotheses


def test_statement_hypotheses_reach_the_proof_steps():
    labels = {h.name for h in thm41.THM4_1.hypotheses_for(["last_step"])}
    assert {"A4.1", "A4.2", "A4.3", "K", "step", "tuning"} <= labels


def test_admissible_instance_meets_the_statement():
    inst = thm41.admissible_instance(L=0.5, R=3, step=1 / 12, sigma_g2=2.0, n_clients=4)
    table = thm41.THM4_1.evaluate(inst, ["rate"])
    assert all(v is True for v in table.values()), table
    with pytest.raises(ValueError, match="n_clients"):
        thm41.admissible_instance(L=1.0, R=2, step=0.01, n_clients=3)


@pytest.mark.parametrize("module, cid", [
    (gaps, "kvib.thm4_1.last_term_printed"), (gaps, "kvib.thm4_1.sigma2_constant_printed"),
    (gaps_descent, "kvib.thm4_1.bound_a_factor_six"),
    (gaps_descent, "kvib.thm4_1.eq33_no_factor_two"),
])
def test_a_step_above_the_limit_is_not_an_accusation(monkeypatch, module, cid):
    real = thm41.admissible_instance
    monkeypatch.setattr(module, "admissible_instance",
                        lambda **kw: dict(real(**kw), step=2 * kw["step"]))
    res = load_claims()[cid].check(profile="quick")
    assert res.verdict == "not-applicable" and "step" in res.reason


def test_a_budget_above_n_is_not_an_accusation(monkeypatch):
    import verify.kvib.thm5_1.proof_gaps as t51

    real = t51.Evidence
    monkeypatch.setattr(t51, "Evidence", lambda **kw: real(**dict(
        kw, instance=dict(kw["instance"], budget=np.float64(5.0)))))
    res = load_claims()["kvib.thm5_1.proof_average_from_above"].check(profile="quick")
    assert res.verdict == "not-applicable"
