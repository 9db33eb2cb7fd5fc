"""Certified bounds of two-run PEPs over the quadratic class (flbounds.pep.certify_tworuns,
stationary points pinned, the margin certificate): pinning keeps the value; with every solve
forced inaccurate the bound still comes out, lies above the accurate value and within the
bracket tolerance; a planted bug (multipliers scaled by 0.9, their dual value read without
the checks) proves less than the worst case, and the real certificate refuses them."""

import math

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import engine, sdp
from flbounds.pep.certify import bracket_tolerance
from flbounds.pep.certify_lmi import margin_certificate_lmi
from flbounds.pep.certify_margin import regularized, value_growth
from flbounds.pep.certify_tworuns import pin_stationary, solve_two_runs

from ._planted import scaled_margin_lmi


def _case(n):
    return pep.fedavg_round(2, 0.3), pep.Setting(n, 1.0, 2.0, function_class="quadratic"), \
        pep.two_runs(), Bernoulli(np.linspace(0.3, 0.8, n))


def test_pinning_the_stationary_points_keeps_the_value(no_store):
    round_, setting, measure, law = _case(2)
    free = pep.worst_case(round_, setting, measure, law)
    problem, _ = engine.build(round_, setting, measure, law)
    assert len(pin_stationary(problem)) == 2
    pinned = sdp.solve(problem, reuse=False)
    assert pinned.worst == pytest.approx(free.worst, abs=2 * pep.gap_tolerance(free.worst))


@pytest.mark.parametrize("n", [2, 3])
def test_a_forced_inaccurate_solve_still_gives_a_bound_above_the_value(no_store, n):
    round_, setting, measure, law = _case(n)
    accurate = pep.worst_case(round_, setting, measure, law)
    assert accurate.status == "optimal"
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = solve_two_runs(lambda: engine.build(round_, setting, measure, law))
    assert bound.status.startswith("certified")
    assert bound.worst >= accurate.worst - pep.gap_tolerance(accurate.worst)
    assert bound.worst - accurate.worst <= bracket_tolerance(bound.worst)


def test_scaled_multipliers_prove_less_and_are_refused(no_store):
    round_, setting, measure, law = _case(2)
    value = pep.worst_case(round_, setting, measure, law).worst
    problem, parts = engine.build(round_, setting, measure, law)
    metric = problem.list_of_performance_metrics[0]
    growth = value_growth(parts["funcs"], setting.L, pin_stationary(problem))
    problem.list_of_performance_metrics = [regularized(metric, 1e-6)]
    (_, _, status, _), = sdp.attempts(problem, sdp.SOLVERS[:1], [])
    assert status == "optimal"
    real = margin_certificate_lmi(problem, metric, growth)
    assert value - pep.gap_tolerance(value) <= real.upper <= value + bracket_tolerance(value)
    scaled = scaled_margin_lmi(problem, metric, growth)
    assert scaled.dual < value - 0.02                     # the bug: k without the checks
    assert not math.isfinite(scaled.upper) or \
        scaled.upper - scaled.primal > bracket_tolerance(scaled.upper)    # refused
