"""A proximal step (``local_prox``) in the direct form, with a shared minimizer or under a
heterogeneity budget with ``star_bounds`` (x* not shared): its gradient leaf enters its own
point, and flbounds.pep.certify_prox bounds it (monotonicity for convex
classes, gamma * L < 1 for the smooth class). Through ``flbounds.pep.worst_case`` with every
solve forced inaccurate the certified bound is above the accurate value and within the
bracket tolerance; the a-priori bounds hold at the solver's Gram matrix; planted bugs
(multipliers scaled by 0.9, the implicit leaf sent to the explicit bound, the proximal leaf
bounded without its constant) are refused or caught.

Measured forced inaccurate (one proximal step, gamma = 0.5, mean over S, N = 3, p = 0.3, 0.5,
0.7, L = 2, V = ||x - x*||^2): 0.50277778 with brackets 5.1e-9 (smooth strongly convex, mu =
1) and 9.0e-9 (quadratic); the smooth class at gamma = 0.25: 3.685 (bracket 2.5e-9); at gamma
* L = 1 its worst case is unbounded and said so."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import certify_prox, engine, sdp
from flbounds.pep.certify import bracket_tolerance, certify, leaf_bounds
from flbounds.pep.certify_lmi import stationary_bounds

from ._planted import assert_bracketed

LAW = Bernoulli([0.3, 0.5, 0.7])


def _prox(gamma):
    return pep.Round("exact prox", pep.local_prox(gamma), {"delta": "uniform"},
                     pep.server_model_step())


CASES = {"smooth-strongly-convex": (pep.Setting(3, 1.0, 2.0, common_minimizer=True), 0.5),
         "quadratic": (pep.Setting(3, 1.0, 2.0, function_class="quadratic",
                                   common_minimizer=True), 0.5),
         "smooth": (pep.Setting(3, 0.0, 2.0, function_class="smooth",
                                common_minimizer=True), 0.25)}


@pytest.mark.parametrize("certified", [False, True])
@pytest.mark.parametrize("cls", sorted(CASES))
def test_a_proximal_step_is_certified(no_store, cls, certified):
    setting, gamma = CASES[cls]
    accurate = pep.worst_case(_prox(gamma), setting, pep.distance(), LAW)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.worst_case(_prox(gamma), setting, pep.distance(), LAW, certified=certified)
    assert_bracketed(bound, accurate)
    assert bound.gap <= bracket_tolerance(bound.worst)
    assert bound.gap < 1e-7          # measured at most 9.0e-9


def _solved(cls):
    setting, gamma = CASES[cls]
    problem, parts = engine.build(_prox(gamma), setting, pep.distance(), LAW)
    problem.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0)
    funcs = list({id(f): f for f in parts["funcs"]}.values())
    initial = stationary_bounds(funcs, pep.distance().bounds(parts["start"]))
    return problem, funcs, initial, setting


@pytest.mark.parametrize("cls", sorted(CASES))
def test_the_a_priori_bounds_hold_at_the_solution(no_store, cls):
    from PEPit import Point

    problem, funcs, initial, setting = _solved(cls)
    points, _ = leaf_bounds(funcs, initial, setting.L)
    for p in Point.list_of_leaf_points:
        assert float((p ** 2).eval()) <= points[id(p)] ** 2 + 1e-8


@pytest.mark.parametrize("cls", sorted(CASES))
def test_scaled_multipliers_are_refused(no_store, cls):
    problem, funcs, initial, setting = _solved(cls)
    bounds = leaf_bounds(funcs, initial, setting.L)
    value = float(problem.wrapper.objective.value)
    lam = np.array([float(c.eval_dual()) for c in problem._list_of_prepared_constraints])
    if problem._list_of_prepared_psd:
        from flbounds.pep.certify_lmi import certify_lmi, solver_lmi_duals

        scaled = certify_lmi(problem, *bounds, 0.9 * lam,
                             [0.9 * z for z in solver_lmi_duals(problem)])
    else:
        scaled = certify(problem, *bounds, 0.9 * lam)
    assert scaled.upper >= value - pep.gap_tolerance(value)
    assert scaled.upper - scaled.primal > bracket_tolerance(scaled.upper)


def test_the_implicit_leaf_sent_to_the_explicit_bound_fails(no_store):
    """Planted: the former bound (the gradient's own point read as made of earlier leaves)."""
    from flbounds.pep.certify_terms import _norm_bound

    def explicit(g, u, a, g_a, L, convex, points):
        d = _norm_bound(u - a, points)
        return _norm_bound(g_a, points) + L * d, d

    no_store.setattr(certify_prox, "gradient_bound", explicit)
    no_store.setattr("flbounds.pep.certify.gradient_bound", explicit)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    setting, gamma = CASES["smooth-strongly-convex"]
    with pytest.raises(ValueError, match="no bound yet"):
        pep.worst_case(_prox(gamma), setting, pep.distance(), LAW)


def test_a_proximal_leaf_bounded_without_its_constant_is_caught(no_store):
    """Planted: the proximal leaf's bound without its min(L, 1/gamma) D term (as if the
    proximal gradient were the anchor's): the leaf bounds fail at the solver's Gram
    matrix."""
    from PEPit import Point

    real = certify_prox.gradient_bound

    def dropped(g, u, a, g_a, L, convex, points):
        implicit = any(leaf is g for leaf in u.decomposition_dict)
        return real(g, u, a, g_a, 0.0 if implicit else L, convex, points)

    no_store.setattr("flbounds.pep.certify.gradient_bound", dropped)
    problem, funcs, initial, setting = _solved("smooth-strongly-convex")
    points, _ = leaf_bounds(funcs, initial, setting.L)
    assert any(float((p ** 2).eval()) > points[id(p)] ** 2 + 1e-8
               for p in Point.list_of_leaf_points)


def test_the_smooth_class_at_gamma_l_one_is_unbounded(no_store):
    setting = CASES["smooth"][0]
    with pytest.raises(sdp.PEPSolveError, match="the worst case is unbounded"):
        pep.worst_case(_prox(0.5), setting, pep.distance(), LAW)
    with pytest.raises(sdp.PEPSolveError, match="gamma \\* L = 1 >= 1"):
        pep.worst_case(_prox(0.5), setting, pep.distance(), LAW, certified=True)


BUDGET = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                      + sum(g ** 2 for g in star.gradients), "heterogeneity budget",
                      bounds=lambda state: {state["x"]: 1.0},
                      star_bounds=lambda star: dict.fromkeys(star.gradients, 1.0))


@pytest.mark.parametrize(("cls", "mu", "gamma"), [
    ("smooth-strongly-convex", 1.0, 0.5), ("quadratic", 1.0, 0.5), ("quadratic", 0.0, 0.5),
    ("smooth", 0.0, 0.25)])
def test_a_proximal_step_without_a_shared_minimizer_is_certified(no_store, cls, mu, gamma):
    """The star route (x* not shared, a heterogeneity budget): the anchor is each client's
    point at x*, its gradient bounded by ``star_bounds``; measured brackets 1.8e-9 (smooth
    strongly convex), 4.2e-8 and 5.3e-8 (quadratic, mu = 1 and 0), 1.6e-6 (smooth)."""
    setting = pep.Setting(3, mu, 2.0, function_class=cls)
    accurate = pep.worst_case(_prox(gamma), setting, BUDGET, LAW)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.worst_case(_prox(gamma), setting, BUDGET, LAW)
    assert_bracketed(bound, accurate)
    assert bound.gap < 1e-5
