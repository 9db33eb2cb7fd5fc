"""Certified bounds of direct PEPs over the quadratic class whose clients do not share x*
(flbounds.pep.certify.certified_star): with every solve forced inaccurate the bound still
comes out, lies above the accurate value and within the bracket tolerance; a planted bug
(multipliers scaled by 0.9, their dual value read without the checks) proves a number below
the worst case, which the real certificate refuses."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import engine, sdp
from flbounds.pep.certify import bracket_tolerance, certified_star, leaf_bounds
from flbounds.pep.certify_lmi import certify_lmi, solver_lmi_duals, stationary_bounds

#: V = ||x - x*||^2 + sum_i ||grad f_i(x*)||^2: each free leaf of the start and of x* has
#: norm at most 1
BUDGET = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                      + sum(g ** 2 for g in star.gradients), "heterogeneity budget",
                      bounds=lambda state: {state["x"]: 1.0},
                      star_bounds=lambda star: dict.fromkeys(star.gradients, 1.0))
LAW = Bernoulli([0.3, 0.5, 0.7])
SETTING = pep.Setting(3, 1.0, 2.0, function_class="quadratic")


def _build(round_):
    return lambda: engine.build(round_, SETTING, BUDGET, LAW)


@pytest.mark.parametrize("steps, step", [(3, 0.2), (2, 0.3)])
def test_a_forced_inaccurate_solve_still_gives_a_bound_above_the_value(no_store, steps, step):
    round_ = pep.fedavg_round(steps, step)
    accurate = pep.worst_case(round_, SETTING, BUDGET, LAW)
    assert accurate.status == "optimal"
    assert engine.certifiable(SETTING, BUDGET)   # routed: test_engine_certified_routes.py
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = certified_star(_build(round_), SETTING.L, BUDGET)
    assert bound.status.startswith("certified")
    assert bound.worst >= accurate.worst - pep.gap_tolerance(accurate.worst)
    assert bound.worst - accurate.worst <= bracket_tolerance(bound.worst)
    assert bound.gap <= bracket_tolerance(bound.worst)


def _solved(round_):
    problem, parts = engine.build(round_, SETTING, BUDGET, LAW)
    # Clarabel fails on this SDP through cvxpy (both settings); SCS solves it
    (_, _, status, _), = sdp.attempts(problem, sdp.SOLVERS[2:], [])
    assert status == "optimal"
    funcs = list({id(f): f for f in parts["funcs"]}.values())
    initial = {**BUDGET.bounds(parts["start"]), **BUDGET.star_bounds(parts["star"])}
    return problem, leaf_bounds(funcs, stationary_bounds(funcs, initial), SETTING.L)


def test_planted_bugs_prove_less_than_the_worst_case_and_are_refused(no_store):
    round_ = pep.fedavg_round(3, 0.2)
    value = pep.worst_case(round_, SETTING, BUDGET, LAW).worst
    problem, bounds = _solved(round_)
    lam = np.array([float(c.eval_dual()) for c in problem._list_of_prepared_constraints])
    duals = solver_lmi_duals(problem)
    real = certify_lmi(problem, *bounds)
    assert value - pep.gap_tolerance(value) <= real.upper <= value + bracket_tolerance(value)
    scaled = certify_lmi(problem, *bounds, 0.9 * lam, [0.9 * z for z in duals])
    assert scaled.dual < value - 0.05                      # the bug: k read without the checks
    assert scaled.upper >= value                          # the certificate: valid, and
    assert scaled.upper - scaled.primal > bracket_tolerance(scaled.upper)    # refused
    # the skipped projection of the LMI multipliers: the same function, planted in
    # test_certify_lmi.py (test_the_psd_projection_is_what_keeps_the_bound_valid)


def test_a_measure_leaving_the_star_gradients_free_is_refused():
    """Without star_bounds they are derived from V; V = ||x - x*||^2 leaves them free."""
    with pytest.raises(sdp.PEPSolveError, match="unbounded"):
        certified_star(_build(pep.fedavg_round(2, 0.3)), SETTING.L, pep.distance())
    with pytest.raises(ValueError, match="measure"):
        certified_star(_build(pep.fedavg_round(2, 0.3)), SETTING.L, pep.two_runs())
    with pytest.raises(ValueError, match="star_bounds"):
        pep.lyapunov(lambda state, star: state["x"] ** 2, "x", star_bounds=1.0)
