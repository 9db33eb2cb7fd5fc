"""K-Vib's numbered results: every claim is attached to result parts, and an instance that
breaks a hypothesis predicate makes the claim not-applicable (never violated)."""

import numpy as np
import pytest

from flbounds.ledger import get
from flbounds.ledger.api.judge import judge
from flbounds.ledger.api.registry import load_all
from flbounds.ledger.api.results import load_all as load_results
from flbounds.problems import Quadratic
from flbounds.problems.generators import random_ridge, shared_hessian_quadratics


@pytest.fixture(autouse=True)
def _plugins_loaded():
    """The ledger judges against declared results: load the claim plugins that declare them."""
    load_results()


def _kvib_claims():
    return [c for c in load_all().values() if c.paper_key == "kvib"]


def test_every_claim_is_attached_to_a_part_and_has_no_labels():
    claims = _kvib_claims()
    assert len(claims) >= 96
    assert [c.id for c in claims if not c.parts] == []


def test_every_result_has_claims_or_a_reason():
    results = [r for r in load_results().values() if r.paper_key == "kvib"]
    assert len(results) >= 44
    for res in results:
        unchecked = all(p.unchecked for p in res.parts.values())
        assert res.claims() or res.not_checked or unchecked, res.id


def test_planted_break_of_example_3_2_inputs_is_not_applicable(monkeypatch):
    import paper_checks.kvib as checks

    cid = "kvib.example3_2.printed_numbers"
    assert get(cid).check(seed=0).verdict == "violated"
    monkeypatch.setattr(checks, "INSTANCE", dict(checks.INSTANCE, budget=3))
    row = get(cid).check(seed=0)
    assert row.verdict == "not-applicable" and "inputs" in row.reason


def test_lemma_2_1_comparison_needs_the_rsp_constant():
    parts = ("kvib.lemma2_1:isp_le_rsp",)
    inside = dict(p=np.full(3, 2 / 3), budget=2.0)
    outside = dict(p=np.array([0.2, 0.9, 0.9]), budget=2.0)
    assert judge(parts, inside, {}).failed == ()
    failed = judge(parts, outside, {}).failed
    assert len(failed) == 1 and failed[0].startswith("rsp_constant")


def test_theorem_4_1_step_condition_and_assumption_4_3():
    rng = np.random.default_rng(0)
    shared = shared_hessian_quadratics(rng, 4, 3, mu=0.1, L=1.0, heterogeneity=0.5)
    lam = np.full(4, 0.25)
    g = shared.client_gradients(np.zeros((4, 3)))
    sigma_g2 = float(lam @ np.sum((g - lam @ g) ** 2, axis=1))
    inst = dict(problem=shared, L=shared.L, lam=lam, sigma_g2=sigma_g2, sigma_l2=0.0,
                local_noise=0.0, R=2, eta_g=1.0, step=1 / (16 * shared.L), budget=2.0,
                n_clients=4)
    assert judge(("kvib.thm4_1:descent",), inst, {}).failed == ()
    too_big = dict(inst, step=1.01 / (16 * shared.L))
    assert [f.split(":")[0] for f in judge(("kvib.thm4_1:descent",), too_big, {}).failed] \
        == ["step"]
    ridge = random_ridge(rng, 4, 10, 3, lam=1.0, heterogeneity=3.0)
    assert [f.split(":")[0] for f in judge(("kvib.thm4_1:descent",), dict(inst, problem=ridge,
                                                                          L=ridge.L,
                                                                          step=1 / (16 * ridge.L)),
                                           {}).failed] == ["A4.3"]


def test_violated_needs_every_hypothesis_evaluated():
    """A Lemma B.6 instance without its problem cannot accuse the paper."""
    n = 3
    problem = Quadratic(np.tile(np.eye(1), (n, 1, 1)), np.array([[1.0], [0.0], [0.0]]))
    inst = dict(lam=np.full(n, 1 / n), L=1.0, sigma_g2=1.0, sigma_l2=0.0, local_noise=0.0,
                R=5, step=1 / 40)
    verdict = judge(("kvib.lemma_b6:per_client",), inst, {})
    assert verdict.failed == () and verdict.unevaluated
    full = judge(("kvib.lemma_b6:per_client",), dict(inst, problem=problem), {})
    assert full.failed == () and full.unevaluated == ()


def test_attack_surfaces_reject_points_outside_the_result_hypotheses():
    """The App. C.1 surface has no validator: a point with a client capped at p = 1 is
    rejected by the claim's own 'uncapped' predicate."""
    from flbounds.falsify import get_surface

    surface = get_surface("kvib.appC1.uncapped_bounds")
    assert surface.validator is None and surface.instance is not None
    check = surface.effective_validator()
    inside = dict(a=np.r_[1.0, 1.5, 2.0, np.ones(5)], n=3, k_frac=0.5)
    outside = dict(a=np.r_[1.0, 1.0, 100.0, np.ones(5)], n=3, k_frac=0.5)
    assert check(**inside) is True
    assert "uncapped" in check(**outside)
