"""flbounds.pep: known worst cases, the moment form against the scenario sum, solve checks."""

import numpy as np
import pytest

from benchmarks._focus_reference import scenario_focus_rate
from flbounds import pep
from flbounds.ledger import bounds
from flbounds.participation import Bernoulli, UniformWithoutReplacement


def _thm1a(p, tau):
    """Theorem 1(a)'s printed step and rate at mu = 1, L = 2 (``flbounds bound focus.thm1a``)."""
    return bounds.get("focus.thm1a").evaluate(mu=1.0, L=2.0, p=np.asarray(p, dtype=float),
                                              tau=tau)


@pytest.mark.parametrize("step", [0.1, 0.3, 0.5, 0.9])
def test_gd_worst_is_the_tight_rate(step):
    res = pep.gd_rate(1.0, 2.0, step)
    expected = max(abs(1 - step), abs(1 - 2 * step)) ** 2
    assert res.worst == pytest.approx(expected, abs=pep.gap_tolerance(expected))
    assert res.gap <= pep.gap_tolerance(res.worst)
    assert res.printed == pytest.approx(expected)


@pytest.mark.parametrize("tau", [1, 2, 4])
def test_fedavg_common_minimizer_is_gd_to_the_tau(tau):
    res = pep.fedavg_rate(0.5, 2.0, 3, tau, 0.3, common_minimizer=True)
    expected = pep.gd_contraction(0.5, 2.0, 0.3) ** tau  # (factor^2)^tau
    assert res.worst == pytest.approx(expected, abs=2 * pep.gap_tolerance(expected))


def test_fedavg_empty_rounds_enter_exactly():
    proc = Bernoulli([0.2, 0.4, 0.6])
    res = pep.fedavg_rate(1.0, 2.0, 3, 2, 0.2, proc, common_minimizer=True)
    empty = float(np.prod([0.8, 0.6, 0.4]))
    expected = empty + (1 - empty) * pep.gd_contraction(1.0, 2.0, 0.2) ** 2
    assert res.worst == pytest.approx(expected, abs=2 * pep.gap_tolerance(expected))


def test_focus_moments_agree_with_scenario_sum():
    """The O(N^2) moment form and the 2^N scenario sum are the same SDP objective."""
    p = [0.3, 0.5, 0.7]
    res = pep.focus_rate(1.0, 2.0, p, 2, _thm1a(p, 2).step, consensus_weight=0.5)
    scen = scenario_focus_rate(1.0, 2.0, p, 2, res.params["step"],
                               res.params["consensus_weight"])
    assert abs(res.worst - scen.worst) <= 1e-6


def test_focus_moments_agree_with_scenarios_for_fixed_size_sampling():
    proc = UniformWithoutReplacement(3, 2)
    res = pep.focus_rate(1.0, 2.0, [0.5, 0.5, 0.5], 2, 0.004, consensus_weight=0.5,
                         participation=proc)
    scen = scenario_focus_rate(1.0, 2.0, [0.5] * 3, 2, 0.004, res.params["consensus_weight"],
                               participation=proc)
    assert abs(res.worst - scen.worst) <= 1e-6


def test_focus_takes_the_step_and_weight_and_reports_the_callers_printed_rate():
    """The library has no default step or Lyapunov weight and computes no printed rate:
    Theorem 1(a)'s step and rate are its bound's, its proof's weight 1 - 8 eta L^2 N/mu."""
    p = np.array([0.3, 0.5, 0.7, 0.9])
    thm = _thm1a(p, 3)
    weight = 1 - 8 * thm.step * 2.0**2 * 4 / 1.0
    res = pep.focus_rate(1.0, 2.0, p, 3, thm.step, printed=thm.value, consensus_weight=weight)
    assert res.params["step"] == thm.step and res.printed == thm.value
    assert res.params["consensus_weight"] == weight
    assert res.worst <= res.printed
    assert pep.focus_rate(1.0, 2.0, [0.5, 0.8], 1, 0.01, consensus_weight=0.5).printed is None


