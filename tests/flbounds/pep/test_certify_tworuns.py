"""Certified bounds of two-run measures (flbounds.pep.certify_tworuns, direct form): with
every solve forced inaccurate the bound still comes out, above the accurate value and within
the bracket tolerance; any multipliers give a bound above the value or none; a planted bug
that ignores the second run's coordinates (no exact equalities) certifies a number below the
worst case, which the real certificate refuses; an unbounded SDP gives no number."""

import math

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import engine, sdp
from flbounds.pep.certify import bracket_tolerance
from flbounds.pep.certify_tworuns import pairs_of, solve_two_runs, two_run_bound


def _case(name):
    law = Bernoulli([0.3, 0.5, 0.7])
    if name == "fedavg N = 2":
        return pep.fedavg_round(2, 0.2), pep.Setting(2, 1.0, 2.0), Bernoulli([0.3, 0.7])
    if name == "fedavg N = 3":
        return pep.fedavg_round(3, 0.2), pep.Setting(3, 1.0, 2.0), law
    if name == "smooth":
        return pep.fedavg_round(2, 0.2), pep.Setting(3, 0.0, 2.0, function_class="smooth"), law
    if name == "constants":
        return pep.fedavg_round(2, 0.2), pep.Setting(3, [1.0, 1.0, 0.5], [2.0, 2.0, 4.0]), law
    return pep.fedavg_round(3, 0.2), pep.Setting(3, 1.0, 2.0, identical=True), law


@pytest.mark.parametrize("name", ["fedavg N = 2", "fedavg N = 3", "smooth", "constants",
                                  "identical"])
def test_a_forced_inaccurate_solve_still_gives_a_bound_above_the_value(no_store, name):
    round_, setting, law = _case(name)
    accurate = pep.worst_case(round_, setting, pep.two_runs(), law)
    assert accurate.status == "optimal"
    no_store.setattr(sdp, "accurate", lambda *a: False)
    with pytest.raises(sdp.PEPSolveError):     # the forced acceptance refuses every solve
        sdp.solve(engine.build(round_, setting, pep.two_runs(), law)[0])
    bound = pep.worst_case(round_, setting, pep.two_runs(), law)   # the fallback
    assert bound.status.startswith("certified")
    assert bound.worst >= accurate.worst - pep.gap_tolerance(accurate.worst)
    assert bound.worst - accurate.worst <= bracket_tolerance(bound.worst)
    forced = pep.worst_case(round_, setting, pep.two_runs(), law, certified=True)
    assert forced.worst == pytest.approx(bound.worst, abs=bracket_tolerance(bound.worst))


def _solved(name, sigma=1e-6, pinned=False):
    """The regularised two-run PEP solved, its constraints and multipliers; with ``pinned``
    the second run's leaves are constrained to 0 (every client stationary at its start) and
    those constraints' multipliers are set to 0."""
    round_, setting, law = _case(name)
    problem, parts = engine.build(round_, setting, pep.two_runs(), law)
    x, pairs = pairs_of(parts["runs"], parts["start"])
    metric = problem.list_of_performance_metrics[0]
    spread = x ** 2
    for a, b in pairs:
        spread = spread + (a - b) ** 2
    problem.list_of_performance_metrics = [metric + sigma * spread]
    added = []
    if pinned:
        for _, b in pairs:
            added.append(b ** 2 <= 0)
            problem.add_constraint(added[-1])
    problem.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0)
    constraints = [c for c in problem._list_of_prepared_constraints
                   if id(problem.objective) not in {id(k) for k in
                                                    c.expression.decomposition_dict}]
    ids = {id(c) for c in added}
    lam = np.array([0.0 if id(c) in ids else float(c.eval_dual()) for c in constraints])
    return problem, metric, x, pairs, constraints, lam


