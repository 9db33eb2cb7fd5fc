"""Certified bounds of the quadratic class with mu = 0 in the symmetric form (``classes=...``;
each class declared about its representative's first point, flbounds.pep.certify_quadratic):
the margin certificate (flbounds.pep.certify_symmargin) with the LMI multipliers made PSD
(flbounds.pep.certify_lmi). Through ``flbounds.pep.worst_case`` with every solve forced
inaccurate the bound comes out, above the accurate value and within the bracket tolerance, at
N = 6 and N = 1000 in two classes; planted bugs (multipliers scaled by 0.9, the PSD
projection skipped, a misroute that pins the stationary class vectors of PEPit's class as two
runs may) prove numbers below the worst case, which the certificate refuses or the bracket
check catches. A class with mu = 0 beside one with mu = 0.5 (and another L) is covered too.

Brackets measured with every solve forced inaccurate (two classes, p = 0.3 and 0.7, L = 2):
FedAvg tau = 2, step 1.2, shared minimizer: 2.4e-6 (N = 6 and 1000); FedAvg tau = 3, step
0.2, heterogeneity budget: 5.2e-8 (N = 6), 1.5e-7 (N = 1000); FOCUS tau = 2, step 0.5/N:
2.4e-6 (N = 6), 2.3e-6 (N = 1000); 0.1-0.3 s CPU each."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.pep import sdp, symmetric
from flbounds.pep.certify import bracket_tolerance
from flbounds.pep.certify_lmi import margin_certificate_lmi, solver_lmi_duals, unused_leaves
from flbounds.pep.certify_margin import regularized, value_growth
from flbounds.pep.certify_symmargin import reduced_certifiable
from flbounds.pep.certify_symmetric import certifiable_symmetric
from flbounds.pep.certify_tworuns import pin_stationary
from flbounds.pep.symmetric import build_symmetric

from ._planted import assert_bracketed, forced, lmis_as_equalities, scaled_margin_lmi
from .test_certify_quadratic import BUMP, L
from .test_symmetric_quadratic import CASES, case, classes


@pytest.mark.parametrize("certified", [False, True])
@pytest.mark.parametrize("n", [6, 1000])
@pytest.mark.parametrize("name", CASES)
def test_forced_inaccurate_mu_zero_gets_the_margin_bound(no_store, name, n, certified):
    round_, setting, measure = case(name, n)
    groups, law = classes(n, 2)
    assert reduced_certifiable(setting, measure)
    assert not certifiable_symmetric(setting, measure)      # the a-priori route keeps mu > 0
    accurate = pep.worst_case(round_, setting, measure, law, classes=groups)
    forced(no_store)
    bound = pep.worst_case(round_, setting, measure, law, classes=groups, certified=certified)
    assert_bracketed(bound, accurate)
    assert bound.gap <= bracket_tolerance(bound.worst)
    assert bound.gram_size == accurate.gram_size             # the same reduced SDP


def _regularized(round_, setting, measure, law, groups, sigma, equality=False,
                 monkeypatch=None):
    """The reduced PEP as the margin route solves it (certify_symmargin), objective
    ``metric + sigma tr G``, solved by the first of sdp.SOLVERS that returns values; with
    ``equality`` its LMIs sent as T(G) = 0 (free multipliers)."""
    if equality:
        lmis_as_equalities(monkeypatch)
    problem, parts = build_symmetric(round_, setting, measure, law, classes=groups)
    metric = problem.list_of_performance_metrics[0]
    funcs = parts["funcs"]
    growth = value_growth(funcs, float(max(f.L for f in funcs)), {})
    problem.list_of_performance_metrics = [regularized(metric, sigma,
                                                       unused_leaves(problem, funcs))]
    for _ in sdp.attempts(problem, sdp.SOLVERS, []):
        if problem.G_value is not None:
            return problem, metric, growth
    raise AssertionError("no solver returned values")


def test_scaled_multipliers_prove_less_and_are_refused(no_store):
    round_, setting, measure = case("fedavg budget", 6)
    groups, law = classes(6, 2)
    value = pep.worst_case(round_, setting, measure, law, classes=groups).worst
    problem, metric, growth = _regularized(round_, setting, measure, law, groups, 1e-6)
    real = margin_certificate_lmi(problem, metric, growth)
    assert value - pep.gap_tolerance(value) <= real.upper <= value + bracket_tolerance(value)
    scaled = scaled_margin_lmi(problem, metric, growth)
    assert scaled.dual < value - 0.05                      # the bug: k read without the checks
    assert scaled.slope > 0 and scaled.upper == np.inf     # the certificate: none


def test_a_skipped_projection_proves_less_and_is_refused(no_store):
    """The bump (test_certify_quadratic.py) on two clients in one class, mu = 0, L = 4: worst
    case 1/16 at curvature L/2; the multipliers of T(G) = 0 (curvatures 0 or L only) prove
    less without the projection, and nothing (no margin) with it."""
    setting = pep.Setting(2, 0.0, L, function_class="quadratic", common_minimizer=True)
    worst = pep.worst_case(BUMP, setting, pep.distance(), classes=[[0, 1]])
    assert worst.worst == pytest.approx(1 / 16, abs=1e-6)
    problem, metric, growth = _regularized(BUMP, setting, pep.distance(), None, [[0, 1]],
                                           1e-6, equality=True, monkeypatch=no_store)
    assert any(np.linalg.eigvalsh(0.5 * (z + z.T))[0] < -1e-3
               for z in solver_lmi_duals(problem))       # the multipliers are not PSD
    bug = margin_certificate_lmi(problem, metric, growth, project=False)
    assert bug.upper < 0.01 < 1 / 16
    real = margin_certificate_lmi(problem, metric, growth)
    assert real.slope > 0 and real.upper == np.inf           # projected: no margin, refused


def test_a_misroute_that_pins_pepit_stationary_vectors_is_caught(no_store):
    """Planted misroute: the one-run PEP over PEPit's class with its stationary class vectors
    pinned at 0 (sound for two runs only, certify_tworuns) forces grad f_i(x*) = 0 under a
    heterogeneity budget: a number below the worst case, which the bracket check rejects."""
    round_, setting, measure = case("fedavg budget", 6)
    groups, law = classes(6, 2)
    accurate = pep.worst_case(round_, setting, measure, law, classes=groups)
    real = symmetric._declare
    no_store.setattr(symmetric, "_declare", lambda problem, cls, constants, space, c, about:
                     real(problem, cls, constants, space, c, about=False))
    problem, _ = build_symmetric(round_, setting, measure, law, classes=groups)
    pin_stationary(problem)
    planted = sdp.solve(problem, reuse=False)
    assert planted.worst < accurate.worst - 0.05       # below the worst case: the check
    assert not planted.worst >= accurate.worst - pep.gap_tolerance(accurate.worst)  # fails


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "budget"])
def test_a_flat_class_beside_a_strongly_convex_one(no_store, shared):
    """Classes of (mu, L) = (0, 2) and (0.5, 4), N = 4: the flat class about its first point,
    the other PEPit's (its stationary vector replaced, then unused by the margin); the reduced
    SDP equals the direct one, and forced inaccurate the margin bound brackets it (measured
    4.8e-6 shared, FedAvg tau = 2, step 0.6; 3.3e-7 budget, tau = 3, step 0.2)."""
    groups, law = classes(4, 2)
    mu, ell = np.r_[0.0, 0.0, 0.5, 0.5], np.r_[2.0, 2.0, 4.0, 4.0]
    if shared:
        round_, measure = pep.fedavg_round(2, 0.6), pep.distance()
    else:
        round_, _, measure = case("fedavg budget", 4)
    setting = pep.Setting(4, mu, ell, function_class="quadratic", common_minimizer=shared)
    direct = pep.worst_case(round_, setting, measure, law)
    accurate = pep.worst_case(round_, setting, measure, law, classes=groups)
    assert accurate.params["class_mu"] == [0.0, 0.5]
    tol = pep.gap_tolerance(direct.worst) + pep.gap_tolerance(accurate.worst)
    assert abs(direct.worst - accurate.worst) <= tol
    forced(no_store)
    bound = pep.worst_case(round_, setting, measure, law, classes=groups, certified=True)
    assert_bracketed(bound, accurate)
    assert bound.gap <= bracket_tolerance(bound.worst)
