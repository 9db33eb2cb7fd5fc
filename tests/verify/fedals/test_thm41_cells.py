"""Thm 4.1's logistic claim as cells: every (K, zeta) cell keeps its own pools (rebuilt from
the cell's seed in the combine step), and the claim still fails on a planted bug."""

from flbounds.ledger import get
from verify.fedals.thm4_1 import logistic as claims


def test_logistic_cells_rebuild_the_pools_they_ran_on():
    res = get("fedals.thm41.logistic_bound").check(seed=0)
    assert res.verdict == "holds", res.reason
    assert len(res.details["cells"]) == 4
    assert all(res.hypotheses.values())


def test_logistic_bound_fails_when_the_bound_is_planted_too_small(monkeypatch):
    real = claims.summarize_bound

    def shrunk(*args, **kwargs):
        s = real(*args, **kwargs)
        return s._replace(bound=s.bound / 50)

    monkeypatch.setattr(claims, "summarize_bound", shrunk)
    assert get("fedals.thm41.logistic_bound").check(seed=0).verdict == "violated"