@pytest.mark.parametrize("factor", [0.0, 0.5, 0.9, 1.0, 1.1])
def test_any_multipliers_give_a_bound_above_the_value_or_none(no_store, factor):
    round_, setting, law = _case("fedavg N = 2")
    value = pep.worst_case(round_, setting, pep.two_runs(), law).worst
    problem, metric, x, pairs, _, lam = _solved("fedavg N = 2")
    upper, _dual, slope = two_run_bound(problem, metric, x, pairs, factor * lam)
    assert upper >= value - pep.gap_tolerance(value)
    if factor == 1.0:
        assert upper - value <= bracket_tolerance(upper)
    if factor == 0.0:                   # the objective alone proves nothing
        assert math.isinf(upper)


def test_the_checks_are_what_keep_the_bound_valid(no_store):
    """Planted bug: the multipliers scaled by 0.9 certified without the checks (the dual value
    k whatever the second run's coefficients and the slope) prove 0.9 times the rate, below
    the worst case; the real certificate refuses them (the equalities cannot be made exact,
    and without them the first run's block has a positive slope). For this round no
    multipliers prove less than the worst case from the first run's block with a margin: its
    worst case is that of clients all stationary at the second run's start (checked), so the
    equalities guard against rounds where the two differ."""
    round_, setting, law = _case("fedavg N = 2")
    value = pep.worst_case(round_, setting, pep.two_runs(), law).worst
    problem, metric, x, pairs, _, lam = _solved("fedavg N = 2")
    unchecked, dual, slope = two_run_bound(problem, metric, x, pairs, 0.9 * lam, exact=False)
    assert dual < value - pep.gap_tolerance(value) and slope > 0 and math.isinf(unchecked)
    real, _, _ = two_run_bound(problem, metric, x, pairs, 0.9 * lam)
    assert math.isinf(real)
    problem, metric, x, pairs, _, lam = _solved("fedavg N = 2", pinned=True)
    pinned, _, _ = two_run_bound(problem, metric, x, pairs, lam, exact=False)
    assert pinned >= value - pep.gap_tolerance(value)


def test_an_unbounded_sdp_gives_no_number(no_store):
    """SCAFFOLD's two runs with free control variates: the SDP itself is unbounded."""
    law = Bernoulli([0.5, 0.5])

    def build():
        return engine.build(pep.scaffold_round(2, 0.1, 2), pep.Setting(2, 1.0, 2.0),
                            pep.two_runs(), law)

    with pytest.raises(sdp.PEPSolveError):
        solve_two_runs(build, sigmas=(1e-6,))


def test_bad_input_is_named():
    round_, setting, law = _case("fedavg N = 2")

    def build():
        return engine.build(round_, setting, pep.two_runs(), law)

    for bad in [(), (0.0,), (float("nan"),)]:
        with pytest.raises(ValueError, match="sigmas"):
            solve_two_runs(build, sigmas=bad)
    with pytest.raises(ValueError, match="runs"):
        solve_two_runs(lambda: engine.build(round_, setting, pep.distance(), law))
    quadratic = pep.Setting(2, 1.0, 2.0, function_class="quadratic")
    assert engine.certifiable(quadratic, pep.two_runs())     # routed to the pinned form


@pytest.mark.parametrize("name", ["fedavg", "smooth"])
def test_the_symmetric_form_is_certified_too(no_store, name):
    """Two Bernoulli classes of 3 clients: the reduced PEP's runs paired leaf by leaf."""
    law = Bernoulli(np.r_[np.full(3, 0.3), np.full(3, 0.7)])
    groups = [[0, 1, 2], [3, 4, 5]]
    round_, setting = pep.fedavg_round(3, 0.2), pep.Setting(6, 1.0, 2.0)
    if name == "smooth":
        round_, setting = pep.fedavg_round(2, 0.2), pep.Setting(6, 0.0, 2.0,
                                                                function_class="smooth")
    accurate = pep.worst_case(round_, setting, pep.two_runs(), law, classes=groups)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.worst_case(round_, setting, pep.two_runs(), law, classes=groups)
    assert bound.status.startswith("certified")
    assert accurate.worst - pep.gap_tolerance(accurate.worst) <= bound.worst \
        <= accurate.worst + bracket_tolerance(bound.worst)
