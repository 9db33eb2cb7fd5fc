"""The symmetric margin certificate (flbounds.pep.certify_symmargin) at N = 1000: x* not
shared, quadratic class, a heterogeneity budget, two classes of N/2 clients with (mu, L, p) =
(1, 2, 0.3) and (0.5, 4, 0.7), FedAvg (tau = 2, step 0.2). Both Clarabel settings stop
``optimal_inaccurate`` there (their multipliers certify 1.0001605 against the value
1.0000591); SCS, tried when Clarabel is not ``optimal``, certifies 1.0000591353, 9e-10 above
it (bracket 3.6e-6). Through ``flbounds.pep.worst_case(..., classes=...)`` with every solve
forced inaccurate; planted bugs (Clarabel only, as before; SCS's bound scaled by 0.9 taken
as the lower) are caught."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import certify_symmargin, sdp
from flbounds.pep.certify import bracket_tolerance
from flbounds.pep.certify_margin import solve_margin

from ._planted import assert_bracketed

BUDGET = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                      + sum(g ** 2 for g in star.gradients), "heterogeneity budget",
                      bounds=lambda state: {state["x"]: 1.0},
                      star_bounds=lambda star: dict.fromkeys(star.gradients, 1.0))
N = 1000
H = N // 2
SETTING = pep.Setting(N, np.r_[np.full(H, 1.0), np.full(N - H, 0.5)],
                      np.r_[np.full(H, 2.0), np.full(N - H, 4.0)], function_class="quadratic")
LAW = Bernoulli(np.r_[np.full(H, 0.3), np.full(N - H, 0.7)])
CLASSES = [list(range(H)), list(range(H, N))]
ROUND = pep.fedavg_round(2, 0.2)


def _solve(**kw):
    return pep.worst_case(ROUND, SETTING, BUDGET, LAW, classes=CLASSES, **kw)


@pytest.fixture(scope="module")
def accurate():
    return _solve()


@pytest.mark.parametrize("certified", [False, True])
def test_the_bracket_at_n_1000(no_store, accurate, certified):
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = _solve(certified=certified)
    assert_bracketed(bound, accurate)
    assert bound.gap <= bracket_tolerance(bound.worst)
    assert bound.worst - accurate.worst <= 1e-6     # measured 9e-10


def test_clarabel_only_is_caught(no_store, accurate):
    """Planted: the former route (Clarabel's multipliers only): 1.0e-4 above the value."""
    no_store.setattr(sdp, "accurate", lambda *a: False)
    no_store.setattr(certify_symmargin, "_best_margin", solve_margin)
    bound = _solve()
    assert bound.worst >= accurate.worst
    assert bound.worst - accurate.worst > 1e-6


def test_a_lower_bound_that_is_no_bound_is_caught(no_store, accurate):
    """Planted: SCS's certified value scaled by 0.9 (no longer a bound) is taken as the
    lower of the two, and falls below the accurate value."""
    real = certify_symmargin.solve_margin

    def scaled(one, sigmas, solvers=None):
        info = real(one, sigmas, solvers=solvers)
        return info if solvers is None else info.__class__(**{**info.__dict__,
                                                              "worst": 0.9 * info.worst})

    no_store.setattr(sdp, "accurate", lambda *a: False)
    no_store.setattr(certify_symmargin, "solve_margin", scaled)
    bound = _solve()
    assert bound.worst < accurate.worst - pep.gap_tolerance(accurate.worst)
