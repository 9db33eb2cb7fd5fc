"""FedALS's numbered results: every claim attached to a part, hypotheses evaluated by the
ledger (a broken hypothesis makes a claim not-applicable), no hand-written labels left."""

import numpy as np
import pytest

from flbounds.ledger import get, load_all
from flbounds.ledger.api.results import load_all as load_results
from flbounds.theory.data_models import RidgeModel
from verify.fedals.remark4_2 import REMARK42
from verify.fedals.thm4_1 import THM41

RESULTS = [r for r in load_results().values() if r.paper_key == "fedals"]


def fedals_claims():
    return [c for c in load_all().values() if c.paper_key == "fedals"]


def failed(result, part, instance):
    """Labels of ``result``'s hypotheses of ``part`` that are false on ``instance``."""
    return [label for label, ok in result.evaluate(instance, [part]).items() if ok is False]


def test_every_claim_is_attached_to_a_part_and_carries_no_labels():
    claims = fedals_claims()
    assert len(claims) == 50
    results = {r.id: r for r in RESULTS}
    for c in claims:
        assert c.parts, c.id
        for q in c.parts:
            rid, pid = q.split(":", 1)
            assert pid in results[rid].parts, q


def test_every_listed_result_is_checked_or_says_why():
    checked = {q.split(":", 1)[0] for c in fedals_claims() for q in c.parts}
    for r in RESULTS:
        assert r.id in checked or r.not_checked, r.id


def test_a_violated_claim_outside_its_hypothesis_is_not_applicable():
    """Algorithm 1's printed schedule at a non-integer alpha: its branch then fires (the claim
    counts differ from R/alpha either way), but alpha in N is Sec. 5's hypothesis."""
    claim = get("fedals.alg1.printed_averages_body")
    inside = claim.check(n_rounds=40)
    assert inside.verdict == "violated"
    outside = claim.check(n_rounds=40, alphas=[1, 5, 2.5])
    assert outside.verdict == "not-applicable"
    assert "alpha" in outside.reason


def test_merged_duplicates_needs_case_one_weights():
    """Lemma C.1 as Remark 4.2 uses it: weights that are not a distribution break Case I."""
    row = get("fedals.lemmaC1.merged_duplicates").check(weights=[0.1, 0.2, 0.3, 0.5])
    assert row.verdict == "not-applicable"
    assert "case_I" in row.reason


def test_iid_reading_is_judged_on_the_model():
    """The 'sole iid term' part needs identical clients: a heterogeneous ridge model fails."""
    w = np.full(3, 1 / 3)
    iid = RidgeModel(np.ones((3, 2)), 1.0, 0.5)
    noniid = RidgeModel(np.arange(6.0).reshape(3, 2), 1.0, 0.5)
    assert failed(THM41, "iid_sole_term", dict(model=iid, w=w, local="erm")) == []
    labels = failed(THM41, "iid_sole_term", dict(model=noniid, w=w, local="erm"))
    assert [label.split(":")[0] for label in labels] == ["iid"]
    # OLS (lam = 0, Gaussian covariates) is neither strongly convex nor smooth
    ols = RidgeModel(np.ones((3, 2)), 1.0, 0.0, covariates="gaussian")
    labels = failed(THM41, "bound", dict(model=ols, w=w, local="erm"))
    assert [label.split(":")[0] for label in labels] == ["convex"]


@pytest.mark.parametrize("case, n_participants, ok", [("II", 2, True), ("II", 5, False),
                                                      ("I", 2, False)])
def test_case_two_hypothesis(case, n_participants, ok):
    instance = dict(case=case, n_clients=4, n_participants=n_participants,
                    w=np.full(4, 0.25), model=RidgeModel(np.ones((4, 2)), 1.0, 0.1),
                    local="erm")
    assert (failed(REMARK42, "case2", instance) == []) is ok
