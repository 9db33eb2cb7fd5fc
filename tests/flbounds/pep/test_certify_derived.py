"""Start bounds derived from the measure's own V (flbounds.pep.certify_derived): equal to the
hand-written ones of ``pep.distance()``, SCAFFOLD's and the server momentum's Lyapunov
functions (FOCUS's tightened to the exact value), exact for a heterogeneity budget, attained by a
point with V = 1 (a bound 10% too small is caught), rounded upwards in exact arithmetic; a
measure whose V leaves a gradient at x* free is reported unbounded; through
``flbounds.pep.worst_case`` with every solve forced inaccurate, a budget measure given without
bounds gets flbounds.pep.certify.certified_star's bound within its bracket (planted misroute
changes the outcome).

Measured (FedAvg, 3 local steps, step 0.2, N = 3, p = 0.3, 0.5, 0.7, L = 2, mu = 1,
quadratic class, x* not shared, V = ||x - x*||^2 + sum_i ||grad f_i(x*)||^2): accurate
1.05333107, certified from the derived bounds 1.05333108, bracket 5.9e-9 (5.9e-9 with the
hand-written bounds); the derived gradient bounds are sqrt(2/3), the hand-written 1. The
same over the smooth strongly convex class: 1.05347155 and 1.05347165 (bracket 9.6e-8); over
the smooth class (mu = 0): 6.88903383 and 6.88904226 (8.2e-6)."""

import math
from fractions import Fraction

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import certify_derived, engine, sdp
from flbounds.pep.certify_derived import derived_bounds, norm_bound, quadratic_form

from ._planted import assert_bracketed, spy_certified_star


def _budget(s, st):
    return (s["x"] - st.x) ** 2 + sum(g ** 2 for g in st.gradients)


BUDGET = pep.lyapunov(_budget, "heterogeneity budget, bounds derived")
HAND = pep.lyapunov(_budget, "heterogeneity budget", bounds=lambda state: {state["x"]: 1.0},
                    star_bounds=lambda star: dict.fromkeys(star.gradients, 1.0))
FREE = pep.lyapunov(lambda s, st: (s["x"] - st.x) ** 2, "distance, x* not shared")
QUADRATIC = pep.Setting(3, 1.0, 2.0, function_class="quadratic")
LAW = Bernoulli([0.3, 0.5, 0.7])
FEDAVG = pep.fedavg_round(3, 0.2)


def _derived(measure, setting, round_=FEDAVG):
    _, parts = engine.build(round_, setting, measure, LAW)
    funcs = list({id(f): f for f in parts["funcs"]}.values())
    return parts, derived_bounds(measure, parts["start"], parts["star"], funcs)


def test_the_distance_bound_is_the_hand_written_one():
    shared = pep.Setting(3, 1.0, 2.0, common_minimizer=True)
    plain = pep.lyapunov(pep.distance().value, "distance, bounds derived")
    parts, bounds = _derived(plain, shared)
    hand = pep.distance().bounds(parts["start"])
    assert {id(p): b for p, b in bounds.items()} == {id(p): b for p, b in hand.items()}


@pytest.mark.parametrize("round_, measure", [
    (pep.scaffold_round(2, 0.2, 3), pep.scaffold_lyapunov(0.3)),
    (pep.momentum_round(2, 0.2, 0.5), pep.momentum_lyapunov(0.7)),
    (pep.focus_round(2, 0.2), pep.focus_lyapunov(0.4)),
])
def test_the_packaged_lyapunov_bounds_are_matched_or_tightened(round_, measure):
    """With a shared minimizer the derived bounds are the hand-written ||x|| <= 1 and
    c^{-1/2} (SCAFFOLD's control variates, the server momentum) to rounding; FOCUS's
    1 + c^{-1/2} on z_i is tightened to the exact sqrt(1 + 1/c)."""
    shared = pep.Setting(3, 1.0, 2.0, common_minimizer=True)
    plain = pep.lyapunov(measure.value, "bounds derived")
    parts, bounds = _derived(plain, shared, round_)
    got = {id(p): b for p, b in bounds.items()}
    for point, hand in measure.bounds(parts["start"]).items():
        if round_.name == "FOCUS" and point is not parts["start"]["x"]:
            assert got[id(point)] == pytest.approx(math.sqrt(1 + 1 / 0.4), rel=1e-15)
            assert got[id(point)] < hand
        else:
            assert got[id(point)] == pytest.approx(hand, rel=4e-16)


