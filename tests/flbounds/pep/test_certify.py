"""The certified upper bound of flbounds.pep.certify: sound on accurate cases, on perturbed and
on wrong multipliers; bad input refused."""

import numpy as np
import pytest

from benchmarks._focus_reference import round_problem, scenario_focus_rate
from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep.certify import certify, leaf_bounds, solve_certified
from flbounds.pep.moments import participation_moments
from flbounds.pep.sdp import gap_tolerance, solve

MU, L, TAU, STEP = 1.0, 2.0, 2, 0.01
P = (0.5, 0.8)
C = 0.36  # the Lyapunov weight (1 - 8 STEP L^2 N/MU at these constants)


def _pair():
    return participation_moments(Bernoulli(np.array(P)), len(P)).pair


def _solved(form="common"):
    c = C
    problem, funcs, initial = round_problem(MU, L, TAU, STEP, c, _pair(), form=form)
    info = solve(problem)  # accurate at this step (the checked solve accepts it)
    return problem, leaf_bounds(funcs, initial, L), info


@pytest.fixture(scope="module")
def exact():
    """The worst case from the heterogeneous 2^N-scenario form (independent formulation)."""
    c = C
    return scenario_focus_rate(MU, L, P, TAU, STEP, c).worst


def test_certificate_brackets_the_exact_value(exact):
    problem, bounds, info = _solved()
    cert = certify(problem, *bounds)
    tol = gap_tolerance(exact)
    assert cert.upper >= exact - tol  # same SDP value up to the solver's accuracy
    assert cert.primal <= exact + tol
    assert cert.upper - exact <= 1e-5  # and close to it on an accurate solve
    assert abs(info.worst - exact) <= 2 * tol  # common minimizer loses nothing


def test_focus_rate_agrees_with_the_scenario_form(exact):
    res = pep.focus_rate(MU, L, P, TAU, STEP, consensus_weight=C)
    assert res.worst >= exact - gap_tolerance(exact)
    assert res.worst - exact <= 1e-5
    assert res.status == "optimal"  # an accurate solve says so


def test_focus_rate_says_when_its_value_is_a_certified_bound(exact, monkeypatch):
    from flbounds.pep import certify as module
    from flbounds.pep import tracking

    monkeypatch.setattr(module, "_accurate", lambda *args: False)
    monkeypatch.setattr(tracking, "MAX_ALTERNATIVE", 0)
    res = pep.focus_rate(MU, L, P, TAU, STEP, consensus_weight=C)
    assert res.status.startswith("certified") and res.as_dict()["status"] == res.status
    assert res.worst >= exact - gap_tolerance(exact)


def test_perturbed_multipliers_give_a_larger_valid_bound(exact):
    problem, bounds, _ = _solved()
    lam = np.array([c.eval_dual() for c in problem._list_of_prepared_constraints])
    rng = np.random.default_rng(3)
    base = certify(problem, *bounds).upper
    for scale in (1e-4, 1e-2, 0.3):
        noisy = lam * (1 + scale * rng.standard_normal(lam.size))
        upper = certify(problem, *bounds, multipliers=noisy).upper
        assert upper >= exact - gap_tolerance(exact)
        assert upper >= base - 1e-9


def test_wrong_multipliers_still_bound_from_above(exact):
    problem, bounds, _ = _solved()
    n = len(problem._list_of_prepared_constraints)
    rng = np.random.default_rng(5)
    for lam in (np.zeros(n), -np.ones(n), rng.exponential(size=n), 1e3 * rng.random(n)):
        assert certify(problem, *bounds, multipliers=lam).upper >= exact


def test_solve_certified_refuses_a_bracket_it_cannot_close(monkeypatch):
    from flbounds.pep import certify as module

    c = C
    build = lambda: round_problem(MU, L, TAU, STEP, c, _pair())  # noqa: E731
    monkeypatch.setattr(module, "_accurate", lambda *args: False)
    res = solve_certified(build, L)
    assert res.status.startswith("certified") and res.gap <= module.bracket_tolerance(res.worst)
    monkeypatch.setattr(module, "bracket_tolerance", lambda upper: -1.0)
    with pytest.raises(pep.PEPSolveError, match="no certified solve"):
        solve_certified(build, L)


def test_bad_input_is_refused():
    problem, bounds, _ = _solved()
    n = len(problem._list_of_prepared_constraints)
    with pytest.raises(ValueError, match="multipliers"):
        certify(problem, *bounds, multipliers=np.zeros(n + 1))
    with pytest.raises(ValueError, match="multipliers"):
        certify(problem, *bounds, multipliers=np.full(n, np.nan))
    with pytest.raises(ValueError, match="point_bounds"):
        certify(problem, {}, bounds[1])
    c = C
    _, funcs, initial = round_problem(MU, L, TAU, STEP, c, _pair())
    with pytest.raises(ValueError, match="L must"):
        leaf_bounds(funcs, initial, 0.0)
    with pytest.raises(ValueError, match="initial"):
        leaf_bounds(funcs, {k: -1.0 for k in initial}, L)
    _, funcs, initial = round_problem(MU, L, TAU, STEP, c, _pair(), form="pepit")
    with pytest.raises(ValueError, match="anchor|neither bounded"):
        leaf_bounds(funcs, initial, L)  # x* free: no function has a bounded point


def test_leaf_bounds_refuse_a_smaller_smoothness_constant():
    c = C
    _, funcs, initial = round_problem(MU, L, TAU, STEP, c, _pair())
    with pytest.raises(ValueError, match="smoothness"):
        leaf_bounds(funcs, initial, L / 2)
