"""Class bounds derived from V in the symmetric form (``classes=``): a measure without
``bounds``, clients sharing x*, goes to flbounds.pep.certify_symmetric.certified_symmetric
with every mean and deviation leaf bounded by the reduced SDP's own initial condition
(flbounds.pep.certify_derived.condition_bounds), as the direct form derives them.

Measured with every solve forced inaccurate (SCAFFOLD, 2 local steps, step 0.2, N = 4 in two
classes, p = 0.3, 0.3, 0.7, 0.7, L = 2, mu = 1, V = ||x - x*||^2 + 0.3 sum_i ||c_i - c_i*||^2
given without bounds): accurate 1.71643801, certified 1.71643804, bracket 2.6e-8 (2.9e-8 with
the hand-written bounds, which the derived ones tighten: a class mean is bounded by the
summed V); the direct form gives the same value. Planted: bounds scaled by 0.9 (caught: a
Gram matrix with V = 1 exceeds them), the route closed to measures without bounds as before
(caught: the margin certificate is taken instead).
"""

import math

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import certify_derived, certify_symmargin, certify_symmetric, sdp
from flbounds.pep.certify_derived import quadratic_form

from ._planted import assert_bracketed, forced

SETTING = pep.Setting(4, 1.0, 2.0, common_minimizer=True)
SCAFFOLD = pep.scaffold_round(2, 0.2, 4)
DERIVED = pep.lyapunov(pep.scaffold_lyapunov(0.3).value, "SCAFFOLD's V, bounds derived")
LAW = Bernoulli([0.3, 0.3, 0.7, 0.7])
CLASSES = [[0, 1], [2, 3]]


def _no_margin(*args, **kwargs):
    raise sdp.PEPSolveError("no certified solve (the margin certificate made to fail)")


def _spy(monkeypatch, margin_fails=False):
    """``(problem, bounds)`` of each :func:`condition_bounds` call, and the routes taken."""
    seen, routes = [], []
    real, sym, margin = (certify_derived.condition_bounds, certify_symmargin.certified_symmetric,
                         certify_symmargin.certified_symmetric_margin)
    margin = _no_margin if margin_fails else margin

    def spy(problem):
        seen.append((problem, real(problem)))
        return seen[-1][1]

    def route(name, fn):
        return lambda *a, **k: (routes.append(name), fn(*a, **k))[1]

    monkeypatch.setattr(certify_symmetric, "condition_bounds", spy)
    monkeypatch.setattr(certify_symmargin, "certified_symmetric", route("a priori", sym))
    monkeypatch.setattr(certify_symmargin, "certified_symmetric_margin", route("margin", margin))
    return seen, routes


def _attained(problem, bounds):
    """Each bound b of leaf k is at least the norm of leaf k in a Gram matrix meeting the
    initial condition V <= 1: v = Q^+ e_k / sqrt((Q^+)_kk) (V = 1 there)."""
    cond = [c for c in problem.list_of_constraints if c.get_name() == "Initial condition"][0]
    leaves, q, c0 = quadratic_form(cond.expression)
    Q = np.array([[float(e) for e in row] for row in q])
    pinv = np.linalg.pinv(Q)
    got = {id(p): b for p, b in bounds.items()}
    for k, leaf in enumerate(leaves):
        if id(leaf) not in got:
            continue
        v = pinv[:, k] * math.sqrt(float(-c0)) / math.sqrt(pinv[k, k])
        assert v @ Q @ v <= -float(c0) * (1 + 1e-12)
        assert abs(v[k]) <= got[id(leaf)] * (1 + 1e-12)


@pytest.mark.parametrize("certified", [False, True])
def test_a_measure_without_bounds_gets_the_class_certificate(no_store, certified):
    assert certify_symmetric.certifiable_symmetric(SETTING, DERIVED)
    accurate = pep.worst_case(SCAFFOLD, SETTING, DERIVED, LAW, classes=CLASSES)
    seen, routes = _spy(no_store)
    forced(no_store)
    bound = pep.worst_case(SCAFFOLD, SETTING, DERIVED, LAW, classes=CLASSES,
                           certified=certified)
    assert_bracketed(bound, accurate)
    assert bound.gap < 1e-7                              # measured 2.6e-8
    assert routes == ["a priori"] and len(seen) == 1
    _attained(*seen[0])


