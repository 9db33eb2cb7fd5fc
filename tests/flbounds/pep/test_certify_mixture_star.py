"""Mixtures (a round drawn at random, flbounds.pep.scenarios) measured with a star measure
(clients not sharing x*, quadratic class, ``star_bounds``): through ``flbounds.pep.worst_case``
with every solve forced inaccurate they get flbounds.pep.certify.certified_star's bound,
above the accurate value and within the bracket tolerance; planted bugs (multipliers scaled
by 0.9, the PSD projection skipped, the route sent to the shared-minimizer certificate) are
refused or change the outcome.

Brackets measured with every solve forced inaccurate (SAFARI, q = 0.5, 2 local steps, steps
0.2 and 0.3, N = 3, p = 0.3, 0.5, 0.7, L = 2): 1.1e-7 (mu = 1), 9.0e-8 (mu = 0)."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import engine, scenarios, sdp
from flbounds.pep.certify import bracket_tolerance, leaf_bounds
from flbounds.pep.certify_lmi import certify_lmi, solver_lmi_duals, stationary_bounds

from ._planted import spy_certified_star
from .test_certify_quadratic import BUMP, L, _solved

BUDGET = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                      + sum(g ** 2 for g in star.gradients), "heterogeneity budget",
                      bounds=lambda state: {state["x"]: 1.0},
                      star_bounds=lambda star: dict.fromkeys(star.gradients, 1.0))
LAW = Bernoulli([0.3, 0.5, 0.7])
SAFARI = pep.safari_round(0.5, 2, 0.2, 0.3, LAW)


def _setting(mu):
    return pep.Setting(3, mu, 2.0, function_class="quadratic")


@pytest.mark.parametrize("certified", [False, True])
@pytest.mark.parametrize("mu", [1.0, 0.0])
def test_a_mixture_with_a_star_measure_gets_the_star_bound(no_store, mu, certified):
    accurate = pep.worst_case(SAFARI, _setting(mu), BUDGET)
    assert accurate.status == "optimal"
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.worst_case(SAFARI, _setting(mu), BUDGET, certified=certified)
    assert bound.status.startswith("certified"), bound.status
    assert bound.worst >= accurate.worst - pep.gap_tolerance(accurate.worst)
    assert bound.worst - accurate.worst <= bracket_tolerance(bound.worst)
    assert bound.gap < 1e-6        # measured 1.1e-7 (mu = 1), 9.0e-8 (mu = 0)


def test_the_route_calls_certified_star(no_store):
    calls = spy_certified_star(no_store)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    pep.worst_case(SAFARI, _setting(1.0), BUDGET)
    assert calls == [BUDGET.label]


def test_a_mixture_star_measure_sent_to_the_shared_certificate_fails(no_store):
    """Planted: the old fallback (shared-minimizer certificate only) for a star measure: the
    gradients at x* are free leaves there, which the shared certificate cannot bound."""
    no_store.setattr(sdp, "accurate", lambda *a: False)
    no_store.setattr(engine, "_star_route", lambda setting, measure: False)
    no_store.setattr(engine, "certifiable", lambda setting, measure: True)
    with pytest.raises(ValueError, match="no point bounded|a leaf point"):
        pep.worst_case(SAFARI, _setting(1.0), BUDGET)


def test_without_star_bounds_a_mixture_derives_them(no_store):
    """``bounds`` without ``star_bounds``: the gradients' bounds derived from V
    (flbounds.pep.certify_derived), the mixture certified within its bracket."""
    from ._planted import assert_bracketed, forced

    no_star = pep.lyapunov(BUDGET.value, "budget", bounds=BUDGET.bounds)
    accurate = pep.worst_case(SAFARI, _setting(1.0), no_star)
    forced(no_store)
    assert_bracketed(pep.worst_case(SAFARI, _setting(1.0), no_star, certified=True), accurate)


def test_scaled_multipliers_on_a_mixture_prove_less_and_are_refused(no_store):
    setting = _setting(1.0)
    value = pep.worst_case(SAFARI, setting, BUDGET).worst
    problem, parts = scenarios.build_mixture(SAFARI, setting, BUDGET)
    problem.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0)
    funcs = list({id(f): f for f in parts["funcs"]}.values())
    initial = {**BUDGET.bounds(parts["start"]), **BUDGET.star_bounds(parts["star"])}
    bounds = leaf_bounds(funcs, stationary_bounds(funcs, initial), setting.L)
    real = certify_lmi(problem, *bounds)
    assert value - pep.gap_tolerance(value) <= real.upper <= value + bracket_tolerance(value)
    lam = np.array([float(c.eval_dual()) for c in problem._list_of_prepared_constraints])
    scaled = certify_lmi(problem, *bounds, 0.9 * lam,
                         [0.9 * z for z in solver_lmi_duals(problem)])
    assert scaled.dual < value - 0.05
    assert scaled.upper >= value
    assert scaled.upper - scaled.primal > bracket_tolerance(scaled.upper)


def test_a_skipped_projection_on_a_mixture_is_refused(no_store):
    """The bump (test_certify_quadratic.py) drawn in both branches of a mixture: the
    multipliers of T(G) = 0 used unprojected prove about 0 < 1/16."""
    setting = pep.Setting(1, 0.0, L, function_class="quadratic", common_minimizer=True)
    mixture = pep.Mixture("bump twice", ((0.5, BUMP, None), (0.5, BUMP, None)))
    assert pep.worst_case(mixture, setting, pep.distance()).worst == pytest.approx(
        1 / 16, abs=1e-6)
    no_store.setattr(engine, "build", lambda round_, setting, measure, law:
                     scenarios.build_mixture(mixture, setting, measure))
    problem, bounds = _solved(BUMP, setting, pep.distance(), None, equality=True,
                              monkeypatch=no_store)
    bug = certify_lmi(problem, *bounds, project=False)
    assert bug.upper < 0.01 < 1 / 16
    real = certify_lmi(problem, *bounds)
    assert real.upper >= 1 / 16
    assert real.upper - real.primal > bracket_tolerance(real.upper)
