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


def test_rival_bounds_are_the_one_row_values():
    """The rivals' RSP sides, computed as one array, are rsp_bound's numbers bit for bit."""
    rng = np.random.default_rng(3)
    for n in (2, 7, 60):
        a = rng.lognormal(0.0, 1.5, n)
        rows = rng.uniform(1, 4) * rng.dirichlet(np.ones(n), size=50)
        assert np.array_equal(sec3._rsp_bounds(rows, a),
                              [sec3.rsp_bound(r, a) for r in rows])
