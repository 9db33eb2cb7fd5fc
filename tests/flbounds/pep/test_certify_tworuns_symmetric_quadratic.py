"""Two runs over the quadratic class in the symmetric form (``classes=...``): the reduced
PEP's stationary points (class vectors) pinned at 0 (flbounds.pep.certify_tworuns.
pin_stationary, the proof in its module docstring), then the margin certificate with the
LMI multipliers made PSD. Through ``flbounds.pep.worst_case`` with every solve forced
inaccurate the bound comes out, above the accurate value and within the bracket tolerance;
planted bugs (multipliers scaled by 0.9, the PSD projection skipped) prove numbers below the
worst case, which the real certificate refuses.

Brackets measured with every solve forced inaccurate (FedAvg, tau = 2, step 0.3, p = 0.3 and
0.7 in two classes, mu = 1, L = 2): 4.0e-7 (N = 2), 4.5e-5 (N = 4), 5.0e-7 (N = 6)."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import sdp
from flbounds.pep.certify import bracket_tolerance
from flbounds.pep.certify_lmi import margin_certificate_lmi, solver_lmi_duals, unused_leaves
from flbounds.pep.certify_margin import regularized, value_growth
from flbounds.pep.certify_symmargin import reduced_certifiable
from flbounds.pep.certify_tworuns import pin_stationary
from flbounds.pep.symmetric import build_symmetric

from ._planted import lmis_as_equalities, scaled_margin_lmi
from .test_certify_quadratic import BUMP, L


def _case(n):
    law = Bernoulli(np.r_[np.full(n // 2, 0.3), np.full(n - n // 2, 0.7)])
    return pep.fedavg_round(2, 0.3), pep.Setting(n, 1.0, 2.0, function_class="quadratic"), \
        law, [list(range(n // 2)), list(range(n // 2, n))]


@pytest.mark.parametrize("certified", [False, True])
@pytest.mark.parametrize("n", [2, 6])
def test_forced_inaccurate_two_runs_get_the_pinned_bound(no_store, n, certified):
    round_, setting, law, classes = _case(n)
    assert reduced_certifiable(setting, pep.two_runs())
    accurate = pep.worst_case(round_, setting, pep.two_runs(), law, classes=classes)
    assert accurate.status == "optimal"
    direct = pep.worst_case(round_, setting, pep.two_runs(), law)
    assert direct.worst == pytest.approx(accurate.worst, abs=1e-6)   # the reduction
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.worst_case(round_, setting, pep.two_runs(), law, classes=classes,
                           certified=certified)
    assert bound.status.startswith("certified"), bound.status
    assert bound.worst >= accurate.worst - pep.gap_tolerance(accurate.worst)
    assert bound.worst - accurate.worst <= bracket_tolerance(bound.worst)
    assert bound.gap <= bracket_tolerance(bound.worst)       # measured 4.0e-7, 5.0e-7


def _pinned(round_, setting, law, classes, sigma, equality=False, monkeypatch=None):
    """The reduced two-run PEP as the route solves it (certify_tworuns._pinned), solved by
    the first of sdp.SOLVERS that returns values; with ``equality`` its LMIs sent as
    T(G) = 0 (free multipliers)."""
    if equality:
        lmis_as_equalities(monkeypatch)
    problem, parts = build_symmetric(round_, setting, pep.two_runs(), law, classes=classes)
    metric = problem.list_of_performance_metrics[0]
    funcs = list({id(f): f for f in parts["funcs"]}.values())
    growth = value_growth(funcs, float(setting.L), pin_stationary(problem))
    problem.list_of_performance_metrics = [regularized(metric, sigma,
                                                       unused_leaves(problem, funcs))]
    for _ in sdp.attempts(problem, sdp.SOLVERS, []):     # the route's solvers, in turn
        if problem.G_value is not None:
            return problem, metric, growth
    raise AssertionError("no solver returned values")


def test_scaled_multipliers_prove_less_and_are_refused(no_store):
    round_, setting, law, classes = _case(6)
    value = pep.worst_case(round_, setting, pep.two_runs(), law, classes=classes).worst
    problem, metric, growth = _pinned(round_, setting, law, classes, 1e-6)
    real = margin_certificate_lmi(problem, metric, growth)
    assert value - pep.gap_tolerance(value) <= real.upper <= value + bracket_tolerance(value)
    scaled = scaled_margin_lmi(problem, metric, growth)
    assert scaled.dual < value - 0.02                      # the bug: k read without the checks
    assert scaled.slope > 0 and scaled.upper == np.inf     # the certificate: none


def test_a_skipped_projection_proves_less_and_is_refused(no_store):
    """Two runs of the bump (test_certify_quadratic.py) with mu = 1, L = 4: the difference
    contracts by h (1 - h/L) / L, worst 1/16 at h = L/2; curvatures at mu or L only (the
    multipliers of T(G) = 0) reach (3/16)^2, which the unprojected bound 'proves'."""
    setting = pep.Setting(2, 1.0, L, function_class="quadratic")
    worst = pep.worst_case(BUMP, setting, pep.two_runs(), classes=[[0, 1]])
    assert worst.worst == pytest.approx(1 / 16, abs=1e-6)
    problem, metric, growth = _pinned(BUMP, setting, None, [[0, 1]], 1e-6, equality=True,
                                      monkeypatch=no_store)
    assert any(np.linalg.eigvalsh(0.5 * (z + z.T))[0] < -1e-3
               for z in solver_lmi_duals(problem))
    bug = margin_certificate_lmi(problem, metric, growth, project=False)
    assert bug.upper < (3 / 16) ** 2 + 1e-3 < 1 / 16
    real = margin_certificate_lmi(problem, metric, growth)
    assert real.slope > 0 and real.upper == np.inf           # projected: no margin, refused
