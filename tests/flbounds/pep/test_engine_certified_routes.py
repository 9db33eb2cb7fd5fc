"""The engine's routes to the certificates of the quadratic class (flbounds.pep.engine):
through ``flbounds.pep.worst_case`` with every solve forced inaccurate, a one-run measure
with ``star_bounds`` and no shared minimizer gets :func:`flbounds.pep.certify.certified_star`'s
bound and a two-run measure :func:`flbounds.pep.certify_tworuns.solve_two_runs`'s, each above
the accurate value and within the bracket tolerance; an unbounded SDP still raises; planted
routing bugs change the outcome."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import engine, sdp
from flbounds.pep.certify import bracket_tolerance

from ._planted import assert_bracketed, forced, spy_certified_star

#: V = ||x - x*||^2 + sum_i ||grad f_i(x*)||^2 (as in test_certify_star.py)
BUDGET = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                      + sum(g ** 2 for g in star.gradients), "heterogeneity budget",
                      bounds=lambda state: {state["x"]: 1.0},
                      star_bounds=lambda star: dict.fromkeys(star.gradients, 1.0))
#: the same V with no bounds on x*'s gradients: their part derived from V (certify_derived)
NO_STAR = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                       + sum(g ** 2 for g in star.gradients), "heterogeneity budget",
                       bounds=lambda state: {state["x"]: 1.0})
#: V that does not read the gradients at x*: they are free, the worst case unbounded
FREE = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2, "distance, x* not shared",
                    bounds=lambda state: {state["x"]: 1.0})
QUADRATIC = pep.Setting(3, 1.0, 2.0, function_class="quadratic")
LAW = Bernoulli([0.3, 0.5, 0.7])


def _bracketed(bound, accurate):
    assert_bracketed(bound, accurate)
    assert bound.gap <= bracket_tolerance(bound.worst)


def test_the_routes_are_certifiable():
    assert engine.certifiable(QUADRATIC, BUDGET)
    assert engine.certifiable(QUADRATIC, pep.two_runs())
    assert engine.certifiable(QUADRATIC, NO_STAR)   # test_certify_derived_routes.py
    assert engine.certifiable(pep.Setting(3, 0.0, 2.0, function_class="quadratic"), BUDGET)
    assert not engine.certifiable_shared(QUADRATIC, BUDGET)


@pytest.mark.parametrize("certified", [False, True])
def test_fedavg_without_a_shared_minimizer_gets_the_star_bound(no_store, certified):
    round_ = pep.fedavg_round(3, 0.2)
    accurate = pep.worst_case(round_, QUADRATIC, BUDGET, LAW)
    forced(no_store)
    _bracketed(pep.worst_case(round_, QUADRATIC, BUDGET, LAW, certified=certified), accurate)


@pytest.mark.parametrize("certified", [False, True])
def test_two_runs_over_the_quadratic_class_get_the_pinned_bound(no_store, certified):
    round_, law = pep.fedavg_round(2, 0.3), Bernoulli(np.linspace(0.3, 0.8, 2))
    setting = pep.Setting(2, 1.0, 2.0, function_class="quadratic")
    accurate = pep.worst_case(round_, setting, pep.two_runs(), law)
    forced(no_store)
    _bracketed(pep.worst_case(round_, setting, pep.two_runs(), law, certified=certified),
               accurate)


def test_an_unbounded_sdp_still_raises(no_store):
    """V leaves the gradients at x* free: no certificate, the worst case said unbounded."""
    forced(no_store)
    for certified in (False, True):
        with pytest.raises(sdp.PEPSolveError, match="unbounded"):
            pep.worst_case(pep.fedavg_round(2, 0.3), QUADRATIC, FREE, LAW, certified=certified)


def test_a_star_measure_sent_to_the_shared_certificate_fails(no_store):
    """Planted: the old one-run condition without its shared-minimizer test, so a star
    measure goes to the shared-minimizer certificate (x*'s gradients unbounded there)."""
    forced(no_store)
    no_store.setattr(engine, "_star_route", lambda setting, measure: False)
    no_store.setattr(engine, "certifiable_shared", lambda setting, measure:
                     measure.runs == 1 and measure.bounds is not None)
    with pytest.raises(ValueError, match="no point bounded"):
        pep.worst_case(pep.fedavg_round(3, 0.2), QUADRATIC, BUDGET, LAW)


def test_a_star_measure_misrouted_by_certified_solve_is_refused(no_store):
    """Planted: the star route closed, so certified_solve sends x* not shared to the shared
    certificate: refused, naming the setting."""
    forced(no_store)
    no_store.setattr(engine, "_star_route", lambda setting, measure: False)
    with pytest.raises(ValueError, match="setting"):
        pep.worst_case(pep.fedavg_round(2, 0.3), QUADRATIC, NO_STAR, LAW, certified=True)


def test_a_route_skipping_the_check_changes_the_outcome(no_store):
    """Planted: no route (certifiable False, as before), the fallback never taken."""
    round_ = pep.fedavg_round(3, 0.2)
    forced(no_store)
    no_store.setattr(engine, "certifiable", lambda setting, measure: False)
    with pytest.raises(sdp.PEPSolveError):
        pep.worst_case(round_, QUADRATIC, BUDGET, LAW)


def test_certified_star_is_what_the_route_calls(no_store):
    """The forced-inaccurate solve of a star measure goes through certified_star once."""
    calls = spy_certified_star(no_store)
    forced(no_store)
    pep.worst_case(pep.fedavg_round(2, 0.3), QUADRATIC, BUDGET, LAW)
    assert calls == [BUDGET.label]
