"""Margin-certified bounds of symmetric solves (flbounds.pep.certify_symmargin): with every
solve forced inaccurate the bound still comes out and lies above the accurate value where no
a-priori bound exists (a minimizer the clients do not share under a heterogeneity budget,
the smooth class, counts, a proximal step, a measure without bounds); any multipliers give a
bound above the value or none; an unbounded feasible set gives no number; bad input names
its argument."""

import math

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli, WithReplacement
from flbounds.pep import sdp
from flbounds.pep.certify import bracket_tolerance
from flbounds.pep.certify_margin import margin_certificate, regularized, value_growth
from flbounds.pep.certify_symmargin import certified_symmetric_margin
from flbounds.pep.symmetric import build_symmetric

#: V = ||x - x*||^2 + sum_i ||grad f_i(x*)||^2: bounds every Gram coordinate, but not through
#: Measure.bounds (clients not sharing x*)
HETEROGENEITY = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                             + sum(g ** 2 for g in star.gradients),
                             "||x - x*||^2 + sum_i ||grad f_i(x*)||^2")
GROUPS = [[0, 1, 2], [3, 4, 5]]
PROX = pep.Round("prox", pep.local_prox(0.3), {"delta": "uniform"}, pep.server_model_step())


def _case(name):
    law = Bernoulli(np.r_[np.full(3, 0.3), np.full(3, 0.7)])
    round_, setting, measure = pep.fedavg_round(3, 0.2), pep.Setting(6, 1.0, 2.0), HETEROGENEITY
    if name == "smooth":
        round_ = pep.fedavg_round(2, 0.2)
        setting = pep.Setting(6, 0.0, 2.0, function_class="smooth")
    elif name == "constants":
        setting = pep.Setting(6, np.r_[np.full(3, 1.0), np.full(3, 0.5)],
                              np.r_[np.full(3, 2.0), np.full(3, 4.0)])
    elif name == "counts":          # 4 draws with replacement, q constant within each class
        law = WithReplacement(np.r_[np.full(3, 1.0), np.full(3, 3.0)] / 12, 4)
    elif name == "prox":
        round_ = PROX
    elif name == "prox shared x*":  # a-priori bounds refused (round), the margin instead
        round_, setting, measure = PROX, pep.Setting(6, 1.0, 2.0, common_minimizer=True), \
            pep.distance()
    elif name == "no bounds":       # shared x*, a measure without Measure.bounds
        setting = pep.Setting(6, 1.0, 2.0, common_minimizer=True)
        measure = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2, "no bounds")
    return round_, setting, measure, law


@pytest.mark.parametrize("name", ["fedavg", "smooth", "constants", "counts", "prox",
                                  "prox shared x*", "no bounds"])
def test_a_forced_inaccurate_solve_still_gives_a_bound_above_the_value(no_store, name):
    round_, setting, measure, law = _case(name)
    accurate = pep.worst_case(round_, setting, measure, law, classes=GROUPS)
    assert accurate.status == "optimal"
    no_store.setattr(sdp, "accurate", lambda *a: False)
    with pytest.raises(sdp.PEPSolveError):     # the forced acceptance refuses every solve
        sdp.solve(build_symmetric(round_, setting, measure, law, classes=GROUPS)[0])
    bound = pep.worst_case(round_, setting, measure, law, classes=GROUPS)   # the fallback
    assert bound.status.startswith("certified")
    assert bound.worst >= accurate.worst - pep.gap_tolerance(accurate.worst)
    assert bound.worst - accurate.worst <= bracket_tolerance(bound.worst)
    forced = pep.worst_case(round_, setting, measure, law, classes=GROUPS, certified=True)
    assert forced.worst == pytest.approx(bound.worst, abs=bracket_tolerance(bound.worst))