def test_the_budget_bounds_are_exact_and_within_the_hand_written_ones():
    """V = ||x||^2 + ||g_1||^2 + ||g_2||^2 + ||g_1 + g_2||^2 (g_3 = -g_1 - g_2): ||x|| <= 1,
    ||g_i|| <= sqrt(2/3) exactly (the form [[2, 1], [1, 2]])."""
    parts, bounds = _derived(BUDGET, QUADRATIC)
    x, (g1, g2, _g3) = parts["start"]["x"], parts["star"].gradients
    got = {id(p): b for p, b in bounds.items()}
    assert got[id(x)] == 1.0
    for g in (g1, g2):
        assert math.sqrt(2 / 3) <= got[id(g)] <= math.nextafter(math.sqrt(2 / 3), 2.0)
        assert got[id(g)] <= 1.0                       # the hand-written bound


def _attained(measure, setting):
    """Each derived bound b of leaf k is attained: v = Q^+ e_k / sqrt((Q^+)_kk) has
    v^T Q v = 1 (V = 1 there) and |v_k| = b up to rounding."""
    parts = engine.build(FEDAVG, setting, measure, LAW)[1]
    funcs = list({id(f): f for f in parts["funcs"]}.values())
    leaves, q, c0 = quadratic_form(measure.value(parts["start"], parts["star"]))
    bounds = {id(p): b for p, b in derived_bounds(measure, parts["start"], parts["star"],
                                                  funcs).items()}
    Q = np.array([[float(e) for e in row] for row in q])
    pinv = np.linalg.pinv(Q)
    for k, leaf in enumerate(leaves):
        v = pinv[:, k] * math.sqrt(float(1 - c0)) / math.sqrt(pinv[k, k])
        assert v @ Q @ v <= (1 - float(c0)) * (1 + 1e-12)          # feasible: V <= 1
        assert abs(v[k]) <= bounds[id(leaf)] * (1 + 1e-12)          # the bound holds there
        assert bounds[id(leaf)] <= abs(v[k]) * (1 + 1e-12)          # and is attained


def test_the_derived_bounds_are_attained():
    _attained(BUDGET, QUADRATIC)
    _attained(pep.lyapunov(lambda s, st: (s["x"] - st.x) ** 2 + 3.0 * sum(
        (g - 0.5 * (s["x"] - st.x)) ** 2 for g in st.gradients), "coupled"), QUADRATIC)


def test_a_bound_ten_percent_too_small_is_caught(monkeypatch):
    """Planted: every derived bound scaled by 0.9 is exceeded by a point with V = 1."""
    real = certify_derived.norm_bound
    monkeypatch.setattr(certify_derived, "norm_bound", lambda q, c0, k: 0.9 * real(q, c0, k))
    with pytest.raises(AssertionError):
        _attained(BUDGET, QUADRATIC)


def test_the_square_root_is_rounded_upwards_in_exact_arithmetic():
    q = [[Fraction(2), Fraction(1)], [Fraction(1), Fraction(2)]]
    r = norm_bound(q, Fraction(0), 0)
    assert Fraction(r) ** 2 >= Fraction(2, 3) > Fraction(math.nextafter(r, 0.0)) ** 2
    assert norm_bound([[Fraction(1), Fraction(-1)], [Fraction(-1), Fraction(1)]],
                      Fraction(0), 0) == math.inf                  # ||x - y||^2 alone
    assert norm_bound([[Fraction(1), Fraction(2)], [Fraction(2), Fraction(1)]],
                      Fraction(0), 0) == math.inf                  # not PSD


