"""SAFARI's numbered results: every claim attached to a part, every result's parts checked or
explained, and the hypothesis predicates deciding applicability (a planted break of a
hypothesis turns an accusation into not-applicable)."""

import numpy as np
import pytest

from flbounds.falsify.surfaces import get_surface
from flbounds.ledger import get, select
from flbounds.ledger.api.judge import judge
from flbounds.ledger.api.results import load_all as load_results
from verify.safari.instances import two_group_problem
from verify.safari.remark6 import REMARK6
from verify.safari.thm2 import THM2
from verify.safari.thm4 import THM4, step_limit
from verify.safari.thm4.printed import reference_instance


def _safari_claims():
    return [c for c in select() if c.paper_key == "safari"]


def test_every_claim_is_attached_to_a_part():
    claims = _safari_claims()
    assert len(claims) == 58 + 23 + 2
    assert [c.id for c in claims if not c.parts] == []


def test_every_part_is_checked_or_says_why_not():
    results = {k: r for k, r in load_results().items() if k.startswith("safari.")}
    attached = {q for c in _safari_claims() for q in c.parts}
    bare = [f"{rid}:{pid}" for rid, r in results.items() if not r.not_checked
            for pid, part in r.parts.items()
            if f"{rid}:{pid}" not in attached and not part.unchecked]
    assert bare == []
    assert {"safari.thm1", "safari.thm4", "safari.thm5", "safari.cor1", "safari.remark6",
            "safari.table11"} <= set(results)


def test_thm4_step_condition_is_a_predicate():
    """eta_s = 0.04 gives eta_c = 0.016 > 1/(4 sqrt(30) L K) = 0.00913 (the Remark 6 claim's
    design); eta_s = 0.01 meets it."""
    prob = two_group_problem()
    assert step_limit(L=1.0, local_steps=5) == pytest.approx(0.00913, abs=1e-5)
    bad = judge([THM4.part("proof_55")], reference_instance(prob, 0.04, q=0.8, G1=1.0,
                                                              G2=1.0), {})
    assert any(label.startswith("step:") for label in bad.failed)
    good = judge([THM4.part("q_condition")],
                 reference_instance(prob, 0.01, q=0.8, G1=4.0, G2=123.0), {})
    assert good.failed == () and good.unevaluated == ()


def test_a_planted_step_break_makes_an_accusation_not_applicable():
    """safari.thm4.proof_eta_s_power is violated at the printed step; run at eta_s = 0.04
    (outside Theorem 4's step condition) the same numbers are not-applicable."""
    claim = get("safari.thm4.proof_eta_s_power")
    assert claim.check(seed=0).verdict == "violated"
    moved = claim.check(seed=0, step_server=0.04)
    assert moved.verdict == "not-applicable"
    assert "step" in moved.reason and moved.hypotheses[next(
        k for k in moved.hypotheses if k.startswith("step:"))] is False


def test_remark6_needs_theorem4s_hypotheses():
    """The SAFARI part of Remark 6 carries Theorem 4's hypotheses; a seed whose q-condition
    fails (G_1 small at the biased point, G_2 large) is outside them."""
    inst = reference_instance(two_group_problem(), 0.01, q=0.8, G1=0.8, G2=1.0)
    verdict = judge([REMARK6.part("safari_rates")], inst, {})
    assert [label.split(":")[0] for label in verdict.failed] == ["q"]
    assert judge([REMARK6.part("fedavg_ball")], inst, {}).failed == ()


def test_theorem2_alpha_constant_premise():
    part = [THM2.part("matches_centralized")]
    growing = dict(flip=0.0, alpha=1.0, alphas=np.array([0.1, 1.0, 10.0]))
    constant = dict(flip=0.0, alpha=10.0, alphas=np.full(3, 10.0))
    assert [lab.split(":")[0] for lab in judge(part, growing, {}).failed] == ["alpha_constant"]
    assert judge(part, constant, {}).failed == ()
    assert judge(part, dict(constant, alpha=np.inf), {}).failed[0].startswith("A2")


def test_attack_points_are_rejected_by_the_claims_predicates():
    validate = get_surface("safari.thm1.chernoff_step").effective_validator()
    assert validate(M=10, m=5, n=1) is True
    assert "partial" in validate(M=5, m=5, n=1)
