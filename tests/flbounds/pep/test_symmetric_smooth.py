"""The L-smooth non-convex class in the symmetric form (flbounds.pep.symmetric): the reduced
SDP against the direct one at N = 2..8 (FedAvg, FOCUS; a shared stationary point, a
heterogeneity budget, two runs), classes of different L, clients differing only in the
ignored mu sharing a class, and a planted bug (the convex class declared instead)."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli, UniformWithoutReplacement
from flbounds.pep import engine, sdp
from flbounds.pep.symmetric import build_symmetric


def _agree(direct, reduced):
    """The two forms state the same SDP; each value is accepted within ``gap_tolerance``
    (1e-6 relative) of the exact optimum, so they agree within the sum of the two."""
    tol = pep.gap_tolerance(direct.worst) + pep.gap_tolerance(reduced.worst)
    assert abs(direct.worst - reduced.worst) <= tol, (direct.worst, reduced.worst)


def _solved(problem):
    return sdp.solve(problem, reuse=False)


def _agree_solves(direct, reduced):
    """Two accepted solves (:class:`~flbounds.pep.sdp.SolveInfo`) of the same SDP. An
    accepted dual value is a bound up to its dual residual (the multipliers prove it to that
    much; accepted up to 1e-5 relative, :data:`~flbounds.pep.sdp.RESIDUAL_REL`) and within
    its gap of the primal value, so each is within ``gap_tolerance + dual_residual`` of the
    optimum. Measured on FOCUS in the smooth class: the direct solves at N = 6, 7 leave a
    residual of 9e-6 (values 3e-6 and 8e-6 below the symmetric ones, whose residuals are
    below 3e-7 and whose certified brackets are 1e-6 wide); elsewhere both are near 1e-7, and
    the check is the convex classes' 1e-6."""
    tol = pep.gap_tolerance(direct.worst) + pep.gap_tolerance(reduced.worst) \
        + direct.dual_residual + reduced.dual_residual
    assert abs(direct.worst - reduced.worst) <= tol, (direct, reduced)


def _classes(n):
    """Clients 0..h-1 with p = 0.3, the rest with p = 0.7 (h = n // 2)."""
    h = max(1, n // 2)
    return [list(range(h)), list(range(h, n))], np.r_[np.full(h, 0.3), np.full(n - h, 0.7)]


def _case(algorithm, n):
    groups, p = _classes(n)
    setting = pep.Setting(n, 0.0, 2.0, function_class="smooth", common_minimizer=True)
    if algorithm == "fedavg":
        return pep.fedavg_round(3, 0.2), setting, pep.distance(), Bernoulli(p), groups
    # FOCUS's server sums the N trackers: the step and the consensus weight scale as 1/N
    return pep.focus_round(2, 0.1 / n), setting, pep.focus_lyapunov(1.0 / n), Bernoulli(p), \
        groups


@pytest.mark.parametrize("n", range(2, 9))
@pytest.mark.parametrize("algorithm", ["fedavg", "focus"])
def test_the_smooth_class_equals_the_direct_sdp(algorithm, n):
    round_, setting, measure, law, groups = _case(algorithm, n)
    direct = _solved(engine.build(round_, setting, measure, law)[0])
    reduced = _solved(build_symmetric(round_, setting, measure, law, classes=groups)[0])
    _agree_solves(direct, reduced)


#: V = ||x - x*||^2 + sum_i ||grad f_i(x*)||^2, clients not sharing x* (their gradients there
#: are pure deviations, carried by the deviation blocks)
HETEROGENEITY = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                             + sum(g ** 2 for g in star.gradients),
                             "||x - x*||^2 + sum_i ||grad f_i(x*)||^2")


@pytest.mark.parametrize("n", range(2, 9))
@pytest.mark.parametrize("measure", [HETEROGENEITY, pep.two_runs()],
                         ids=["heterogeneity", "two runs"])
def test_the_smooth_class_without_a_shared_stationary_point(measure, n):
    groups, p = _classes(n)
    setting = pep.Setting(n, 0.0, 2.0, function_class="smooth")
    round_ = pep.fedavg_round(2, 0.2)
    _agree_solves(_solved(engine.build(round_, setting, measure, Bernoulli(p))[0]),
                  _solved(build_symmetric(round_, setting, measure, Bernoulli(p),
                                          classes=groups)[0]))


@pytest.mark.parametrize("n", [2, 4, 6])
def test_smooth_classes_of_different_smoothness(n):
    """Class 0 L = 1, class 1 L = 4 (and mu given per client, ignored by the class)."""
    groups, p = _classes(n)
    h = len(groups[0])
    L = np.r_[np.full(h, 1.0), np.full(n - h, 4.0)]
    setting = pep.Setting(n, 0.0, L, function_class="smooth", common_minimizer=True)
    round_ = pep.fedavg_round(2, 0.15)
    direct = pep.worst_case(round_, setting, pep.distance(), Bernoulli(p))
    reduced = pep.worst_case(round_, setting, pep.distance(), Bernoulli(p), classes=groups)
    _agree(direct, reduced)
    assert reduced.params["class_L"] == [1.0, 4.0]


def test_mu_does_not_tell_smooth_clients_apart():
    """The smooth class ignores mu: clients differing only in mu are interchangeable (the
    convex class refuses the same classes, naming them)."""
    n, groups = 4, [[0, 1, 2, 3]]
    mu = (0.0, 0.5, 1.0, 1.5)
    law = UniformWithoutReplacement(n, 2)
    smooth = pep.Setting(n, mu, 2.0, function_class="smooth", common_minimizer=True)
    round_ = pep.fedavg_round(2, 0.2)
    _agree(pep.worst_case(round_, smooth, pep.distance(), law),
           pep.worst_case(round_, smooth, pep.distance(), law, classes=groups))
    with pytest.raises(ValueError, match="classes"):
        pep.worst_case(round_, pep.Setting(n, mu, 2.0, common_minimizer=True), pep.distance(),
                       law, classes=groups)


def test_the_public_path_reports_the_class():
    round_, setting, measure, law, groups = _case("focus", 4)
    res = pep.worst_case(round_, setting, measure, law, classes=groups)
    assert res.params["function_class"] == "smooth" and res.params["class_L"] == [2.0, 2.0]


def test_the_class_is_seen_by_the_comparison():
    """A planted bug, the representatives declared convex (mu = 0) instead of smooth, moves
    the value far beyond the comparison's tolerance: non-convex clients can push a local
    step away from x* (1 + eta L per step), convex ones cannot (FedAvg stays below 1)."""
    round_, setting, measure, law, groups = _case("fedavg", 4)
    smooth = pep.worst_case(round_, setting, measure, law, classes=groups)
    convex = pep.worst_case(round_, pep.Setting(4, 0.0, 2.0, common_minimizer=True), measure,
                            law, classes=groups)
    assert convex.worst <= 1 + pep.gap_tolerance(1.0)
    assert smooth.worst - convex.worst > 100 * pep.gap_tolerance(smooth.worst)