def test_focus_rounds_one_round_below_lyapunov_bound():
    one = pep.focus_rate(1.0, 2.0, [0.5, 0.8], 2, 0.01, consensus_weight=0.36)
    rounds = pep.focus_rounds_rate(1.0, 2.0, [0.5, 0.8], 2, 0.01, 1)
    # from the proof's start Psi_0 = ||x_0 - x*||^2 and ||x_1 - x*||^2 <= Psi_1
    assert rounds.worst <= one.worst + pep.gap_tolerance(one.worst)


def test_unbounded_problem_raises_not_a_number():
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    problem = PEP()
    f = problem.declare_function(SmoothStronglyConvexFunction, mu=1.0, L=2.0)
    xs = f.stationary_point()
    x0 = problem.set_initial_point()
    problem.set_performance_metric((x0 - xs) ** 2)  # no initial condition: unbounded
    with pytest.raises(pep.PEPSolveError):
        pep.solve(problem)


@pytest.mark.parametrize("call, name", [
    (lambda: pep.gd_rate(2.0, 1.0, 0.1), "L"),
    (lambda: pep.gd_rate(1.0, 2.0, -0.1), "step"),
    (lambda: pep.fedavg_rate(1.0, 2.0, 0, 1, 0.1), "n_clients"),
    (lambda: pep.fedavg_rate(1.0, 2.0, 2, 0, 0.1), "local_steps"),
    (lambda: pep.fedavg_rate(1.0, 2.0, 2, 1, 0.1, np.array([True])), "participation"),
    (lambda: pep.focus_rate(1.0, 2.0, [0.5, 1.5], 2), "p"),
    (lambda: pep.focus_rate(1.0, 2.0, [0.5, 0.5], 2, 1.0), "step"),
    (lambda: pep.focus_rate(1.0, 2.0, [0.5, 0.5], 2), "step"),
    (lambda: pep.focus_rate(1.0, 2.0, [0.5, 0.5], 2, 0.01, consensus_weight=0.5,
                            printed=float("nan")), "printed"),
    (lambda: pep.focus_rate(1.0, 2.0, [0.5, 0.5], 2, 0.01), "consensus_weight"),
    (lambda: pep.focus_rate(1.0, 2.0, [0.5, 0.5], 2, 0.01, consensus_weight=0.0),
     "consensus_weight"),
    (lambda: pep.focus_pl_rate(1.0, 2.0, [0.5, 0.5], 2, 0.01), "consensus_weight"),
    (lambda: pep.focus_rounds_rate(1.0, 2.0, [0.5, 0.5], 2, None, 1), "step"),
    (lambda: pep.focus_pl_rate(1.0, 2.0, [0.5, 0.5], 2), "step"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_fedavg_witness_replays_the_worst_case():
    from flbounds.pep.witness import fedavg_witness, witness_tolerance

    w = fedavg_witness(1.0, 2.0, Bernoulli([0.3, 0.6, 0.9]), 2, 0.3)
    assert abs(w.replayed - w.pep) <= witness_tolerance(w)


@pytest.mark.parametrize("n_rounds", [1, 2])
def test_focus_quadratic_witness_replays_with_the_project_algorithm(n_rounds):
    from flbounds.pep.witness import focus_rounds_witness, witness_tolerance

    w = focus_rounds_witness(1.0, 2.0, [0.5, 0.8], 2, 0.05, n_rounds)
    assert w.fit_residual < 1e-4
    assert abs(w.replayed - w.pep) <= witness_tolerance(w)
    general = pep.focus_rounds_rate(1.0, 2.0, [0.5, 0.8], 2, 0.05, n_rounds)
    assert w.pep <= general.worst + pep.gap_tolerance(general.worst)  # quadratics are a subclass
