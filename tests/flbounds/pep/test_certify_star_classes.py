"""The star certificate (flbounds.pep.certify.certified_star) outside the quadratic class:
through ``flbounds.pep.worst_case`` with every solve forced inaccurate, a measure with
``star_bounds`` and clients not sharing x* gets a certified bound over the smooth strongly
convex and the smooth (nonconvex) classes, direct and as a SAFARI mixture, above the accurate
value and within the bracket tolerance; planted bugs (multipliers scaled by 0.9, the route
restricted to the quadratic class again) are refused or change the outcome.

Brackets measured forced inaccurate (FedAvg, tau = 3, step 0.2, N = 3, p = 0.3, 0.5, 0.7,
L = 2): 1.1e-7 (smooth strongly convex, mu = 1), 9.6e-6 (smooth); SAFARI (q = 0.5, 2 local
steps, steps 0.2 and 0.3): 1.9e-8 and 1.2e-6."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import engine, sdp
from flbounds.pep.certify import bracket_tolerance, certify, leaf_bounds

from ._planted import assert_bracketed, spy_certified_star

BUDGET = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                      + sum(g ** 2 for g in star.gradients), "heterogeneity budget",
                      bounds=lambda state: {state["x"]: 1.0},
                      star_bounds=lambda star: dict.fromkeys(star.gradients, 1.0))
LAW = Bernoulli([0.3, 0.5, 0.7])
SETTINGS = {"smooth-strongly-convex": pep.Setting(3, 1.0, 2.0),
            "smooth": pep.Setting(3, 0.0, 2.0, function_class="smooth")}
ROUNDS = {"fedavg": (pep.fedavg_round(3, 0.2), LAW),
          "safari": (pep.safari_round(0.5, 2, 0.2, 0.3, LAW), None)}


@pytest.mark.parametrize("cls", sorted(SETTINGS))
def test_every_class_is_certifiable_with_star_bounds(cls):
    assert engine.certifiable(SETTINGS[cls], BUDGET)
    assert not engine.certifiable_shared(SETTINGS[cls], BUDGET)


@pytest.mark.parametrize("certified", [False, True])
@pytest.mark.parametrize("which", sorted(ROUNDS))
@pytest.mark.parametrize("cls", sorted(SETTINGS))
def test_a_star_measure_is_certified_in_every_class(no_store, cls, which, certified):
    round_, law = ROUNDS[which]
    accurate = pep.worst_case(round_, SETTINGS[cls], BUDGET, law)
    calls = spy_certified_star(no_store)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.worst_case(round_, SETTINGS[cls], BUDGET, law, certified=certified)
    assert_bracketed(bound, accurate)
    assert bound.gap <= bracket_tolerance(bound.worst)
    assert bound.gap < 2e-5          # measured at most 9.6e-6 (module docstring)
    assert calls == [BUDGET.label]


@pytest.mark.parametrize("cls", sorted(SETTINGS))
def test_scaled_multipliers_prove_less_and_are_refused(no_store, cls):
    """Planted: the solver's multipliers scaled by 0.9."""
    setting = SETTINGS[cls]
    round_ = pep.fedavg_round(3, 0.2)
    value = pep.worst_case(round_, setting, BUDGET, LAW).worst
    problem, parts = engine.build(round_, setting, BUDGET, LAW)
    problem.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0)
    funcs = list({id(f): f for f in parts["funcs"]}.values())
    bounds = leaf_bounds(funcs, {**BUDGET.bounds(parts["start"]),
                                 **BUDGET.star_bounds(parts["star"])}, setting.L)
    real = certify(problem, *bounds)
    assert value - pep.gap_tolerance(value) <= real.upper <= value + bracket_tolerance(value)
    lam = np.array([float(c.eval_dual()) for c in problem._list_of_prepared_constraints])
    scaled = certify(problem, *bounds, 0.9 * lam)
    assert scaled.upper >= value - pep.gap_tolerance(value)
    assert scaled.upper - scaled.primal > bracket_tolerance(scaled.upper)


def test_the_route_restricted_to_quadratics_again_changes_the_outcome(no_store):
    """Planted: the former route (quadratic class only): forced inaccurate, no certificate
    applies and the solve error stands; asked for, the certificate is refused."""
    no_store.setattr(sdp, "accurate", lambda *a: False)
    no_store.setattr(engine, "_star_route", lambda setting, measure:
                     setting.function_class == "quadratic")
    setting = SETTINGS["smooth-strongly-convex"]
    with pytest.raises(sdp.PEPSolveError):
        pep.worst_case(pep.fedavg_round(3, 0.2), setting, BUDGET, LAW)
    with pytest.raises(ValueError, match="setting"):
        pep.worst_case(pep.fedavg_round(3, 0.2), setting, BUDGET, LAW, certified=True)


@pytest.mark.parametrize("bad", ["yes", 1, None, np.array([True])])
def test_certified_must_be_a_bool_before_any_work(no_store, bad):
    built = []
    no_store.setattr(engine, "build", lambda *a, **k: built.append(1))
    round_, setting = pep.fedavg_round(1, 0.2), SETTINGS["smooth-strongly-convex"]
    with pytest.raises(ValueError, match="certified"):
        pep.worst_case(round_, setting, BUDGET, LAW, certified=bad)
    with pytest.raises(ValueError, match="certified"):
        pep.worst_case(round_, setting, BUDGET, LAW, certified=bad, classes=[[0], [1, 2]])
    with pytest.raises(ValueError, match="certified"):
        pep.worst_case(ROUNDS["safari"][0], setting, BUDGET, certified=bad)
    assert built == []