def test_the_symmetric_value_is_the_direct_one(no_store):
    forced(no_store)
    sym = pep.worst_case(SCAFFOLD, SETTING, DERIVED, LAW, classes=CLASSES, certified=True)
    direct = pep.worst_case(SCAFFOLD, SETTING, DERIVED, LAW, certified=True)
    assert sym.worst == pytest.approx(direct.worst, abs=1e-6)


def test_class_bounds_ten_percent_too_small_are_caught(no_store):
    """Planted: every derived bound scaled by 0.9."""
    real = certify_derived.norm_bound
    no_store.setattr(certify_derived, "norm_bound", lambda q, c0, k: 0.9 * real(q, c0, k))
    seen, _ = _spy(no_store)
    forced(no_store)
    pep.worst_case(SCAFFOLD, SETTING, DERIVED, LAW, classes=CLASSES, certified=True)
    with pytest.raises(AssertionError):
        _attained(*seen[0])


def test_the_class_route_closed_to_measures_without_bounds_is_caught(no_store):
    """Planted: certifiable_symmetric requiring ``bounds`` (as before): the margin certificate
    is taken, not the a-priori one."""
    real = certify_symmetric.certifiable_symmetric
    no_store.setattr(certify_symmargin, "certifiable_symmetric", lambda setting, measure:
                     measure.bounds is not None and real(setting, measure))
    _, routes = _spy(no_store)
    forced(no_store)
    pep.worst_case(SCAFFOLD, SETTING, DERIVED, LAW, classes=CLASSES, certified=True)
    with pytest.raises(AssertionError):
        assert routes == ["a priori"]


def test_a_leaf_v_leaves_free_falls_back_to_the_margin(no_store):
    """V = ||x - x*||^2 leaves the control variates free: no a-priori class bound, the margin
    certificate (flbounds.pep.certify_symmargin) is tried instead; the worst case is unbounded
    here (measured 4.96 at tr G <= 1e2, 338.2 at 1e4), so it finds no bracket either."""
    free = pep.lyapunov(pep.distance().value, "distance, control variates free")
    _, routes = _spy(no_store)
    forced(no_store)
    with pytest.raises(pep.PEPSolveError):
        pep.worst_case(SCAFFOLD, SETTING, free, LAW, classes=CLASSES, certified=True)
    assert routes == ["a priori", "margin"]


def _budget(s, st):
    return (s["x"] - st.x) ** 2 + sum(g ** 2 for g in st.gradients)


BUDGET = pep.lyapunov(_budget, "heterogeneity budget, bounds derived")


@pytest.mark.parametrize("cls, mu", [("smooth-strongly-convex", 1.0), ("quadratic", 1.0),
                                     ("smooth", 0.0)])
def test_clients_not_sharing_x_star_fall_back_on_derived_class_bounds(no_store, cls, mu):
    """x* not shared: the margin certificate first (as before); where it finds no bracket
    (made to fail here), each representative anchored at (0, g_c, 0), g_c bounded by the
    derived bounds (certify_symmetric's module docstring), as the direct form's star route."""
    setting = pep.Setting(4, mu, 2.0, function_class=cls)
    round_ = pep.fedavg_round(3, 0.2)
    accurate = pep.worst_case(round_, setting, BUDGET, LAW, classes=CLASSES)
    seen, routes = _spy(no_store, margin_fails=True)
    forced(no_store)
    bound = pep.worst_case(round_, setting, BUDGET, LAW, classes=CLASSES, certified=True)
    assert_bracketed(bound, accurate)     # measured 3.3e-8, 3.2e-7 and 2.7e-7
    assert routes == ["margin", "a priori"]
    _attained(*seen[0])


def test_not_shared_without_the_fallback_is_caught(no_store):
    """Planted: certifiable_symmetric requiring a shared minimizer (as before): with the
    margin failing, no certificate."""
    real = certify_symmetric.certifiable_symmetric
    no_store.setattr(certify_symmargin, "certifiable_symmetric", lambda setting, measure:
                     bool(setting.common_minimizer) and real(setting, measure))
    _spy(no_store, margin_fails=True)
    forced(no_store)
    with pytest.raises(sdp.PEPSolveError):
        pep.worst_case(pep.fedavg_round(3, 0.2), pep.Setting(4, 1.0, 2.0), BUDGET, LAW,
                       classes=CLASSES, certified=True)