def test_a_function_value_in_v_is_refused():
    _, parts = engine.build(FEDAVG, QUADRATIC, FREE, LAW)
    f = parts["funcs"][0]
    bad = pep.lyapunov(lambda s, st: (s["x"] - st.x) ** 2 + f.value(s["x"]), "with f")
    with pytest.raises(ValueError, match="measure"):
        quadratic_form(bad.value(parts["start"], parts["star"]))


def test_a_free_gradient_at_x_star_is_reported_unbounded(no_store):
    _, parts = engine.build(FEDAVG, QUADRATIC, FREE, LAW)
    with pytest.raises(sdp.PEPSolveError, match=r"leaves \['grad f_0\(x\*\)', 'grad f_1"):
        derived_bounds(FREE, parts["start"], parts["star"], parts["funcs"])
    with pytest.raises(sdp.PEPSolveError, match="the worst case is unbounded") as info:
        pep.worst_case(FEDAVG, QUADRATIC, FREE, LAW, certified=True)
    assert "grad f_0(x*)" in str(info.value)         # measured 2.2475 (R = 1e2), 174.6 (1e4)


@pytest.mark.parametrize("certified", [False, True])
def test_a_budget_without_bounds_is_certified_with_a_bracket(no_store, certified):
    assert engine.certifiable(QUADRATIC, BUDGET) and BUDGET.derives_bounds
    accurate = pep.worst_case(FEDAVG, QUADRATIC, BUDGET, LAW)
    calls = spy_certified_star(no_store)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.worst_case(FEDAVG, QUADRATIC, BUDGET, LAW, certified=certified)
    assert_bracketed(bound, accurate)
    assert bound.gap < 1e-7                          # measured 5.9e-9
    assert calls == [BUDGET.label]


@pytest.mark.parametrize("cls, mu", [("smooth-strongly-convex", 1.0), ("smooth", 0.0)])
def test_other_classes_take_the_star_route_too(no_store, cls, mu):
    """Any L-smooth class: each client's point at x* (value 0, gradient bounded by V) is its
    anchor (flbounds.pep.certify.leaf_bounds)."""
    setting = pep.Setting(3, mu, 2.0, function_class=cls)
    assert engine.certifiable(setting, BUDGET)
    accurate = pep.worst_case(FEDAVG, setting, BUDGET, LAW)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.worst_case(FEDAVG, setting, BUDGET, LAW, certified=True)
    assert_bracketed(bound, accurate)                # measured 9.6e-8 and 8.2e-6


@pytest.mark.parametrize("cls, mu", [("smooth-strongly-convex", 1.0), ("smooth", 0.0)])
def test_derived_bounds_with_per_client_constants(no_store, cls, mu):
    """Per-client constants on the star route with derived bounds: each client's leaves are
    bounded with its own L_i (flbounds.pep.certify.leaf_bounds)."""
    setting = pep.Setting(3, mu, [2.0, 3.0, 2.0], function_class=cls)
    assert engine.certifiable(setting, BUDGET)
    accurate = pep.worst_case(FEDAVG, setting, BUDGET, LAW)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    assert_bracketed(pep.worst_case(FEDAVG, setting, BUDGET, LAW, certified=True), accurate)


def test_a_mixture_with_a_budget_without_bounds_is_certified(no_store):
    safari = pep.safari_round(0.5, 2, 0.2, 0.3, LAW)
    accurate = pep.worst_case(safari, QUADRATIC, BUDGET)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    assert_bracketed(pep.worst_case(safari, QUADRATIC, BUDGET), accurate)


def test_a_misrouted_budget_is_not_certified(no_store):
    """Planted: the star route closed: certified_solve refuses x* not shared on the shared
    route (naming the setting), no certificate."""
    no_store.setattr(sdp, "accurate", lambda *a: False)
    no_store.setattr(engine, "_star_route", lambda setting, measure: False)
    with pytest.raises(ValueError, match="setting"):
        pep.worst_case(FEDAVG, QUADRATIC, BUDGET, LAW, certified=True)
