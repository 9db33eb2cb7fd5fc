"""The Lyapunov search over the quadratic class (flbounds.pep.lyapunov_search with
``function_class="quadratic"``): the class's LMI enters the search's S-procedure
(``lyapunov_lmi.class_lmis``), and at mu = 0 the class is the one written about each client's
first point (flbounds.pep.certify_quadratic). Known answers, the check's solve forced
inaccurate, and a planted bug (the LMI's multiplier left free) caught."""

import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import certify_quadratic, lyapunov_lmi, sdp
from flbounds.pep import lyapunov_search as lyap
from flbounds.pep.certify import bracket_tolerance
from flbounds.pep.sdp import PEPSolveError


def _setting(n, mu):
    return pep.Setting(n, mu, 4.0, function_class="quadratic", common_minimizer=True)


def _slack(rate):
    return pep.gap_tolerance(rate.certified) + lyap.BISECTION_TOL + rate.worst_case.gap


def test_the_search_declares_the_first_point_class_at_mu_0():
    """The search's PEP (and the check's) uses certify_quadratic's class at mu = 0."""
    from PEPit import PEP

    from flbounds.pep.engine import _functions

    funcs = _functions(PEP(), _setting(2, 0.0))
    assert all(type(f) is certify_quadratic.quadratic_class() for f in funcs)


def test_gradient_descent_on_a_strongly_convex_quadratic_keeps_its_rate():
    """mu = 1: max(|1 - eta mu|, |1 - eta L|)^2 = 0.81 to 1e-6, as over the smooth class."""
    rate = lyap.lyapunov_rate(pep.fedavg_round(1, 0.1), _setting(1, 1.0))
    assert abs(rate.certified - 0.81) <= 1e-6 and abs(rate.witness - 0.81) <= 1e-6


@pytest.mark.parametrize("values", [False, True])
def test_gradient_descent_on_a_convex_quadratic_does_not_contract(values):
    """mu = 0: a flat direction does not move, the rate is 1; the bracket is [1, 1]."""
    rate = lyap.lyapunov_rate(pep.fedavg_round(1, 0.1), _setting(1, 0.0), values=values)
    assert rate.witness == pytest.approx(1.0, abs=1e-12) and rate.witness_instance == (0.0,)
    assert abs(rate.certified - 1.0) <= _slack(rate)


def test_fedavg_on_convex_quadratics_certifies_no_rate_below_1():
    """FedAvg, N = 2, mu = 0 quadratics sharing a minimizer, Bernoulli(0.5): the certified
    rate is 1 with infeasibility below it proved (no undecided solve), the flat witness
    reaches 1, and asking for a rate below 1 is the search's own message, not a crash."""
    round_, law = pep.fedavg_round(2, 0.1), Bernoulli([0.5, 0.5])
    rate = lyap.lyapunov_rate(round_, _setting(2, 0.0), law)
    assert abs(rate.certified - 1.0) <= _slack(rate)
    assert rate.params["undecided_solves"] == 0 and rate.search[0] >= 1 - 2 * lyap.BISECTION_TOL
    assert rate.witness == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(PEPSolveError, match="no quadratic Lyapunov function certifies"):
        lyap.lyapunov_rate(round_, _setting(2, 0.0), law, rho_max=0.99)


def test_forced_inaccurate_the_check_is_the_certified_bound(no_store):
    """Every solve of the check forced inaccurate: the certified bound (multipliers of the
    first-point class made PSD) is at or above the accurate rate, within its bracket."""
    round_, law = pep.fedavg_round(2, 0.1), Bernoulli([0.5, 0.5])
    accurate = lyap.lyapunov_rate(round_, _setting(2, 0.0), law, witness=False)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = lyap.lyapunov_rate(round_, _setting(2, 0.0), law, witness=False)
    assert bound.worst_case.status.startswith("certified"), bound.worst_case.status
    assert bound.certified >= accurate.certified - pep.gap_tolerance(accurate.certified)
    assert bound.certified - accurate.certified <= bracket_tolerance(bound.certified)


FOCUS = (pep.focus_round(2, 0.05), Bernoulli([0.5, 0.5]))


def test_focus_on_convex_quadratics_does_not_contract():
    """FOCUS, N = 2, tau = 2, mu = 0: the bracket is [1, 1] (a flat client never moves).
    Measured: the lifted search (values=True) finds no V at rho = 1 on this instance (its
    solver undecided at the boundary) and raises PEPSolveError, no number."""
    rate = lyap.lyapunov_rate(*FOCUS[:1], _setting(2, 0.0), FOCUS[1])
    assert abs(rate.certified - 1.0) <= _slack(rate) and rate.witness == pytest.approx(1.0)


def test_a_free_multiplier_of_the_class_lmi_is_caught(monkeypatch):
    """Planted bug: the class LMI's multiplier not projected on the PSD cone (its rule
    dropped). The search then accepts a V the class does not allow (measured: the check,
    PEPit's class solved independently, gives 1.0201 against the bisection's 1)."""
    real = lyapunov_lmi.class_lmis
    monkeypatch.setattr(lyapunov_lmi, "class_lmis", lambda *a: (real(*a)[0], []))
    with pytest.raises(PEPSolveError, match="disagree"):
        lyap.lyapunov_rate(*FOCUS[:1], _setting(2, 0.0), FOCUS[1])


def test_the_lifted_search_over_quadratics_stays_between_witness_and_plain():
    """FOCUS, N = 2, tau = 2, step 1/32, p = 0.2, mu = 1 quadratics (measured: plain
    [0.927753, 0.940782], lifted [0.927753, 0.929692]; over the smooth strongly convex class
    0.953630 and 0.937246): the lift also carries the class's LMI."""
    args = (pep.focus_round(2, 1 / 32), _setting(2, 1.0), Bernoulli([0.2, 0.2]))
    plain = lyap.lyapunov_rate(*args)
    lifted = lyap.lyapunov_rate(*args, values=True, witness=False)
    assert plain.witness <= lifted.certified + _slack(lifted)
    assert lifted.certified < plain.certified - 5e-3
