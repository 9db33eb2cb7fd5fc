"""Hypotheses: every claim that asserts a violation declares the hypotheses of what it
targets, all met (a counterexample outside a result's hypotheses is not a violation)."""

import pytest

from flbounds.ledger import declare_hypotheses, get, select
from flbounds.ledger.registry import undeclared_hypotheses


def _violations():
    """Claims with hand-written labels (those attached to result parts are judged by their
    results' predicates on the instance instead: tests/verify/<paper>/)."""
    return [c for c in select() if "violated" in (c.expected, c.expected_for("full"))
            and not c.parts]


def test_every_expected_violation_declares_hypotheses_all_met():
    empty = [c.id for c in _violations() if not c.hypotheses]
    unmet = {c.id: c.hypotheses for c in _violations()
             if not all(v is True for v in c.hypotheses.values())}
    assert empty == [] and unmet == {}


def test_hypotheses_tables_name_registered_claims():
    assert undeclared_hypotheses() == []


@pytest.mark.parametrize("cid", ["focus.thm6.printed_bound", "focus.thm1b.proof_step_113",
                                 "kvib.lemma5_1.printed_z"])
def test_a_violated_result_carries_its_hypotheses_all_met(cid):
    """Run-time entries (``Evidence.hypotheses``) merge with the declared ones."""
    res = get(cid).check(seed=0)
    assert res.verdict == "violated"
    assert res.hypotheses and all(v is True for v in res.hypotheses.values())


@pytest.mark.parametrize("table", [["focus.thm1b.proof_step_113"],
                                   {"focus.thm1b.proof_step_113": {"x": 1.5}},
                                   {"focus.thm1b.proof_step_113": "eta small"}])
def test_bad_tables_are_refused(table):
    with pytest.raises(ValueError, match="hypotheses|table"):
        declare_hypotheses(table)


def test_every_theorem_level_claim_declares_hypotheses():
    bare = [c.id for c in select() if c.kind in ("statement", "tightness") and not c.hypotheses
            and not c.parts]
    assert bare == []
