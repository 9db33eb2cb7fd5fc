"""An unbounded worst case told apart from a solver failure (flbounds.pep.certify_unbounded):
FOCUS with two runs and V = ||x - x~||^2 (quadratic and smooth strongly convex classes) is
unbounded, which the engine now says with its witness (the trace-bounded worst case growing
with R, the tracking points V leaves free); with the tracking difference in V the worst case
is finite; a bounded problem whose solver reports "unbounded" keeps the solver's error."""

import re

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import engine, sdp
from flbounds.pep.certify_unbounded import unbounded_witness, unread_state

LAW = Bernoulli([0.3, 0.7])
FOCUS = pep.focus_round(2, 0.1)
X_AND_Z = pep.two_runs(lambda d, star: d["x"] ** 2 + d.client("z")[0] ** 2
                       + d.client("z")[1] ** 2, "x and z")


@pytest.mark.parametrize("cls", ["quadratic", "smooth-strongly-convex"])
def test_focus_two_runs_are_unbounded_and_said_so(no_store, cls):
    setting = pep.Setting(2, 1.0, 2.0, function_class=cls)
    with pytest.raises(sdp.PEPSolveError, match="the worst case is unbounded") as info:
        pep.worst_case(FOCUS, setting, pep.two_runs(), LAW)
    message = str(info.value)
    assert "'z'" in message and "'x'" not in message.split("|")[0]
    v1, v2 = map(float, re.search(r"worst case is (\S+) at R = \S+ and (\S+) at R",
                                  message).groups())
    assert v2 >= 10 * v1 > 0                          # measured 4.03 and 161.1


def test_the_free_state_points_are_named():
    setting = pep.Setting(2, 1.0, 2.0)
    _, parts = engine.build(FOCUS, setting, pep.two_runs(), LAW)
    assert sorted(unread_state(pep.two_runs(), parts["start"] - parts["other"])) == \
        ["g", "y", "z"]
    _, parts = engine.build(FOCUS, setting, X_AND_Z, LAW)
    assert sorted(unread_state(X_AND_Z, parts["start"] - parts["other"])) == ["g", "y"]


def test_with_the_tracking_difference_in_v_the_worst_case_is_finite(no_store):
    value = pep.worst_case(FOCUS, pep.Setting(2, 1.0, 2.0, function_class="quadratic"),
                           X_AND_Z, LAW)
    assert value.status == "optimal" and np.isfinite(value.worst)    # measured 1.6439


def test_a_bounded_problem_keeps_the_solver_error(no_store):
    """Planted: the solver says "unbounded" on a bounded problem (FedAvg, two runs): the
    trace-bounded solves do not grow, so no unboundedness is claimed."""
    round_, setting = pep.fedavg_round(2, 0.3), pep.Setting(2, 1.0, 2.0)

    def failing(*args, **kwargs):
        raise sdp.PEPSolveError("CLARABEL: status unbounded, no value (planted)")

    assert unbounded_witness(lambda: engine.build(round_, setting, pep.two_runs(), LAW),
                             pep.two_runs()) is None
    no_store.setattr(engine, "solve_built", failing)
    with pytest.raises(sdp.PEPSolveError) as info:
        pep.worst_case(round_, setting, pep.two_runs(), LAW)
    assert "planted" in str(info.value) and "worst case is unbounded" not in str(info.value)
