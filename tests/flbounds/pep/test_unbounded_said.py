"""An unbounded worst case is said as such by the symmetric form and by mixtures, as by the
direct form (flbounds.pep.unbounded_said, flbounds.pep.certify_unbounded): FOCUS's two runs
under V = ||x - x'||^2 (the tracking points free) in the symmetric form, and a SAFARI mixture
under V = ||x - x*||^2 with x* not shared (the gradients at x* free). With every solve forced
inaccurate the witness cannot be solved and the error stays a solver failure; planted bugs
(no witness taken, a witness that always says unbounded) change the outcome.

Measured (FOCUS, tau = 1, step 0.1, N = 4, classes [[0, 1], [2, 3]], p = 0.3, 0.7, smooth
strongly convex, mu = 1, L = 2): 7.84 at R = 1e2, 469.3 at R = 1e4; SAFARI (q = 0.5, 2 local
steps, steps 0.2 and 0.3, N = 3): 1.44 and 75.2."""

import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import certify_unbounded, sdp

FOCUS = (pep.focus_round(1, 0.1), pep.Setting(4, 1.0, 2.0), pep.two_runs(),
         Bernoulli([0.3, 0.3, 0.7, 0.7]))
CLASSES = [[0, 1], [2, 3]]
SAFARI = (pep.safari_round(0.5, 2, 0.2, 0.3, Bernoulli([0.3, 0.5, 0.7])),
          pep.Setting(3, 1.0, 2.0), pep.distance())


def _growth(message):
    """The two trace-bounded values of the witness in ``message``."""
    import re

    found = re.search(r"worst case is ([0-9.e+-]+) at R = 100 and ([0-9.e+-]+) at R = 10000",
                      message)
    return float(found.group(1)), float(found.group(2))


@pytest.mark.parametrize("certified", [False, True])
def test_the_symmetric_form_says_unbounded(no_store, certified):
    with pytest.raises(sdp.PEPSolveError, match="the worst case is unbounded") as err:
        pep.worst_case(*FOCUS, classes=CLASSES, certified=certified)
    v1, v2 = _growth(str(err.value))
    assert v1 > 0 and v2 >= 10 * v1


def test_a_mixture_says_unbounded(no_store):
    with pytest.raises(sdp.PEPSolveError, match="the worst case is unbounded") as err:
        pep.worst_case(*SAFARI)
    v1, v2 = _growth(str(err.value))
    assert v1 > 0 and v2 >= 10 * v1


def test_forced_inaccurate_the_witness_is_not_claimed(no_store):
    """Every solve forced inaccurate: the trace-bounded solves are not accurate either, so
    nothing is said beyond the solver's failure."""
    no_store.setattr(sdp, "accurate", lambda *a: False)
    for call in (lambda: pep.worst_case(*FOCUS, classes=CLASSES), lambda: pep.worst_case(
            *SAFARI)):
        with pytest.raises(sdp.PEPSolveError) as err:
            call()
        assert "the worst case is unbounded" not in str(err.value)
        assert "no accurate solve" in str(err.value)


def test_without_the_witness_the_error_is_a_solver_failure(no_store):
    """Planted: the witness skipped (the former behaviour): the message says only that no
    solve was accurate."""
    no_store.setattr(certify_unbounded, "unbounded_witness", lambda build, measure: None)
    with pytest.raises(sdp.PEPSolveError) as err:
        pep.worst_case(*SAFARI)
    assert "the worst case is unbounded" not in str(err.value)


def test_a_bounded_problem_is_not_called_unbounded(no_store):
    """Planted: a witness that always says unbounded is never consulted unless a solver
    reported unbounded; a bounded mixture solves."""
    no_store.setattr(certify_unbounded, "unbounded_witness",
                     lambda build, measure: "the worst case is unbounded (planted)")
    round_, setting, _ = SAFARI
    shared = pep.Setting(3, 1.0, 2.0, common_minimizer=True)
    assert pep.worst_case(round_, shared, pep.distance()).status == "optimal"
    with pytest.raises(sdp.PEPSolveError, match="planted"):
        pep.worst_case(round_, setting, pep.distance())
