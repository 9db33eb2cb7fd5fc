"""Certified bounds of PEPs with extra LMIs (the quadratic class; flbounds.pep.certify_lmi):
with every solve forced inaccurate the bound still comes out, lies above the accurate value
and within the bracket tolerance (direct and symmetric forms); any multipliers give a bound
above the value; a planted bug that skips the PSD projection of the LMI multipliers certifies
a number below the worst case, which the real certificate refuses."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import engine, sdp
from flbounds.pep.certify import bracket_tolerance, leaf_bounds
from flbounds.pep.certify_lmi import (
    certify_lmi,
    psd_weights,
    solver_lmi_duals,
    stationary_bounds,
)

from ._planted import lmis_as_equalities

MU, L = 1.0, 4.0


def _chebyshev(f, pulled, state):
    """Two gradient steps, 1/L then 1/mu: x+ - x* = (I - H/L)(I - H/mu)(x - x*), zero at both
    ends of [mu, L], largest at (mu + L)/2: the worst case is ((L - mu)^2 / (4 mu L))^2."""
    x = pulled["x"]
    z = x - (1 / L) * f.gradient(x)
    z = z - (1 / MU) * f.gradient(z)
    return {}, {"delta": z - x}


CHEBYSHEV = pep.Round("steps 1/L, 1/mu", pep.local_custom(_chebyshev, "1/L then 1/mu"),
                      push={"delta": "uniform"}, server=pep.server_model_step(1.0))
WORST = ((L - MU) ** 2 / (4 * MU * L)) ** 2


def _quadratic(n):
    return pep.Setting(n, 1.0, 2.0, function_class="quadratic", common_minimizer=True)


def _case(name):
    law3, classes = Bernoulli([0.3, 0.5, 0.7]), None
    if name == "chebyshev":
        return CHEBYSHEV, pep.Setting(1, MU, L, function_class="quadratic",
                                      common_minimizer=True), pep.distance(), None, None
    if name == "fedavg":
        return pep.fedavg_round(3, 0.2), _quadratic(3), pep.distance(), law3, classes
    if name == "focus":
        return pep.focus_round(2, 0.05), _quadratic(3), pep.focus_lyapunov(1 / 3), law3, classes
    if name == "scaffold":
        return pep.scaffold_round(2, 0.1, 3), _quadratic(3), pep.scaffold_lyapunov(1.0), \
            law3, classes
    law6, classes = Bernoulli(np.r_[np.full(3, 0.3), np.full(3, 0.7)]), [[0, 1, 2], [3, 4, 5]]
    if name == "fedavg symmetric":
        return pep.fedavg_round(3, 0.2), _quadratic(6), pep.distance(), law6, classes
    if name == "heterogeneity symmetric":     # x* not shared: the margin certificate
        budget = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                              + sum(g ** 2 for g in star.gradients), "heterogeneity budget")
        return pep.fedavg_round(3, 0.2), pep.Setting(6, 1.0, 2.0, function_class="quadratic"), \
            budget, law6, classes
    return pep.focus_round(2, 0.1 / 6), _quadratic(6), pep.focus_lyapunov(1 / 6), law6, classes


@pytest.mark.parametrize("name", ["chebyshev", "fedavg", "focus", "scaffold",
                                  "fedavg symmetric", "focus symmetric",
                                  "heterogeneity symmetric"])
def test_a_forced_inaccurate_solve_still_gives_a_bound_above_the_value(no_store, name):
    round_, setting, measure, law, classes = _case(name)
    accurate = pep.worst_case(round_, setting, measure, law, classes=classes)
    assert accurate.status == "optimal"
    if name == "chebyshev":
        assert accurate.worst == pytest.approx(WORST, abs=pep.gap_tolerance(WORST))
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.worst_case(round_, setting, measure, law, classes=classes)   # the fallback
    assert bound.status.startswith("certified")
    assert bound.worst >= accurate.worst - pep.gap_tolerance(accurate.worst)
    assert bound.worst - accurate.worst <= bracket_tolerance(bound.worst)
    if name == "chebyshev":
        assert bound.worst >= WORST
    forced = pep.worst_case(round_, setting, measure, law, classes=classes, certified=True)
    assert forced.worst == pytest.approx(bound.worst, abs=bracket_tolerance(bound.worst))


def _solved(name, equality=False, monkeypatch=None):
    """The direct problem solved by Clarabel through cvxpy, with its leaf bounds; with
    ``equality`` the LMI T >= 0 is sent as T = 0 (free multipliers: the planted bug's)."""
    round_, setting, measure, law, _ = _case(name)
    if equality:
        lmis_as_equalities(monkeypatch)
    problem, parts = engine.build(round_, setting, measure, law)
    problem.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0)
    funcs = list({id(f): f for f in parts["funcs"]}.values())
    bounds = leaf_bounds(funcs, stationary_bounds(funcs, measure.bounds(parts["start"])),
                         float(setting.L))
    return problem, bounds


