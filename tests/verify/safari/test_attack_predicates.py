"""SAFARI's Theorem 4/5 attacks reject points by the results' own predicates (instance=), the
q-condition in the proof's linear form (parts bound_linear) included; a point outside it is
rejected naming the predicate, and the attacked claims rest on the same predicate."""

import numpy as np
import pytest

from flbounds.falsify.surfaces import get_surface
from flbounds.ledger.api.plugins import load_claims

SURFACES = ("safari.thm4.homogeneous_bound", "safari.thm5.anisotropic_homogeneous_bound")


@pytest.mark.parametrize("cid", SURFACES)
def test_surfaces_judge_points_by_the_results_predicates(cid):
    surface = get_surface(cid)
    assert surface.instance is not None and surface.validator is None
    valid = surface.effective_validator()
    for point in surface.fixed_instances():
        assert valid(**point) is True


def test_thm4_point_with_heterogeneity_fails_q_linear(monkeypatch):
    import verify.safari.thm4.attacks as attacks

    surface = get_surface("safari.thm4.homogeneous_bound")
    real = attacks.optimisation_instance
    monkeypatch.setattr(attacks, "optimisation_instance",
                        lambda prob, **kw: real(prob, **dict(kw, sigma_G2=1e6)))
    verdict = surface.effective_validator()(**surface.fixed_instances()[0])
    assert isinstance(verdict, str) and "q_linear" in verdict


def test_thm5_round_below_the_worst_case_fails_q_linear(monkeypatch):
    import verify.safari.thm5.attacks as attacks

    surface = get_surface("safari.thm5.anisotropic_homogeneous_bound")
    real = attacks.optimisation_instance
    point = dict(surface.fixed_instances()[0], q=0.99)
    assert surface.effective_validator()(**point) is True  # the worst round still meets it
    monkeypatch.setattr(attacks, "optimisation_instance",
                        lambda prob, **kw: real(prob, **dict(kw, G4=np.zeros(1))))
    verdict = surface.effective_validator()(**point)  # a round no identical clients have
    assert isinstance(verdict, str) and "q_linear" in verdict


def test_homogeneous_claims_rest_on_the_linear_reading():
    for cid in SURFACES:
        claim = load_claims()[cid]
        assert claim.parts == (f"{cid.split('.')[0]}.{cid.split('.')[1]}:bound_linear",)
        assert not claim.outside
