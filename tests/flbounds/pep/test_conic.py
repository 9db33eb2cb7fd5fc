"""The direct Clarabel path (flbounds.pep.conic): the conic form is the one cvxpy sends to
Clarabel, its solves agree with the cvxpy ones, its multipliers certify, and what it cannot
write (extra LMIs) still goes through cvxpy."""

import numpy as np
import pytest

import flbounds.pep.sdp as sdp
from benchmarks._focus_reference import round_problem
from flbounds.participation import Bernoulli
from flbounds.pep.certify import certify, leaf_bounds
from flbounds.pep.conic import NotConic, conic_form, solve_clarabel
from flbounds.pep.moments import participation_moments

MU, L, TAU, STEP, C = 1.0, 2.0, 2, 0.01, 0.36
VIA_CVXPY = (("CLARABEL", {"interface": "cvxpy"}),)


def _focus(form="common", function_class="smooth-strongly-convex"):
    pair = participation_moments(Bernoulli(np.array([0.5, 0.8])), 2).pair
    return round_problem(MU, L, TAU, STEP, C, pair, function_class=function_class, form=form)


def _cvxpy_data(problem):
    """The data cvxpy hands to Clarabel for ``problem`` (PEPit's cvxpy wrapper, unsolved)."""
    from PEPit.wrappers.cvxpy_wrapper import CvxpyWrapper

    if problem.objective is None:
        problem._prepare_constraints(verbose=0)
    wrapper = CvxpyWrapper(verbose=0)
    wrapper.set_main_variables()
    for c in problem._list_of_prepared_constraints:
        if c.activated:
            wrapper.send_constraint_to_solver(c)
    prob = wrapper.generate_problem(problem.objective)
    data, _, _ = prob.get_problem_data(solver="CLARABEL")
    return data


@pytest.mark.parametrize("form", ["common", "pepit"])
def test_the_conic_form_is_the_data_cvxpy_sends_to_clarabel(form):
    problem = _focus(form)[0]
    data = _cvxpy_data(problem)
    mine = conic_form(problem)
    assert data["dims"].zero == mine.n_eq and data["dims"].nonneg == mine.n_in
    assert list(data["dims"].psd) == [mine.n_gram]
    assert np.array_equal(data["c"], mine.q)
    assert np.array_equal(data["b"], mine.b)
    assert (abs(data["A"] - mine.A)).max() == 0


@pytest.mark.parametrize("options", [{}, sdp.SOLVERS[1][1]])
@pytest.mark.parametrize("form", ["common", "pepit", "values"])
def test_direct_and_cvxpy_solves_are_the_same_solve(form, options):
    """Same data, same solver: the same status, multipliers, Gram matrix and dual value."""
    solved = []
    for interface in ("direct", "cvxpy"):
        problem = _focus(form)[0]
        failures = []
        (_, dual, status, _), = list(sdp.attempts(
            problem, (("CLARABEL", {**options, "interface": interface}),), failures))
        assert not failures
        lam = np.array([c.eval_dual() for c in problem._list_of_prepared_constraints])
        solved.append((dual, status, lam, problem.G_value, problem.residual,
                       problem.wrapper.objective.value, problem.wrapper_name))
    (dual, status, lam, gram, slack, primal, name), ref = solved
    assert (name, ref[6]) == ("clarabel", "cvxpy")
    assert status == ref[1]
    assert np.array_equal(lam, ref[2]) and np.array_equal(gram, ref[3])
    assert np.array_equal(slack, ref[4]) and primal == ref[5]
    assert dual == ref[0]


def _reference_residual(problem):
    """The dual residual through PEPit's expressions (the formula of sdp.dual_residual)."""
    from PEPit import Point
    from PEPit.tools.dict_operations import prune_dict, symmetrize_dict

    leaves = Point.list_of_leaf_points
    slack = np.asarray(problem.residual, dtype=float)
    combination = -np.dot(leaves, np.dot(slack, leaves))
    negative = 0.0
    for constraint in problem._list_of_prepared_constraints:
        lam = float(constraint.eval_dual())
        combination = combination + lam * constraint.expression
        if constraint.equality_or_inequality == "inequality" and lam < 0:
            negative += -lam * abs(float(constraint.eval()))
    left = prune_dict(symmetrize_dict((problem.objective - combination).decomposition_dict))

    def value(key):
        return float(key[0].eval() @ key[1].eval()) if isinstance(key, tuple) else \
            float(key.eval())

    # the constant's key is the int 1 (an Expression key compared with 1 gives a Constraint)
    leftover = sum(abs(c) * abs(value(k)) for k, c in left.items()
                   if not isinstance(k, int | float))
    min_eig = float(np.min(np.linalg.eigvalsh(slack)))
    return leftover + max(0.0, -min_eig) * float(np.trace(problem.G_value)) + negative


@pytest.mark.parametrize("solvers", [sdp.SOLVERS[:1], VIA_CVXPY])
def test_the_residual_and_dual_value_are_pepits(solvers):
    """Both paths: the residual from the conic form equals PEPit's expression arithmetic,
    and the direct path's dual value is PEPit's proof reconstruction."""
    problem = _focus("pepit")[0]
    failures = []
    (_, dual, status, _), = list(sdp.attempts(problem, solvers, failures))
    assert status in ("optimal", "optimal_inaccurate") and not failures
    assert sdp.dual_residual(problem) == pytest.approx(_reference_residual(problem),
                                                       rel=1e-9, abs=1e-14)
    assert dual == pytest.approx(problem.check_feasibility(problem.objective.eval(), 0),
                                 rel=1e-13, abs=1e-15)


def test_direct_multipliers_certify():
    """The certificate rebuilt from the direct solve's multipliers brackets the value."""
    problem, funcs, initial = _focus("common")
    dual = solve_clarabel(problem)
    cert = certify(problem, *leaf_bounds(funcs, initial, L))
    assert cert.upper >= dual - 1e-9
    assert cert.upper - cert.primal <= 1e-5
    assert float(problem.wrapper.objective.value) == pytest.approx(cert.primal, abs=1e-7)


def test_an_unfinished_direct_solve_is_refused():
    problem = _focus("common")[0]
    with pytest.raises(sdp.PEPSolveError, match="no accurate solve"):
        sdp.solve(problem, solvers=(("CLARABEL", {"max_iter": 2}),), reuse=False)


def test_extra_lmis_go_through_cvxpy():
    problem = _focus("pepit", function_class="quadratic")[0]
    with pytest.raises(NotConic):
        conic_form(problem)
    info = sdp.solve(problem, solvers=sdp.SOLVERS[:2], reuse=False)
    assert info.status == "optimal" and problem.wrapper_name == "cvxpy"


def test_an_unknown_clarabel_setting_is_refused():
    problem = _focus("common")[0]
    with pytest.raises(ValueError, match="no setting 'tol_nothing'"):
        solve_clarabel(problem, {"tol_nothing": 1.0})
