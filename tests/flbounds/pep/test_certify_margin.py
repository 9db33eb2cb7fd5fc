"""The certified bound from multipliers with a margin (flbounds.pep.certify_margin) on the PL
relaxation's pinned form (flbounds.pep.pl): the pinned form keeps the value, the bound
brackets the accurate worst case from above, and multipliers without a margin are refused
(a certificate that skipped the margin would claim a bound below the worst case).

The accurate solves of this PEP are accurate to their acceptance bound (``gap_tolerance``,
1e-6 relative), not to their reported gap: its three equivalent forms, solved with Clarabel's
tolerances at 1e-10, differ by 1e-6 (p = (0.5, 0.8), tau = 2). Comparisons use that bound.
"""

import math

import numpy as np
import pytest

from flbounds.ledger import bounds
from flbounds.pep import gap_tolerance, sdp
from flbounds.pep.certify import bracket_tolerance
from flbounds.pep.certify_margin import margin_certificate, solve_margin, value_growth
from flbounds.pep.described import focus_round
from flbounds.pep.pl import focus_pl_rate, pinned
from flbounds.pep.tracking import _process

BETA, L, P, TAU = 1.0, 2.0, (0.5, 0.8), 1
STEP = bounds.get("focus.thm1b").evaluate(beta=BETA, L=L, p=np.asarray(P), tau=TAU).step
WEIGHT = 1 - 4 * STEP * L**2


def _pinned(sigma):
    return pinned(focus_round(TAU, STEP), _process(P, None), BETA, L, WEIGHT, sigma)


@pytest.fixture(scope="module")
def exact():
    return focus_pl_rate(BETA, L, P, TAU, STEP, consensus_weight=WEIGHT)


def _solved(sigma):
    problem, metric, growth = _pinned(sigma)
    failures = []
    for _name, _dual, _status, _s in sdp.attempts(problem, sdp.SOLVERS[:1], failures):
        return problem, metric, growth
    raise AssertionError(failures)


def test_the_pinned_form_has_the_value_of_the_pl_pep(exact):
    """No x*, F* free, x = 0, f_i(x) = 0, grad f_i(x) = g: the same supremum (pl docstring)."""
    problem, _, _ = _pinned(0.0)
    info = sdp.solve(problem, reuse=False)
    assert info.worst == pytest.approx(exact.worst, abs=gap_tolerance(exact.worst))


def test_the_margin_certificate_brackets_the_accurate_value(exact, monkeypatch):
    monkeypatch.delenv(sdp.CACHE_ENV, raising=False)
    info = solve_margin(_pinned)
    assert info.status.startswith("certified")
    assert exact.worst - gap_tolerance(exact.worst) <= info.worst
    assert info.worst <= exact.worst + bracket_tolerance(info.worst)


def test_multipliers_without_a_margin_are_refused(exact):
    """Weight moved from the rate's multiplier (the initial condition Phi_0 <= 1) to PL's at
    x (-F* <= ||g||^2 / (2 beta)): the leftover on F* is unchanged, the dual value drops by
    the moved weight, and only the slope (the margin check) sees that the dual slack is no
    longer PSD. A certificate that dropped the margin check (planted bug: upper = k +
    leftovers whatever the slope) would certify a number below the accurate worst case."""
    problem, metric, growth = _solved(1e-6)
    constraints = problem._list_of_prepared_constraints
    lam = np.array([float(c.eval_dual()) for c in constraints])
    good = margin_certificate(problem, metric, growth, lam)
    assert math.isfinite(good.upper) and good.slope < 0
    assert good.upper >= exact.worst - gap_tolerance(exact.worst)

    def keys(c):
        return c.expression.decomposition_dict

    rate = [k for k, c in enumerate(constraints) if 1 in keys(c)]
    pl_at_x = [k for k, c in enumerate(constraints) if len(keys(c)) == 2
               and sum(isinstance(key, tuple) for key in keys(c)) == 1]
    assert len(rate) == 1 and len(pl_at_x) == 1
    moved = 0.01
    lam[rate[0]] -= moved
    lam[pl_at_x[0]] += moved
    bad = margin_certificate(problem, metric, growth, lam)
    assert bad.upper == math.inf and bad.slope > 0
    assert bad.value_leftover == pytest.approx(good.value_leftover, abs=1e-9)
    planted = bad.dual + bad.value_leftover + bad.rounding
    assert planted < exact.worst - gap_tolerance(exact.worst)


def test_the_plain_pep_multipliers_never_certify_below_their_primal_value():
    """sigma = 0: the optimal multipliers leave the dual slack singular, so the solver's (a
    rounding away) are refused, or, when the interior point left a margin, bound at least
    the value the solver's own Gram matrix attains."""
    problem, metric, growth = _solved(0.0)
    cert = margin_certificate(problem, metric, growth)
    assert cert.upper == math.inf or cert.upper >= cert.primal - gap_tolerance(cert.primal)


def test_value_growth_needs_an_anchor():
    from PEPit import PEP
    from PEPit.functions import SmoothFunction

    problem = PEP()
    f = problem.declare_function(SmoothFunction, L=L)
    from PEPit import Point

    f.gradient(Point())
    with pytest.raises(ValueError, match="anchor"):
        value_growth([f], L, {})
    with pytest.raises(ValueError, match="L must be"):
        value_growth([f], -1.0, {})


@pytest.mark.parametrize("sigmas", [(), (0.0,), (1e-6, -1.0), (math.inf,)])
def test_solve_margin_refuses_bad_margins(sigmas):
    with pytest.raises(ValueError, match="sigmas"):
        solve_margin(_pinned, sigmas)


def test_the_gradient_pin_is_checked_against_the_round():
    """FOCUS's tracking round reads the clients through gradient differences and their sum:
    invariant under f_i + <a_i, .> with sum a_i = 0, so the pin grad f_i(x) = g is exact. A
    round pushing raw gradients is not, and gets no certificate from the pinned form."""
    from dataclasses import replace

    from flbounds.pep.pl import invariant
    from flbounds.pep.steps import local_custom

    process = _process(P, None)
    assert invariant(focus_round(2, STEP), process, BETA, L, WEIGHT)

    def run(f, pulled, state):
        v = f.gradient(pulled["x"])
        return {"z": pulled["x"], "g": state["g"] + v}, {"v": v}

    raw = replace(focus_round(1, STEP), local=local_custom(run, "raw"))
    assert not invariant(raw, process, BETA, L, WEIGHT)
