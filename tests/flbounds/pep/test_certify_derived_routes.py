"""Start bounds derived from V on every one-run route (flbounds.pep.certify_derived through
flbounds.pep.measures.Measure.start_bounds): a measure without ``bounds`` and clients sharing
x* (or identical) goes to flbounds.pep.certify.solve_certified, and a measure with ``bounds``
but no ``star_bounds`` and x* not shared to certify.certified_star with the star part derived.
Every solve forced inaccurate through ``flbounds.pep.worst_case``: the certified value is at or
above the accurate one, within its bracket. Planted: bounds 10% too small (caught: below the
norm of a start with V = 1), and each route closed as before (caught: no certificate).

Measured (CPU seconds on one core, no store):

- The plugin guide's FedAvgM (docs/guide/plugins.md: tau = 1, step 0.2, beta 0.2, c = 1, two
  identical clients, p = 0.5, mu = 1, L = 4), V given without bounds: accurate 0.78769553
  (quadratic class), certified 0.78769553 with bracket 2.4e-9 (0.21 s); smooth strongly convex
  class: bracket 2.1e-8. Derived bounds ||x|| <= 1, ||m|| <= 1.
- FedAvg, x* not shared, V = ||x - x*||^2 + sum_i ||grad f_i(x*)||^2 with only
  ``bounds = {x: 1}``: the gradients' part derived (sqrt(2/3), N = 3), bracket as with both
  given (5.9e-9).
"""

import math

import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import certify_derived, engine, sdp

from ._planted import assert_bracketed, forced


def fedavgm(local_steps, step, beta):
    """The plugin guide's FedAvgM (docs/guide/plugins.md), as written there."""
    def server(state, aggregated):
        m = beta * state["m"] + aggregated["delta"]
        return {"m": m, "x": state["x"] + m}

    return pep.Round("FedAvgM", pep.local_gd(local_steps, step), {"delta": "uniform"},
                     pep.Server(server, "server momentum"), server_state=("x", "m"))


C = 1.0
FEDAVGM = pep.lyapunov(lambda s, star: (s["x"] - star.x) ** 2 + C * s["m"] ** 2,
                       "E[V+] / V, V = |x - x*|^2 + c |m|^2")
IDENTICAL = pep.Setting(2, 1.0, 4.0, function_class="quadratic", identical=True)
PAIR = Bernoulli([0.5, 0.5])


def _budget(s, st):
    return (s["x"] - st.x) ** 2 + sum(g ** 2 for g in st.gradients)


#: bounds on the start given, none on the gradients at x*: the star part is derived
NO_STAR = pep.lyapunov(_budget, "heterogeneity budget, star part derived",
                       bounds=lambda state: {state["x"]: 1.0})
QUADRATIC = pep.Setting(3, 1.0, 2.0, function_class="quadratic")
LAW = Bernoulli([0.3, 0.5, 0.7])


