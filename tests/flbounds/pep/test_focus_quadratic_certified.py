"""FOCUS over the quadratic class with every solve forced inaccurate: ``focus_rate`` (one
round, the Lyapunov measure) and ``focus_rounds_rate`` with its witness (R rounds) get the
certified bound of the shared-minimizer form (the LMI duals made PSD,
flbounds.pep.certify_lmi), above the accurate value and within the bracket; LMI multipliers
scaled by 0.9 (a planted bug) give no certified number."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.pep import certify_lmi, sdp
from flbounds.pep.certify import bracket_tolerance
from flbounds.pep.witness import focus_rounds_witness, witness_tolerance

from ._planted import assert_bracketed, forced

ONE_ROUND = (1.0, 2.0, [0.3, 0.5, 0.7], 2, 0.05)
QUADRATIC = dict(consensus_weight=0.5, function_class="quadratic")
ROUNDS = (1.0, 2.0, (0.5, 0.8), 2, 0.05, 2)


def _lmi_multipliers_scaled(monkeypatch):
    real = certify_lmi.solver_lmi_duals
    monkeypatch.setattr(certify_lmi, "solver_lmi_duals",
                        lambda problem: [0.9 * z for z in real(problem)])


def test_focus_rate_over_quadratics_is_certified(no_store):
    accurate = pep.focus_rate(*ONE_ROUND, **QUADRATIC)
    forced(no_store)
    bound = pep.focus_rate(*ONE_ROUND, **QUADRATIC)
    assert_bracketed(bound, accurate)
    assert bound.gap <= bracket_tolerance(bound.worst)
    # quadratics are a subclass: below the smooth strongly convex worst case's bound
    smooth = pep.focus_rate(*ONE_ROUND, consensus_weight=0.5)
    assert bound.worst <= smooth.worst + bracket_tolerance(smooth.worst)


def test_focus_rate_refuses_scaled_lmi_multipliers(no_store):
    forced(no_store)
    _lmi_multipliers_scaled(no_store)
    with pytest.raises(sdp.PEPSolveError, match="no certified solve"):
        pep.focus_rate(*ONE_ROUND, **QUADRATIC)


def test_focus_rounds_rate_over_quadratics_is_certified(no_store):
    accurate = pep.focus_rounds_rate(*ROUNDS, function_class="quadratic")
    forced(no_store)
    bound = pep.focus_rounds_rate(*ROUNDS, function_class="quadratic")
    assert_bracketed(bound, accurate)
    _lmi_multipliers_scaled(no_store)
    with pytest.raises(sdp.PEPSolveError, match="certificate"):
        pep.focus_rounds_rate(*ROUNDS, function_class="quadratic")


def test_the_rounds_witness_replays_within_the_certified_bracket(no_store):
    """The witness is fitted to the certified form's Gram matrix: its replay (an exact lower
    bound) sits below the certified value and within the bracket plus the fit tolerance."""
    accurate = focus_rounds_witness(*ROUNDS)
    assert accurate.bracket == 0.0
    forced(no_store)
    wit = focus_rounds_witness(*ROUNDS)
    assert 0.0 < wit.bracket <= bracket_tolerance(wit.pep)
    assert accurate.pep - pep.gap_tolerance(accurate.pep) <= wit.pep
    assert wit.pep <= accurate.pep + bracket_tolerance(wit.pep)
    assert wit.replayed <= wit.pep + pep.gap_tolerance(wit.pep)
    assert abs(wit.replayed - wit.pep) <= witness_tolerance(wit)
    assert np.all(np.linalg.eigvalsh(wit.A) >= 1.0 - 1e-12)   # an instance of the class
