"""The lifted Lyapunov search (values=True, flbounds.pep.lyapunov_lmi): gradients at x and
function values in V. Known answer (gradient descent), never worse than the quadratic of the
state, above the witness, and a planted bug in the values' expectation caught."""


from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import lyapunov_lmi
from flbounds.pep import lyapunov_search as lyap
from flbounds.pep.sdp import PEPSolveError

SETTING = pep.Setting(2, 1.0, 4.0, common_minimizer=True)
FOCUS = (pep.focus_round(2, 1 / 32), Bernoulli([0.2, 0.2]))


def _slack(rate):
    return pep.gap_tolerance(rate.certified) + lyap.BISECTION_TOL + rate.worst_case.gap


def test_gradient_descent_keeps_its_known_rate():
    """One client, one step: the tight rate max(|1 - eta mu|, |1 - eta L|)^2 to 1e-6."""
    mu, L, step = 1.0, 4.0, 0.1
    rate = lyap.lyapunov_rate(pep.fedavg_round(1, step),
                              pep.Setting(1, mu, L, common_minimizer=True), values=True)
    known = max(abs(1 - step * mu), abs(1 - step * L)) ** 2
    assert abs(rate.certified - known) <= 1e-6, (rate.certified, known)
    assert rate.params["values"] and len(rate.params["q"]) == 1


def test_focus_at_low_participation_narrows_and_stays_above_the_witness():
    """FOCUS, N = 2, tau = 2, p = 0.2 (measured: [0.92775, 0.95363] without the lift,
    [0.92775, 0.93725] with it): the lifted certificate is an accepted solve, at most the
    quadratic one, at least the witness, and strictly tighter here."""
    plain = lyap.lyapunov_rate(*FOCUS[:1], SETTING, FOCUS[1])
    lifted = lyap.lyapunov_rate(*FOCUS[:1], SETTING, FOCUS[1], values=True)
    assert lifted.worst_case.status == "optimal" or lifted.worst_case.status.startswith(
        "certified")
    assert lifted.certified <= plain.certified + _slack(plain) + _slack(lifted)
    assert lifted.witness <= lifted.certified + _slack(lifted)
    assert lifted.certified < plain.certified - 1e-3
    assert lifted.coordinates[-2:] == ("grad f[0](x)", "grad f[1](x)")


def test_understated_values_after_the_round_are_caught(monkeypatch):
    """Planted bug: E f_i(x+) and E f_i(z_i+) halved in the lift. Either the check's solve
    fails (measured: the halved metric is unbounded on the check's SDP) or the search and
    the check agree on a rate that the replayed witness (independent of the lift) exceeds;
    a number inside the bracket is never returned."""
    real = lyapunov_lmi.value_lift

    def halved(*args):
        law, eb, ea, vb, va = real(*args)
        return law, eb, ea, vb, [0.5 * e for e in va]

    monkeypatch.setattr(lyapunov_lmi, "value_lift", halved)
    try:
        rate = lyap.lyapunov_rate(*FOCUS[:1], SETTING, FOCUS[1], values=True)
    except PEPSolveError:
        return
    assert rate.witness > rate.certified + _slack(rate), (rate.witness, rate.certified)