@pytest.mark.parametrize("factor", [0.0, 0.5, 0.9, 1.0, 1.1])
def test_any_multipliers_give_a_bound_above_the_value(no_store, factor):
    """Scaled or zeroed, scalar and LMI multipliers together, they only loosen the bound."""
    round_, setting, measure, law, _ = _case("fedavg")
    value = pep.worst_case(round_, setting, measure, law).worst
    problem, bounds = _solved("fedavg")
    lam = np.array([float(c.eval_dual()) for c in problem._list_of_prepared_constraints])
    duals = [factor * z for z in solver_lmi_duals(problem)]
    cert = certify_lmi(problem, *bounds, factor * lam, duals)
    assert cert.upper >= value - pep.gap_tolerance(value)
    if factor == 1.0:
        assert cert.upper - value <= bracket_tolerance(cert.upper)


def test_the_psd_projection_is_what_keeps_the_bound_valid(no_store):
    """Planted bug: multipliers of T(G) = 0 (free, indefinite) used as they are prove the
    value of the PEP whose quadratics have every curvature at mu or L, about 0, below the
    worst case ((L - mu)^2 / (4 mu L))^2 = 0.316; the real certificate projects them and
    gives a bound above the worst case, far outside the bracket (refused)."""
    problem, bounds = _solved("chebyshev", equality=True, monkeypatch=no_store)
    assert any(np.linalg.eigvalsh(0.5 * (z + z.T))[0] < -1e-3
               for z in solver_lmi_duals(problem))     # the multipliers are not PSD
    bug = certify_lmi(problem, *bounds, project=False)
    assert bug.upper < 0.01 < WORST
    real = certify_lmi(problem, *bounds)
    assert real.upper >= WORST
    assert real.upper - real.primal > bracket_tolerance(real.upper)


def test_the_weights_are_psd_in_float64_and_bad_duals_are_named(no_store):
    problem, _ = _solved("fedavg")
    for _psd, w in psd_weights(problem, [-z for z in solver_lmi_duals(problem)]):
        sym = 0.5 * (w + w.T)
        assert np.linalg.eigvalsh(sym)[0] >= 0.0
    with pytest.raises(ValueError, match="lmi_duals"):
        psd_weights(problem, [])
    with pytest.raises(ValueError, match="lmi_duals"):
        psd_weights(problem, [np.full((2, 2), np.nan)] * len(solver_lmi_duals(problem)))


def test_pepit_quadratic_class_with_mu_zero_has_no_a_priori_bound():
    """PEPit's class at mu = 0 leaves its stationary point unbounded (refused here); the
    engine declares that class about a point instead (test_certify_quadratic.py)."""
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexQuadraticFunction

    from flbounds.pep.anchor import anchored_minimizer

    problem = PEP()
    f = problem.declare_function(SmoothStronglyConvexQuadraticFunction, mu=0.0, L=2.0)
    anchored_minimizer([f], common=True)
    with pytest.raises(ValueError, match="setting"):
        stationary_bounds([f], {})
    setting = pep.Setting(3, 0.0, 2.0, function_class="quadratic", common_minimizer=True)
    assert engine.certifiable(setting, pep.distance())


def test_the_dual_residual_of_lmi_problems_is_the_true_one(no_store):
    """sdp.dual_residual reads the LMI multipliers entry by entry (certify_lmi.lmi_residual):
    an accurate solve leaves a residual within the acceptance, the same multipliers with
    each LMI's multiplier moved by 1e-3 I leave it far outside (the LMI terms no longer
    cancel), and the symmetric part alone (PEPit's eval_dual) does not close the proof."""
    from flbounds.pep.certify_lmi import lmi_residual

    round_, setting, measure, law, _ = _case("fedavg")
    problem, _ = engine.build(round_, setting, measure, law)
    info = sdp.solve(problem, reuse=False)
    assert info.status == "optimal" and problem._list_of_psd_sent_to_wrapper
    residual = sdp.dual_residual(problem)
    assert 0.0 < residual <= sdp.RESIDUAL_REL * max(1.0, info.worst)
    assert info.dual_residual == residual
    duals = solver_lmi_duals(problem)
    moved = lmi_residual(problem, [z + 1e-3 * np.eye(z.shape[0]) for z in duals])
    assert moved > 100 * sdp.RESIDUAL_REL
    symmetric = lmi_residual(problem, [0.5 * (z + z.T) for z in duals])
    assert symmetric > 100 * sdp.RESIDUAL_REL
    assert lmi_residual(problem, duals) == residual
