"""Certified upper bounds of symmetric solves (flbounds.pep.certify_symmetric): with every
solve forced inaccurate the bound still comes out and lies above the accurate value (FedAvg,
FOCUS, SCAFFOLD, the smooth class, classes of different constants, counts, N = 1000); the a-priori
bounds hold at the solved Gram matrix; any multipliers give a bound above the value; bad
input names its argument."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli, WithReplacement
from flbounds.pep import sdp
from flbounds.pep.certify import bracket_tolerance, certify
from flbounds.pep.certify_symmetric import _StartState, class_leaf_bounds
from flbounds.pep.symmetric import build_symmetric


def _classes(n):
    h = max(1, n // 2)
    return [list(range(h)), list(range(h, n))], np.r_[np.full(h, 0.3), np.full(n - h, 0.7)]


def _case(name, n=6):
    groups, p = _classes(n)
    setting = pep.Setting(n, 1.0, 2.0, common_minimizer=True)
    round_, measure = pep.fedavg_round(3, 0.2), pep.distance()
    if name == "focus":
        round_, measure = pep.focus_round(2, 0.1 / n), pep.focus_lyapunov(1.0 / n)
    elif name == "scaffold":
        round_, measure = pep.scaffold_round(2, 0.1, n), pep.scaffold_lyapunov(1.0)
    elif name == "smooth":
        setting = pep.Setting(n, 0.0, 2.0, function_class="smooth", common_minimizer=True)
    elif name == "constants":
        h = len(groups[0])
        setting = pep.Setting(n, np.r_[np.full(h, 1.0), np.full(n - h, 0.5)],
                              np.r_[np.full(h, 2.0), np.full(n - h, 4.0)],
                              common_minimizer=True)
    law = Bernoulli(p)
    if name == "counts":        # 4 draws with replacement, q constant within each class
        q = np.r_[np.full(len(groups[0]), 1.0), np.full(len(groups[1]), 3.0)]
        law = WithReplacement(q / q.sum(), 4)
    return round_, setting, measure, law, groups


@pytest.mark.parametrize("name", ["fedavg", "focus", "scaffold", "smooth", "constants",
                                  "counts"])
def test_a_forced_inaccurate_solve_still_gives_a_bound_above_the_value(no_store, name):
    round_, setting, measure, law, groups = _case(name)
    accurate = pep.worst_case(round_, setting, measure, law, classes=groups)
    assert accurate.status == "optimal"
    no_store.setattr(sdp, "accurate", lambda *a: False)
    with pytest.raises(sdp.PEPSolveError):     # the forced acceptance refuses every solve
        sdp.solve(build_symmetric(round_, setting, measure, law, classes=groups)[0])
    bound = pep.worst_case(round_, setting, measure, law, classes=groups)   # the fallback
    assert bound.status.startswith("certified")
    assert bound.worst >= accurate.worst - pep.gap_tolerance(accurate.worst)
    assert bound.worst - accurate.worst <= bracket_tolerance(bound.worst)
    forced = pep.worst_case(round_, setting, measure, law, classes=groups, certified=True)
    assert forced.worst == pytest.approx(bound.worst, abs=bracket_tolerance(bound.worst))


def test_certified_at_n_1000(no_store):
    """The certificate of the reduced SDP is one on the worst case over the 1000 clients."""
    round_, setting, measure, law, groups = _case("fedavg", 1000)
    accurate = pep.worst_case(round_, setting, measure, law, classes=groups)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.worst_case(round_, setting, measure, law, classes=groups, certified=True)
    assert bound.status.startswith("certified")
    assert accurate.worst - pep.gap_tolerance(accurate.worst) <= bound.worst \
        <= accurate.worst + bracket_tolerance(bound.worst)


def test_an_accurate_solve_is_kept(no_store):
    round_, setting, measure, law, groups = _case("focus")
    plain = pep.worst_case(round_, setting, measure, law, classes=groups)
    kept = pep.worst_case(round_, setting, measure, law, classes=groups, certified=True)
    assert kept.status == "optimal"
    assert abs(kept.worst - plain.worst) <= 2 * pep.gap_tolerance(plain.worst)


@pytest.mark.parametrize("name", ["focus", "smooth"])
def test_the_a_priori_bounds_hold_at_the_solve(no_store, name):
    """Every Gram coordinate's norm and leaf value at the solved point is within its bound
    (up to the solver's feasibility, 1e-6)."""
    from PEPit import Point

    round_, setting, measure, law, groups = _case(name)
    problem, parts = build_symmetric(round_, setting, measure, law, classes=groups)
    server, clients = parts["start"]
    points, values = class_leaf_bounds(parts["funcs"], measure.bounds(_StartState(server,
                                                                                  clients)),
                                       parts["space"])
    sdp.solve(problem, reuse=False)
    for leaf in Point.list_of_leaf_points:
        assert np.linalg.norm(leaf.eval()) <= points[id(leaf)] + 1e-6
    for f in parts["funcs"]:
        for _u, _g, v in f.list_of_points:
            if v.get_is_leaf():
                assert abs(float(v.eval())) <= values[id(v)] + 1e-6


@pytest.mark.parametrize("factor", [0.0, 0.5, 0.9, 1.0, 1.1])
def test_any_multipliers_give_a_bound_above_the_value(no_store, factor):
    """The bound is valid whatever the multipliers: scaled or zeroed, they only loosen it."""
    round_, setting, measure, law, groups = _case("fedavg")
    problem, parts = build_symmetric(round_, setting, measure, law, classes=groups)
    server, clients = parts["start"]
    bounds = class_leaf_bounds(parts["funcs"], measure.bounds(_StartState(server, clients)),
                               parts["space"])
    value = sdp.solve(problem, reuse=False).worst
    lam = np.array([float(c.eval_dual()) for c in problem._list_of_prepared_constraints])
    cert = certify(problem, *bounds, multipliers=factor * lam)
    assert cert.upper >= value - pep.gap_tolerance(value)
    if factor == 1.0:
        assert cert.upper - value <= bracket_tolerance(cert.upper)


def test_where_no_certificate_applies_the_argument_is_named():
    """V = ||x - x*||^2 with clients not sharing x* over the quadratic class with mu = 0: the
    gradients at x* are free, no certificate, no number (the class itself is certified, shared
    minimizer or a heterogeneity budget: test_certify_symmetric_quadratic; two runs over the
    quadratic class are pinned: test_certify_tworuns_symmetric_quadratic; mu > 0:
    test_certify_lmi); a minimizer the clients do not share and a proximal step go to the
    margin certificate (test_certify_symmargin)."""
    groups, p = _classes(4)
    law, round_ = Bernoulli(p), pep.fedavg_round(1, 0.2)
    with pytest.raises(sdp.PEPSolveError):      # grad f_i(x*) unbounded: no margin
        pep.worst_case(round_, pep.Setting(4, 0.0, 2.0, function_class="quadratic"),
                       pep.distance(), law, classes=groups, certified=True)
