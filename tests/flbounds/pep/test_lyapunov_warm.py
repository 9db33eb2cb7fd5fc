"""The warm start of the Lyapunov search (``lyapunov_rate(..., warm=(low, high))``, which the
atlas uses for its lifted re-search) and the lifted check with its solve forced inaccurate.

The warm start skips the bisection's steps that ``(low, high)`` decide and checks each end
by one solve: its bracket, ``P`` and certified rate are the cold bisection's, bit for bit,
also when the guess is wrong; a version trusting ``low`` unchecked is caught. The lifted
check forced inaccurate raises (no certificate for a singular P)."""

import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import lyapunov_lmi, sdp
from flbounds.pep import lyapunov_search as lyap

SETTING = pep.Setting(2, 1.0, 4.0, common_minimizer=True)
FOCUS = (pep.focus_round(2, 1 / 32), SETTING, Bernoulli([0.2, 0.2]))
#: measured on FOCUS: the plain search's witness and feasible end, [0.927753, 0.953631]
GUESS = (0.927752, 0.9536306)


@pytest.fixture(scope="module")
def cold():
    return lyap.lyapunov_rate(*FOCUS, values=True, witness=False)


def _solves(monkeypatch):
    rhos = []
    real = lyapunov_lmi.Search.feasible

    def spy(self, rho):
        rhos.append(rho)
        return real(self, rho)

    monkeypatch.setattr(lyapunov_lmi.Search, "feasible", spy)
    return rhos


def test_a_warm_start_is_the_cold_bisection_with_fewer_solves(cold, monkeypatch):
    rhos = _solves(monkeypatch)
    warm = lyap.lyapunov_rate(*FOCUS, values=True, witness=False, warm=GUESS)
    assert warm.certified == cold.certified and warm.search == cold.search
    assert (warm.P == cold.P).all()
    assert len(rhos) < 25 and 0.5 not in rhos  # the cold bisection solves 25 times


def test_a_wrong_guess_falls_back_to_the_cold_bisection(cold):
    """low = 0.95 is above the lifted rate (0.93725): the check at the path's last
    'infeasible' point (0.9375) finds a V, so the bisection starts cold: same numbers."""
    warm = lyap.lyapunov_rate(*FOCUS, values=True, witness=False, warm=(0.95, 1.0))
    assert warm.certified == cold.certified and warm.search == cold.search


def test_trusting_low_unchecked_is_caught(cold, monkeypatch):
    """Planted bug: the warm start takes ``low``'s side of the path as infeasible without
    its check; with the wrong guess the bracket leaves the cold one."""
    def trusting(search, rho_max, warm):
        lo, hi = 0.0, rho_max
        while hi - lo > lyap.BISECTION_TOL and 0.5 * (lo + hi) < warm[0]:
            lo = 0.5 * (lo + hi)
        return lo, hi, search.feasible(hi)

    monkeypatch.setattr(lyap, "_warm_start", trusting)
    try:
        warm = lyap.lyapunov_rate(*FOCUS, values=True, witness=False, warm=(0.95, 1.0))
    except sdp.PEPSolveError:
        return
    assert warm.search != cold.search and warm.certified > cold.certified + 1e-4


def test_lifted_check_forced_inaccurate_is_certified_with_a_singular_p(monkeypatch):
    """Gradient descent (one client, step 0.1, mu = 1, L = 4) with the lifted V: the searched
    P is singular (measured; the search minimises tr P over P >= e_x e_x'), yet V <= 1 with
    the class's inequalities at x* bounds the start (flbounds.pep.lyapunov_check); every
    solve forced inaccurate, the check is the certified bound, at the known rate
    max(|1 - eta mu|, |1 - eta L|)^2 within the bracket tolerance."""
    from flbounds.pep.certify import bracket_tolerance

    args = (pep.fedavg_round(1, 0.1), pep.Setting(1, 1.0, 4.0, common_minimizer=True))
    monkeypatch.delenv(sdp.CACHE_ENV, raising=False)
    monkeypatch.setattr(sdp, "accurate", lambda *a: False)
    rate = lyap.lyapunov_rate(*args, values=True, witness=False)
    assert rate.accurate is None and rate.worst_case.status.startswith("certified (")
    known = 0.9 ** 2
    assert known - 1e-9 <= rate.certified <= known + bracket_tolerance(known)
