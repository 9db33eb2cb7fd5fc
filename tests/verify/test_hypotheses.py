"""Hypotheses are predicates of results, evaluated by the ledger on every claim's instance.

Every claim is attached to a part of a declared result; no claim carries hand-written
hypothesis labels; an accusation (``violated``) rests on an instance where every hypothesis of
the parts it checks is evaluated and true (the ledger refuses it otherwise:
``flbounds.ledger.api.results.verdict_under``, tested in tests/flbounds/ledger/test_results.py).
"""

import pytest

import flbounds.ledger as ledger
from flbounds.ledger import get, select


def test_every_claim_is_attached_to_a_part_of_a_declared_result():
    assert [c.id for c in select() if not c.parts] == []


def test_no_hand_written_hypothesis_labels_remain():
    assert not any(hasattr(c, "hypotheses") for c in select())
    assert not hasattr(ledger, "declare_hypotheses")
    assert "hypotheses" not in ledger.Evidence.__dataclass_fields__


ACCUSATIONS = ["focus.thm6.printed_bound", "focus.thm1b.proof_step_113",
               "focus.lemma4.rare_participation", "kvib.lemma5_1.printed_z",
               "safari.thm4.proof_eta_s_power", "subtrunc.sec3c.unionfl_greedy_guarantee",
               "fedals.remark42.case1_bound_printed"]


@pytest.mark.parametrize("cid", ACCUSATIONS)
def test_an_accusation_rests_on_hypotheses_evaluated_true(cid):
    row = get(cid).check(seed=0)
    assert row.verdict == "violated"
    assert row.hypotheses and all(v is True for v in row.hypotheses.values()), row.hypotheses
