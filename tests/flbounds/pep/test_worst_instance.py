"""The worst case's instance and its replay from the public API: ``pep.worst_instance`` fits
quadratic clients and a start to the solved Gram matrix, ``pep.replay_measure`` runs the same
round on them over the same participation argument as ``pep.worst_case`` and gives the
instance's exact ratio, which meets the SDP's value; with every solve forced inaccurate the
certified bound stays above the replayed ratio, within a measured bracket. ``witness_rate``
takes the quadratic class. Planted bugs (the fitted curvatures scaled by 0.9, the start's
momentum dropped, the round misrouted) move the replayed ratio off the worst case."""

import dataclasses

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import sdp
from flbounds.pep.expect import law_of
from flbounds.pep.replay import expected_measure
from flbounds.problems import Quadratic

MU, L, STEP, BETA = 1.0, 4.0, 0.2, 0.2
LAW = Bernoulli([0.5, 0.5])
QUADRATIC = pep.Setting(2, MU, L, function_class="quadratic", identical=True)
V = pep.lyapunov(lambda s, star: (s["x"] - star.x) ** 2 + s["m"] ** 2,
                 "V = |x - x*|^2 + |m|^2")


def momentum(beta=BETA):
    def server(state, aggregated):
        m = beta * state["m"] + aggregated["delta"]
        return {"m": m, "x": state["x"] + m}

    return pep.Round("FedAvgM", pep.local_gd(1, STEP), {"delta": "uniform"},
                     pep.Server(server, "server momentum"), server_state=("x", "m"))


def tolerance(worst, residual):
    """The SDP's acceptance gap plus a first-order bound of the fit's effect: a relative
    residual r in the gradients moves each squared norm of the replay by about 2 r."""
    return 2 * pep.gap_tolerance(worst) + 4 * residual * worst


@pytest.fixture(scope="module")
def solved():
    rnd = momentum()
    return rnd, pep.worst_case(rnd, QUADRATIC, V, LAW), pep.worst_instance(rnd, QUADRATIC, V,
                                                                          LAW)


def test_the_fitted_instance_replays_to_the_worst_case(solved):
    rnd, res, inst = solved
    assert isinstance(inst, pep.FittedInstance) and inst.residual < 1e-4
    assert set(inst.start) == {"x", "m"}
    replayed = pep.replay_measure(rnd, inst, V, LAW)
    assert replayed <= res.worst + 2 * pep.gap_tolerance(res.worst)   # a member of the class
    assert replayed == pytest.approx(res.worst, abs=tolerance(res.worst, inst.residual))


def test_the_old_replay_takes_the_participation_too(solved):
    rnd, _, inst = solved
    new = pep.replay_measure(rnd, inst.problem, V, LAW, start=inst.start)
    assert expected_measure(rnd, inst.problem, inst.start, law_of(LAW, 2), V) == new
    assert expected_measure(rnd, inst.problem, inst.start, LAW, V) == new


def test_fedavg_with_distinct_clients_replays_to_its_worst_case():
    rnd, law = pep.fedavg_round(2, 0.3), Bernoulli([0.3, 0.6, 0.9])
    setting = pep.Setting(3, MU, L, function_class="quadratic", common_minimizer=True)
    res = pep.worst_case(rnd, setting, pep.distance(), law)
    inst = pep.worst_instance(rnd, setting, pep.distance(), law)
    assert inst.start["x"].shape == (inst.problem.dim,)
    assert pep.replay_measure(rnd, inst, pep.distance(), law) == pytest.approx(
        res.worst, abs=tolerance(res.worst, inst.residual))


def test_forced_inaccurate_the_certified_bound_brackets_the_replayed_instance(monkeypatch):
    rnd, law = pep.fedavg_round(3, 0.2), Bernoulli([0.3, 0.5, 0.7])
    setting = pep.Setting(3, MU, 2.0, function_class="quadratic", common_minimizer=True)
    accurate = pep.worst_case(rnd, setting, pep.distance(), law)
    monkeypatch.delenv(sdp.CACHE_ENV, raising=False)
    monkeypatch.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.worst_case(rnd, setting, pep.distance(), law, certified=True)
    inst = pep.worst_instance(rnd, setting, pep.distance(), law)  # any solve with values
    replayed = pep.replay_measure(rnd, inst, pep.distance(), law)
    assert bound.status.startswith("certified")
    assert replayed <= accurate.worst + 2 * pep.gap_tolerance(accurate.worst) <= \
        bound.worst + 2 * pep.gap_tolerance(accurate.worst)
    assert bound.worst - replayed <= 1e-5      # the bracket [replayed instance, certified]


def test_planted_bugs_move_the_replay_off_the_worst_case(solved):
    rnd, res, inst = solved
    tol = tolerance(res.worst, inst.residual)
    scaled = Quadratic(0.9 * np.asarray(inst.problem.A), np.asarray(inst.problem.b))
    assert abs(pep.replay_measure(rnd, scaled, V, LAW, start=inst.start) - res.worst) > tol
    dropped = dict(inst.start, m=np.zeros_like(inst.start["m"]))
    assert abs(pep.replay_measure(rnd, inst, V, LAW, start=dropped) - res.worst) > tol
    misrouted = momentum(beta=0.0)
    assert abs(pep.replay_measure(misrouted, inst, V, LAW) - res.worst) > tol


def test_replay_measure_names_bad_arguments(solved):
    rnd, _, inst = solved
    with pytest.raises(ValueError, match=r"start must give the free state points \['m', "
                                         r"'x'\], got \['x'\]"):
        pep.replay_measure(rnd, inst.problem, V, LAW, start={"x": inst.start["x"]})
    with pytest.raises(ValueError, match="instance must be"):
        pep.replay_measure(rnd, "q", V, LAW, start=inst.start)
    with pytest.raises(ValueError, match="one-run Measure"):
        pep.replay_measure(rnd, inst, pep.two_runs(), LAW)
    with pytest.raises(ValueError, match="one-run Measure"):
        pep.worst_instance(rnd, QUADRATIC, pep.two_runs(), LAW)
    with pytest.raises(ValueError, match="worst_instance needs clients sharing x"):
        pep.worst_instance(rnd, pep.Setting(2, MU, L), V, LAW)


def test_witness_rate_takes_the_quadratic_class():
    rnd = momentum()
    smooth = dataclasses.replace(QUADRATIC, function_class="smooth-strongly-convex")
    assert pep.witness_rate(rnd, QUADRATIC, LAW) == pep.witness_rate(rnd, smooth, LAW)
    with pytest.raises(ValueError, match=r"witness_rate needs function_class in "
                                         r"\['smooth-strongly-convex', 'quadratic'\], got "
                                         r"'smooth'"):
        pep.witness_rate(rnd, dataclasses.replace(QUADRATIC, function_class="smooth"), LAW)
    with pytest.raises(ValueError, match="the Lyapunov search needs function_class"):
        pep.lyapunov_rate(rnd, dataclasses.replace(QUADRATIC, function_class="smooth"), LAW)
