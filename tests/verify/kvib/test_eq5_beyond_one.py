"""Eq. (5) beyond p_i = 1: holds on instances with some K a_i/sum a > 1, and a planted error
(the ISP optimum doubled, or eq. (5) replaced by a rival point) makes it fail."""

import numpy as np

import verify.kvib.lemma2_2 as sec3
from flbounds.ledger import get


def _run():
    """The claim's verdict through its cells (chunks of instances), combined. 100 instances:
    fewer (40) leave no rival within 10% of eq. (5)'s value on the cells' draws, so the
    planted 10% below would go unseen."""
    return get("kvib.eq5.beyond_one").check(seed=0, n_instances=100, n_rivals=20).verdict


def test_holds_and_fails_on_planted_errors(monkeypatch):
    assert _run() == "holds"
    real = sec3.optimal_isp_objective
    monkeypatch.setattr(sec3, "optimal_isp_objective", lambda a, k: 3 * real(a, k))
    assert _run() == "violated"
    monkeypatch.setattr(sec3, "optimal_isp_objective", real)
    real_bound = sec3.rsp_bound
    monkeypatch.setattr(sec3, "rsp_bound",   # the eq. (5) point scored 10% worse
                        lambda p, a: real_bound(p, a) * (1.1 if np.allclose(
                            p, p.sum() * a / a.sum()) else 1.0))
    assert _run() == "violated"
