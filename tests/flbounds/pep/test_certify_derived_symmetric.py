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
from flbounds.pep import certify_derived, certify_symmargin, certify_symmetric
from flbounds.pep.certify_derived import quadratic_form

from ._planted import assert_bracketed, forced

SETTING = pep.Setting(4, 1.0, 2.0, common_minimizer=True)
SCAFFOLD = pep.scaffold_round(2, 0.2, 4)
DERIVED = pep.lyapunov(pep.scaffold_lyapunov(0.3).value, "SCAFFOLD's V, bounds derived")
LAW = Bernoulli([0.3, 0.3, 0.7, 0.7])
CLASSES = [[0, 1], [2, 3]]


def _spy(monkeypatch):
    """``(problem, bounds)`` of each :func:`condition_bounds` call, and the routes taken."""
    seen, routes = [], []
    real, sym, margin = (certify_derived.condition_bounds, certify_symmargin.certified_symmetric,
                         certify_symmargin.certified_symmetric_margin)

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