@pytest.mark.parametrize("factor", [0.0, 0.5, 0.9, 1.0, 1.1])
def test_any_multipliers_give_a_bound_above_the_value_or_none(no_store, factor):
    """Scaled or zeroed, the multipliers only loosen the bound or lose the margin (no bound,
    never one below the worst case)."""
    round_, setting, measure, law = _case("fedavg")
    value = pep.worst_case(round_, setting, measure, law, classes=GROUPS).worst
    problem, parts = build_symmetric(round_, setting, measure, law, classes=GROUPS)
    metric = problem.list_of_performance_metrics[0]
    growth = value_growth(parts["funcs"], 2.0, {})
    problem.list_of_performance_metrics = [regularized(metric, 1e-7)]
    problem.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0)
    lam = np.array([float(c.eval_dual()) for c in problem._list_of_prepared_constraints])
    cert = margin_certificate(problem, metric, growth, factor * lam)
    assert cert.upper >= value - pep.gap_tolerance(value)
    if factor == 1.0:
        assert cert.upper - value <= bracket_tolerance(cert.upper)
    if factor == 0.0:               # the objective alone has no margin
        assert math.isinf(cert.upper) and cert.slope > 0


def test_the_margin_check_is_what_keeps_the_bound_valid(no_store):
    """Planted bug: the multipliers of the 1.1 scaling certified without the slope check
    (upper = k + leftovers whatever lambda_max(M)) fall below the worst case; the real
    certificate refuses them (slope > 0)."""
    round_, setting, measure, law = _case("fedavg")
    value = pep.worst_case(round_, setting, measure, law, classes=GROUPS).worst
    problem, parts = build_symmetric(round_, setting, measure, law, classes=GROUPS)
    metric = problem.list_of_performance_metrics[0]
    growth = value_growth(parts["funcs"], 2.0, {})
    problem.list_of_performance_metrics = [regularized(metric, 1e-7)]
    problem.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0)
    lam = np.array([float(c.eval_dual()) for c in problem._list_of_prepared_constraints])
    initial = [k for k, c in enumerate(problem._list_of_prepared_constraints)
               if 1 in c.expression.decomposition_dict]
    assert len(initial) == 1        # V(start) <= 1: its multiplier is the rate
    lam[initial[0]] *= 0.5
    cert = margin_certificate(problem, metric, growth, lam)
    assert cert.slope > 0 and math.isinf(cert.upper)
    assert cert.dual + cert.value_leftover < value - pep.gap_tolerance(value)


@pytest.mark.parametrize("name", ["fedavg distance", "scaffold"])
def test_an_unbounded_feasible_set_gives_no_number(no_store, name):
    """V = ||x - x*||^2 with clients not sharing x* (their gradients at x* are free), and
    SCAFFOLD's V with x* not shared (c_i and grad f_i(x*) free together): no multipliers have
    a margin, since a certificate would prove the feasible set bounded (module docstring)."""
    _, _, _, law = _case("fedavg")
    setting = pep.Setting(6, 1.0, 2.0)
    round_, measure = pep.fedavg_round(3, 0.2), pep.distance()
    if name == "scaffold":
        round_, measure = pep.scaffold_round(2, 0.1, 6), pep.scaffold_lyapunov(1.0)

    def build():
        return build_symmetric(round_, setting, measure, law, classes=GROUPS)

    with pytest.raises(sdp.PEPSolveError):
        certified_symmetric_margin(build, setting, measure, sigmas=(1e-7,))


def test_where_no_certificate_applies_the_argument_is_named():
    round_, setting, _, law = _case("fedavg")
    with pytest.raises(ValueError, match="measure"):         # two runs: certify_tworuns
        certified_symmetric_margin(lambda: None, setting, pep.two_runs())
    # two runs over the quadratic class: pinned (test_certify_tworuns_symmetric_quadratic.py)
    identical = pep.Setting(6, 1.0, 2.0, identical=True)
    with pytest.raises(ValueError, match="setting"):         # (quadratic: test_certify_lmi)
        certified_symmetric_margin(lambda: None, identical, HETEROGENEITY)

    def build():
        return build_symmetric(round_, setting, HETEROGENEITY, law, classes=GROUPS)

    for bad in [(), (0.0,), (float("nan"),)]:
        with pytest.raises(ValueError, match="sigmas"):
            certified_symmetric_margin(build, setting, HETEROGENEITY, sigmas=bad)
