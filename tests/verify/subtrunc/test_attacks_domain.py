"""The attack surfaces over Theorem 1's and Propositions 1, 2 and 4's hypothesis domains: exact
ratios that agree with the claims' simulators, points outside the hypotheses rejected by the
results' own predicates, and a planted defect in a bound found by the ratio."""

import numpy as np
import pytest

import verify.subtrunc.thm1.attacks as thm1_attacks
from flbounds.falsify.surfaces import get_surface
from verify.subtrunc.thm1.attacks import _problem, exact_weighted_gradient
from verify.subtrunc.thm1.end_to_end import run_biased_fedavg, theorem1_weights

POINT = dict(centers=np.array([[0.5, -1.0], [1.0, 2.0], [-0.3, 0.2]] + [[0.0, 0.0]] * 13),
             n=3, w0=np.array([2.0, 1.0]), L=1.5, K=16, E=3, sigma2=0.7, gamma=0.3)


@pytest.mark.parametrize("mode", [0, 1])
def test_exact_recursion_matches_the_claims_simulator(mode):
    point = dict(POINT, mode=mode)
    prob = _problem(point["centers"][:3], point["L"])
    sigma2, gamma = (0.0, point["gamma"]) if mode == 0 else (point["sigma2"], 0.0)
    noise = np.random.default_rng(0).normal(size=(4000, 16, 3, 3, 2))
    per_seed = run_biased_fedavg(prob, point["w0"], K=16, E=3, sigma2=sigma2, gamma=gamma,
                                 noise=noise) @ theorem1_weights(16)
    exact, _ = exact_weighted_gradient(**point)
    assert abs(per_seed.mean() - exact) <= 4 * per_seed.std(ddof=1) / np.sqrt(4000) + 1e-12


def test_points_outside_theorem1_are_rejected_by_its_predicates():
    validate = get_surface("subtrunc.thm1.end_to_end").effective_validator()
    assert validate(**dict(POINT, mode=0)) is True
    rejected = validate(**dict(POINT, mode=0, K=8))
    assert isinstance(rejected, str) and "K" in rejected


def test_a_planted_gamma_coefficient_is_found():
    """(19) with 0.2 gamma for its (4 + 4/sqrt K) gamma term: the noise-free biased instance
    breaks it (the exact stationary term is ~gamma)."""
    surface = get_surface("subtrunc.thm1.end_to_end")
    point = dict(POINT, centers=np.zeros((16, 2)), n=1, K=400, E=1, mode=0, gamma=1.0)
    assert surface.ratio(**point) < 1
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(thm1_attacks, "printed_terms",
                   lambda **kw: (0.0, 0.0, 0.2 * kw["gamma"]))
        assert surface.ratio(**point) > 1


@pytest.mark.parametrize("claim_id", ["subtrunc.prop1.truncation",
                                      "subtrunc.prop2.linear_combination",
                                      "subtrunc.prop4.statement"])
def test_proposition_surfaces_hold_at_their_fixed_points(claim_id):
    surface = get_surface(claim_id)
    for point in surface.fixed_instances():
        assert surface.effective_validator()(**point) is True
        assert surface.ratio(**point) <= surface.threshold


def test_prop2_surface_finds_a_negative_weight():
    """A planted negative alpha on the facility-location term breaks submodularity."""
    surface = get_surface("subtrunc.prop2.linear_combination")
    point = dict(surface.fixed_instances()[0], alphas=np.array([-2.0, 0.0, 0.0]))
    assert surface.ratio(**point) > surface.threshold
    assert isinstance(surface.effective_validator()(**point), str)
