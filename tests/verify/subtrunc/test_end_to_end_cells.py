"""Theorem 1 end to end as cells (two random-w0 families and the stress family): the
combined row keeps every family's rows and instances, and a bound planted 100x too small
is violated."""

from flbounds.ledger import get
from verify.subtrunc.thm1 import end_to_end

SMALL = dict(n_seeds=8, n_clients=4, dim=3, Ks=(9, 16), Es=(1, 2), gammas=(0.0, 1.0),
             sigma2=1.0, stress=dict(n_seeds=20, dim=2, Ks=(9,), Es=(1, 2), sigma2s=(1.0,),
                                     gammas=(0.0, 1.0)))


def test_families_combined_and_a_planted_small_bound_fails(monkeypatch):
    claim = get("subtrunc.thm1.end_to_end")
    res = claim.check(seed=0, **SMALL)
    assert res.verdict == "holds", res.reason
    assert len(res.details["rows_random_w0"]) == 2 * 8 and len(res.details["rows_stress"]) == 8
    assert all(res.hypotheses.values())
    real = end_to_end.printed_terms
    monkeypatch.setattr(end_to_end, "printed_terms",
                        lambda **kw: [t / 100 for t in real(**kw)])
    assert claim.check(seed=0, **SMALL).verdict == "violated"
