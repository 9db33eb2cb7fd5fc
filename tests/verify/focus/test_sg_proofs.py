"""Theorems 4-5 of FOCUS: the proof-step claims and the corrected statements change verdict
under a planted defect."""

from flbounds.ledger import load_all
from verify.focus import sg_proofs

CLAIMS = load_all()


def _verdict(claim_id):
    return CLAIMS[claim_id].check(seed=0, profile="quick").verdict


def test_thm4_floor_step_holds_with_the_corrected_floor(monkeypatch):
    monkeypatch.setattr(sg_proofs, "thm4_floor", sg_proofs.thm4_corrected_floor)
    assert _verdict("focus.thm4.proof_step_floor") == "holds"


def test_thm4_corrected_floor_fails_without_its_floor(monkeypatch):
    monkeypatch.setattr(sg_proofs, "thm4_corrected_floor", lambda **_: 0.0)
    assert _verdict("focus.thm4.corrected_floor_bound") == "violated"


def test_corrected_floor_is_the_geometric_sum():
    kw = dict(mu=0.7, n=5, q_min=0.03, step=1e-3, sigma=0.2)
    assert abs(sg_proofs.thm4_sum_floor(**kw) / sg_proofs.thm4_corrected_floor(**kw) - 1) < 1e-14


def test_thm5_step_holds_with_a_planted_coefficient(monkeypatch):
    monkeypatch.setattr(sg_proofs, "available_coefficient", lambda step, n, L: step * n)
    assert _verdict("focus.thm5.proof_step_143") == "holds"


def test_thm5_corrected_step_fails_on_a_smaller_coefficient(monkeypatch):
    real = sg_proofs.available_coefficient
    monkeypatch.setattr(sg_proofs, "available_coefficient",
                        lambda step, n, L: 0.4 * real(step, n, L))
    assert _verdict("focus.thm5.proof_step_143_corrected") == "violated"


def test_thm5_repaired_bound_fails_without_its_floor(monkeypatch):
    monkeypatch.setattr(sg_proofs, "thm5_floor", lambda **_: 0.0)
    assert _verdict("focus.thm5.repaired_bound") == "violated"
