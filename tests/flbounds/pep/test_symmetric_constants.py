"""Symmetry classes of different function classes (mu_c, L_c): the reduced SDP against the
direct one at N = 2..6 (FedAvg, FOCUS, an exact proximal step), planted bugs in the class
constants, bad input, and the witness rebuilt with each class's constants and replayed at
N = 100."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import engine, symmetric
from flbounds.pep.symmetric_witness import fedavg_symmetric_witness
from flbounds.pep.witness import witness_tolerance

#: class 0: (mu, L) = (1, 2); class 1: (0.5, 4)
CONSTANTS = ((1.0, 2.0), (0.5, 4.0))
PROX = pep.Round("prox", pep.local_prox(0.3), {"delta": "uniform"}, pep.server_model_step())


def _tol(a, b):
    """Each value is accepted within ``gap_tolerance`` of the exact optimum of the same SDP."""
    return pep.gap_tolerance(a) + pep.gap_tolerance(b)


def _case(algorithm, n):
    """Clients 0..h-1 (p = 0.3, constants CONSTANTS[0]) and h..n-1 (p = 0.7, CONSTANTS[1])."""
    h = max(1, n // 2)
    groups = [list(range(h)), list(range(h, n))]
    p = np.r_[np.full(h, 0.3), np.full(n - h, 0.7)]
    mu = np.r_[np.full(h, CONSTANTS[0][0]), np.full(n - h, CONSTANTS[1][0])]
    L = np.r_[np.full(h, CONSTANTS[0][1]), np.full(n - h, CONSTANTS[1][1])]
    setting = pep.Setting(n, mu, L, common_minimizer=True)
    if algorithm == "fedavg":
        return pep.fedavg_round(3, 0.2), setting, pep.distance(), Bernoulli(p), groups
    if algorithm == "prox":     # one exact proximal step per client (local_prox), mean over S
        return PROX, setting, pep.distance(), Bernoulli(p), groups
    # FOCUS's server sums the N trackers: the step and the consensus weight scale as 1/N
    return pep.focus_round(2, 0.1 / n), setting, pep.focus_lyapunov(1.0 / n), Bernoulli(p), \
        groups


@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize("algorithm", ["fedavg", "focus", "prox"])
def test_classes_of_different_constants_equal_the_direct_sdp(algorithm, n):
    round_, setting, measure, law, groups = _case(algorithm, n)
    direct = pep.worst_case(round_, setting, measure, law)
    reduced = pep.worst_case(round_, setting, measure, law, classes=groups)
    assert abs(direct.worst - reduced.worst) <= _tol(direct.worst, reduced.worst), \
        (direct.worst, reduced.worst)
    assert reduced.params["class_mu"] == [1.0, 0.5] and reduced.params["class_L"] == [2, 4]


@pytest.mark.parametrize("bug", ["swapped", "first for both", "second for both"])
@pytest.mark.parametrize("algorithm", ["fedavg", "focus", "prox"])
def test_wrong_class_constants_are_caught(monkeypatch, algorithm, bug):
    """Planted bugs in the representatives' constants move the value beyond the tolerance
    of the comparison above, so that test can fail."""
    round_, setting, measure, law, groups = _case(algorithm, 4)
    direct = pep.worst_case(round_, setting, measure, law)
    right = symmetric.class_constants
    wrong = {"swapped": lambda s, g: right(s, g)[::-1],
             "first for both": lambda s, g: [right(s, g)[0]] * 2,
             "second for both": lambda s, g: [right(s, g)[1]] * 2}[bug]
    monkeypatch.setattr(symmetric, "class_constants", wrong)
    planted = pep.worst_case(round_, setting, measure, law, classes=groups)
    assert abs(direct.worst - planted.worst) > 10 * _tol(direct.worst, planted.worst), \
        (direct.worst, planted.worst)


#: V = ||x - x*||^2 + sum_i ||grad f_i(x*)||^2, clients not sharing x* (the clients' gradients
#: at x* are then pure deviations, carried by the deviation blocks)
HETEROGENEITY = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                             + sum(g ** 2 for g in star.gradients),
                             "||x - x*||^2 + sum_i ||grad f_i(x*)||^2")


@pytest.mark.parametrize("measure", [HETEROGENEITY, pep.two_runs()], ids=["heterogeneity",
                                                                          "two runs"])
@pytest.mark.parametrize("n", range(2, 7))
def test_the_proximal_step_without_a_shared_minimizer(n, measure):
    _, setting, _, law, groups = _case("prox", n)
    setting = pep.Setting(n, setting.mu, setting.L)
    direct = pep.worst_case(PROX, setting, measure, law)
    reduced = pep.worst_case(PROX, setting, measure, law, classes=groups)
    assert abs(direct.worst - reduced.worst) <= _tol(direct.worst, reduced.worst), \
        (direct.worst, reduced.worst)


def test_one_value_per_client_equal_to_one_value_for_all():
    law, round_ = Bernoulli([0.3, 0.5, 0.7]), pep.fedavg_round(2, 0.2)
    one = pep.worst_case(round_, pep.Setting(3, 1.0, 2.0, common_minimizer=True),
                         pep.distance(), law)
    per = pep.worst_case(round_, pep.Setting(3, [1.0] * 3, (2.0, 2.0, 2.0),
                                             common_minimizer=True), pep.distance(), law)
    assert abs(one.worst - per.worst) <= _tol(one.worst, per.worst)
    assert per.params["L"] == (2.0, 2.0, 2.0)


def test_a_class_mixing_two_function_classes_is_refused():
    setting = pep.Setting(4, [1.0, 1.0, 1.0, 0.5], [2.0, 2.0, 2.0, 4.0], common_minimizer=True)
    with pytest.raises(ValueError, match="classes.*mixes the function classes"):
        pep.worst_case(pep.fedavg_round(1, 0.2), setting, pep.distance(), Bernoulli([0.5] * 4),
                       classes=[[0, 1], [2, 3]])
    setting = pep.Setting(4, 1.0, [2.0, 2.0, 4.0, 4.0], common_minimizer=True)   # L only
    with pytest.raises(ValueError, match="classes"):
        pep.worst_case(pep.fedavg_round(1, 0.2), setting, pep.distance(), Bernoulli([0.5] * 4),
                       classes=[[0, 2], [1, 3]])


@pytest.mark.parametrize("kwargs, match", [
    (dict(mu=[1.0, 1.0], L=2.0), "mu: 2 values for n_clients=3"),
    (dict(mu=1.0, L=[2.0] * 4), "L: 4 values for n_clients=3"),
    (dict(mu=[1.0, 3.0, 1.0], L=2.0), "client 1: L must be >= mu"),
    (dict(mu=["a", 1.0, 1.0], L=2.0), "mu must be a number"),
    (dict(mu=1.0, L=[2.0, 3.0, 2.0], identical=True), "identical"),
    (dict(mu=None, L=2.0), "mu and L must be numbers"),
    (dict(mu=[[1.0, 1.0, 1.0]], L=2.0), "mu must be a number"),
])
def test_bad_per_client_constants_name_their_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pep.Setting(3, **kwargs)


def test_per_client_constants_are_certified():
    """(Every route, forced inaccurate, and planted bugs: test_certify_per_client.)"""
    setting = pep.Setting(2, 1.0, [2.0, 4.0], common_minimizer=True)
    assert engine.certifiable(setting, pep.distance())
    exact = pep.worst_case(pep.fedavg_round(1, 0.2), setting, pep.distance())
    bound = pep.worst_case(pep.fedavg_round(1, 0.2), setting, pep.distance(), certified=True)
    assert bound.worst >= exact.worst - pep.gap_tolerance(exact.worst)


def test_the_witness_of_two_classes_of_different_l_replays_at_n_100():
    """One quadratic per class, fitted within its class's [mu_c, L_c], FedAvg run by
    flbounds.algorithms on N = 100 clients over every value of the class counts."""
    n = 100
    groups = [list(range(40)), list(range(40, n))]
    p = np.r_[np.full(40, 0.1), np.full(60, 0.05)]
    L = np.r_[np.full(40, 2.0), np.full(60, 4.0)]
    w = fedavg_symmetric_witness(1.0, L, Bernoulli(p), groups, 2, 0.2)
    # a deviation's norm is the square root of Gram entries known to the solve's accuracy
    assert w.deviation <= np.sqrt(pep.gap_tolerance(w.witness.pep))
    assert abs(w.witness.replayed - w.witness.pep) <= witness_tolerance(w.witness)
    for Q, top in zip(w.witness.A, (2.0, 4.0), strict=True):
        eig = np.linalg.eigvalsh(Q)
        assert eig.min() >= 1.0 - 1e-9 and eig.max() <= top + 1e-9
    assert np.linalg.eigvalsh(w.witness.A[1]).max() > 2.0 + 1e-3   # class 1 uses its own L
