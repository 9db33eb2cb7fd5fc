"""FedALS' violated proof steps of Remark 4.2 ((70) and Lemma C.1 as (72) uses it) rest on
instances meeting Remark 4.2's hypotheses (strongly convex smooth loss, local ERMs, the
participation scheme); a planted non-ERM local model turns them not-applicable."""

import pytest

from flbounds.ledger.api.plugins import load_claims


@pytest.mark.parametrize("cid", ["fedals.lemmaC1.merged_duplicates"])
def test_violated_under_every_hypothesis(cid):
    res = load_claims()[cid].check(profile="quick")
    assert res.verdict == "violated"
    assert res.hypotheses and all(v is True for v in res.hypotheses.values())


def test_merged_duplicates_smallest_instance():
    claim = load_claims()["fedals.lemmaC1.merged_duplicates"]
    assert claim.check(n_clients=2, n_participants=2, weights=[0.5, 0.5]).verdict == "violated"
    # one draw has no duplicates: the identities hold, so the claim can come out holds
    assert claim.check(n_clients=2, n_participants=1, weights=[0.5, 0.5]).verdict == "holds"


def test_a_non_erm_local_model_is_not_an_accusation(monkeypatch):
    import verify.fedals.remark4_2.case1 as case1

    real = case1._instance
    monkeypatch.setattr(case1, "_instance", lambda *a: dict(real(*a), local="sgd"))
    res = load_claims()["fedals.lemmaC1.merged_duplicates"].check(profile="quick")
    assert res.verdict == "not-applicable" and "erm" in res.reason
