"""The quadratic class with mu = 0 (flbounds.pep.certify_quadratic): interpolated about each
client's first point, it has PEPit's value where PEPit's class solves; through
``flbounds.pep.worst_case`` with every solve forced inaccurate the certified bound comes out
(x* shared, and x* not shared with star_bounds, where PEPit's class does not even solve), above
the accurate value and within the bracket tolerance; planted bugs (multipliers scaled by
0.9, the PSD projection of the LMI multipliers skipped) prove numbers below the worst case,
which the real certificate refuses.

Brackets measured with every solve forced inaccurate (FedAvg, tau = 3, step 0.2, N = 3,
p = 0.3, 0.5, 0.7, L = 2): 2.2e-10 (x* shared), 2.8e-7 (x* not shared)."""

import functools

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import engine, sdp
from flbounds.pep.certify import bracket_tolerance, leaf_bounds
from flbounds.pep.certify_lmi import certify_lmi, solver_lmi_duals, stationary_bounds
from flbounds.pep.certify_quadratic import client_functions, quadratic_class

from ._planted import assert_bracketed, lmis_as_equalities

BUDGET = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                      + sum(g ** 2 for g in star.gradients), "heterogeneity budget",
                      bounds=lambda state: {state["x"]: 1.0},
                      star_bounds=lambda star: dict.fromkeys(star.gradients, 1.0))
LAW = Bernoulli([0.3, 0.5, 0.7])
SHARED = pep.Setting(3, 0.0, 2.0, function_class="quadratic", common_minimizer=True)
STAR = pep.Setting(3, 0.0, 2.0, function_class="quadratic")
L = 4.0


def _bump(f, pulled, state):
    """x+ - x* = H (I - H/L) (x - x*) / L: 0 at both ends of [0, L], largest at L/2: the
    worst case is 1/16, which quadratics of curvature 0 or L only (T(G) = 0) cannot reach."""
    x = pulled["x"]
    z = x - (1 / L) * f.gradient(x)
    return {}, {"delta": (1 / L) * f.gradient(z) - x}


BUMP = pep.Round("bump", pep.local_custom(_bump, "H(I - H/L)/L"), push={"delta": "uniform"},
                 server=pep.server_model_step(1.0))


def _bracketed(bound, accurate):
    assert_bracketed(bound, accurate)
    assert bound.gap <= bracket_tolerance(bound.worst)


def test_the_class_about_a_point_has_pepit_value_where_pepit_solves(no_store):
    """mu > 0 (the same class): x* not shared; mu = 0 with x* shared (PEPit's solve is
    accurate there)."""
    round_ = pep.fedavg_round(3, 0.2)
    strong = pep.Setting(3, 1.0, 2.0, function_class="quadratic")
    pepit = pep.worst_case(round_, strong, BUDGET, LAW)
    no_store.setattr(engine, "_functions", lambda problem, setting, about=True: [
        problem.declare_function(quadratic_class(), mu=setting.mu, L=setting.L)
        for _ in range(setting.n_clients)])
    about = pep.worst_case(round_, strong, BUDGET, LAW)
    assert about.worst == pytest.approx(pepit.worst, abs=1e-6)
    no_store.undo()
    no_store.delenv(sdp.CACHE_ENV, raising=False)
    flat = pep.worst_case(round_, SHARED, pep.distance(), LAW)
    no_store.setattr(engine, "_functions", functools.partial(client_functions, about=False))
    pepit = pep.worst_case(round_, SHARED, pep.distance(), LAW)
    assert pepit.status == flat.status == "optimal"
    assert flat.worst == pytest.approx(pepit.worst, abs=1e-6)


def test_the_bump_reaches_its_worst_case(no_store):
    setting = pep.Setting(1, 0.0, L, function_class="quadratic", common_minimizer=True)
    assert pep.worst_case(BUMP, setting, pep.distance()).worst == pytest.approx(
        1 / 16, abs=1e-6)


@pytest.mark.parametrize("certified", [False, True])
@pytest.mark.parametrize("setting, measure", [(SHARED, pep.distance()), (STAR, BUDGET)],
                         ids=["shared", "star"])
def test_mu_zero_forced_inaccurate_gets_a_certified_bound(no_store, certified, setting,
                                                          measure):
    round_ = pep.fedavg_round(3, 0.2)
    assert engine.certifiable(setting, measure)
    accurate = pep.worst_case(round_, setting, measure, LAW)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.worst_case(round_, setting, measure, LAW, certified=certified)
    _bracketed(bound, accurate)
    assert bound.gap < 1e-6      # measured 2.2e-10 (shared), 2.8e-7 (star)


def test_without_star_bounds_mu_zero_derives_them(no_store):
    """``bounds`` without ``star_bounds``: the gradients at x* bounded from V
    (flbounds.pep.certify_derived), the star route certified within its bracket."""
    no_star = pep.lyapunov(BUDGET.value, "budget", bounds=BUDGET.bounds)
    assert engine.certifiable(STAR, no_star)
    accurate = pep.worst_case(pep.fedavg_round(2, 0.3), STAR, no_star, LAW)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.worst_case(pep.fedavg_round(2, 0.3), STAR, no_star, LAW, certified=True)
    _bracketed(bound, accurate)


def _solved(round_, setting, measure, law, equality=False, monkeypatch=None):
    if equality:     # T(G) >= 0 sent as T(G) = 0: free multipliers (tests/flbounds/pep/_planted.py)
        lmis_as_equalities(monkeypatch)
    problem, parts = engine.build(round_, setting, measure, law)
    problem.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0)
    funcs = list({id(f): f for f in parts["funcs"]}.values())
    initial = dict(measure.bounds(parts["start"]))
    if measure.star_bounds is not None:
        initial.update(measure.star_bounds(parts["star"]))
    return problem, leaf_bounds(funcs, stationary_bounds(funcs, initial), setting.L)


def test_scaled_multipliers_prove_less_and_are_refused(no_store):
    round_ = pep.fedavg_round(3, 0.2)
    value = pep.worst_case(round_, STAR, BUDGET, LAW).worst
    problem, bounds = _solved(round_, STAR, BUDGET, LAW)
    real = certify_lmi(problem, *bounds)
    assert value - pep.gap_tolerance(value) <= real.upper <= value + bracket_tolerance(value)
    lam = np.array([float(c.eval_dual()) for c in problem._list_of_prepared_constraints])
    scaled = certify_lmi(problem, *bounds, 0.9 * lam,
                         [0.9 * z for z in solver_lmi_duals(problem)])
    assert scaled.dual < value - 0.05                      # the bug: k read without the checks
    assert scaled.upper >= value                           # the certificate: valid, and
    assert scaled.upper - scaled.primal > bracket_tolerance(scaled.upper)     # refused


def test_a_skipped_projection_proves_less_and_is_refused(no_store):
    setting = pep.Setting(1, 0.0, L, function_class="quadratic", common_minimizer=True)
    problem, bounds = _solved(BUMP, setting, pep.distance(), None, equality=True,
                              monkeypatch=no_store)
    assert any(np.linalg.eigvalsh(0.5 * (z + z.T))[0] < -1e-3
               for z in solver_lmi_duals(problem))       # the multipliers are not PSD
    bug = certify_lmi(problem, *bounds, project=False)
    assert bug.upper < 0.01 < 1 / 16
    real = certify_lmi(problem, *bounds)
    assert real.upper >= 1 / 16
    assert real.upper - real.primal > bracket_tolerance(real.upper)