def _spy(monkeypatch):
    """The bounds :func:`certify_derived.derived_bounds` returns, call by call."""
    seen, real = [], certify_derived.derived_bounds

    def spy(*args, **kwargs):
        seen.append(real(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(certify_derived, "derived_bounds", spy)
    return seen


def _fedavgm_bounds_hold(bounds):
    """||x|| <= 1 and ||m|| <= c^{-1/2}: both attained by a start with V = 1 (x = e, m = 0;
    x = 0, m = e / sqrt(c)), so a smaller bound is wrong."""
    values = sorted(bounds.values())
    assert values[0] >= 1.0 and values[1] >= 1 / math.sqrt(C)
    assert values[1] <= math.nextafter(1 / math.sqrt(C), 2.0)


@pytest.mark.parametrize("cls", ["quadratic", "smooth-strongly-convex"])
@pytest.mark.parametrize("certified", [False, True])
def test_the_plugin_guide_fedavgm_is_certified_without_bounds(no_store, cls, certified):
    setting = pep.Setting(2, 1.0, 4.0, function_class=cls, identical=True)
    assert engine.certifiable_shared(setting, FEDAVGM) and FEDAVGM.bounds is None
    accurate = pep.worst_case(fedavgm(1, 0.2, 0.2), setting, FEDAVGM, PAIR)
    seen = _spy(no_store)
    forced(no_store)
    bound = pep.worst_case(fedavgm(1, 0.2, 0.2), setting, FEDAVGM, PAIR, certified=certified)
    assert_bracketed(bound, accurate)
    assert bound.gap < 1e-7                          # measured 2.4e-9 and 2.1e-8
    assert len(seen) == 1
    _fedavgm_bounds_hold(seen[0])


def test_a_shared_minimizer_without_bounds_over_several_clients(no_store):
    """Clients sharing x* (not identical): SCAFFOLD-like momentum V without bounds."""
    setting = pep.Setting(3, 1.0, 2.0, common_minimizer=True)
    measure = pep.lyapunov(pep.momentum_lyapunov(0.7).value, "momentum V, bounds derived")
    round_ = pep.momentum_round(2, 0.2, 0.5)
    accurate = pep.worst_case(round_, setting, measure, LAW)
    forced(no_store)
    assert_bracketed(pep.worst_case(round_, setting, measure, LAW, certified=True), accurate)


def test_derived_bounds_ten_percent_too_small_are_caught(no_store):
    """Planted: every derived bound scaled by 0.9; the bounds the certified solve used are
    below the norm of a start with V = 1."""
    real = certify_derived.norm_bound
    no_store.setattr(certify_derived, "norm_bound", lambda q, c0, k: 0.9 * real(q, c0, k))
    seen = _spy(no_store)
    forced(no_store)
    pep.worst_case(fedavgm(1, 0.2, 0.2), IDENTICAL, FEDAVGM, PAIR, certified=True)
    with pytest.raises(AssertionError):
        _fedavgm_bounds_hold(seen[0])


def test_the_shared_route_closed_to_derived_bounds_is_caught(no_store):
    """Planted: the shared-minimizer route requiring ``bounds`` (as before): no certificate."""
    forced(no_store)
    no_store.setattr(engine, "certifiable_shared", lambda setting, measure:
                     measure.bounds is not None and measure.runs == 1
                     and bool(setting.common_minimizer or setting.identical))
    with pytest.raises(sdp.PEPSolveError):
        pep.worst_case(fedavgm(1, 0.2, 0.2), IDENTICAL, FEDAVGM, PAIR)


@pytest.mark.parametrize("certified", [False, True])
def test_bounds_without_star_bounds_derive_the_star_part(no_store, certified):
    assert engine.certifiable(QUADRATIC, NO_STAR) and NO_STAR.derives_bounds
    round_ = pep.fedavg_round(3, 0.2)
    accurate = pep.worst_case(round_, QUADRATIC, NO_STAR, LAW)
    seen = _spy(no_store)
    forced(no_store)
    bound = pep.worst_case(round_, QUADRATIC, NO_STAR, LAW, certified=certified)
    assert_bracketed(bound, accurate)
    assert bound.gap < 1e-7                          # measured 5.9e-9
    values = sorted(seen[0].values())                # x: the given 1; g_1, g_2: sqrt(2/3)
    assert values[-1] == 1.0
    assert all(math.sqrt(2 / 3) <= v <= math.nextafter(math.sqrt(2 / 3), 1.0)
               for v in values[:-1])


def test_the_star_route_closed_to_a_missing_star_part_is_caught(no_store):
    """Planted: the star route requiring ``star_bounds`` with ``bounds`` (as before)."""
    forced(no_store)
    no_store.setattr(engine, "_star_route", lambda setting, measure:
                     measure.bounds is None or measure.star_bounds is not None)
    with pytest.raises(sdp.PEPSolveError, match="no accurate solve"):
        pep.worst_case(pep.fedavg_round(3, 0.2), QUADRATIC, NO_STAR, LAW)


def test_a_mixture_with_a_shared_minimizer_without_bounds(no_store):
    """A mixture (flbounds.pep.scenarios) over clients sharing x*, V without bounds."""
    setting = pep.Setting(3, 1.0, 2.0, common_minimizer=True)
    measure = pep.lyapunov(pep.distance().value, "distance, bounds derived")
    safari = pep.safari_round(0.5, 2, 0.2, 0.3, LAW)
    accurate = pep.worst_case(safari, setting, measure)
    seen = _spy(no_store)
    forced(no_store)
    assert_bracketed(pep.worst_case(safari, setting, measure, certified=True), accurate)
    assert [sorted(b.values()) for b in seen] == [[1.0]]          # ||x|| <= 1, exact
