"""The evidence behind SAFARI's accusations and their corrected companions: each claim changes
verdict when its bug is planted (a wrong constant, a wrong transcription, a broken
hypothesis)."""

import numpy as np
import pytest

import paper_checks.safari as tables
from flbounds.ledger import get


def test_fmnist_check_uses_the_integer_print_and_still_fails():
    """80 vs 80.71 exceeds the 0.5 rounding of an integer print; a Table 7 entry of 80.5
    would be within it."""
    assert get("safari.tables.fmnist_fedavg_consistent").check(seed=0).verdict == "violated"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tables, "T7_FEDAVG", 80.5)
        assert get("safari.tables.fmnist_fedavg_consistent").check(seed=0).verdict == "holds"


def test_both_readings_of_the_m_sentence():
    """The literal reading fails and the other holds; swapping m = 1 and the largest m in
    Table 10 (a planted transcription error) flips the second."""
    assert get("safari.tables.m_negative_effect_text").check(seed=0).verdict == "violated"
    assert get("safari.tables.small_m_hurts_reading").check(seed=0).verdict == "holds"
    swapped = dict(tables.T10)
    swapped[1], swapped[6] = tables.T10[6], tables.T10[1]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tables, "T10", swapped)
        assert get("safari.tables.small_m_hurts_reading").check(seed=0).verdict == "violated"


def test_appendix_spread_check_catches_a_cell_outside_the_seeds():
    """Table 1's MNIST s = 4, p = 1 entry moved by 0.2 (the std there is 0.04) is no longer
    one of Table 8's runs."""
    assert get("safari.tables.appendix_grids_contain_main_runs").check(seed=0).verdict == "holds"
    moved = {k: dict(v) for k, v in tables.T1.items()}
    row = list(moved["mnist"][4])
    row[3] += 0.2
    moved["mnist"][4] = tuple(row)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tables, "T1", moved)
        out = get("safari.tables.appendix_grids_contain_main_runs").check(seed=0)
    assert out.verdict == "violated"


def test_shrunk_thm4_counterexample_needs_the_q_condition():
    """The shrunk counterexample is violated with every hypothesis true; started at x_0 = 1.5
    the printed q-condition fails on the seeds and the same run is not-applicable."""
    claim = get("safari.thm4.printed_bound_shrunk")
    out = claim.check(seed=0)
    assert out.verdict == "violated"
    assert out.details["ratio_measured_over_bound"] > 1.5
    moved = claim.check(seed=0, x0=1.5)
    assert moved.verdict == "not-applicable"
    assert any(k.startswith("q:") and v is False for k, v in moved.hypotheses.items())


def test_corrected_claims_name_their_printed_claims():
    pairs = {"safari.thm1.chernoff_step": "safari.thm1.binomial_parameter",
             "safari.assumption2.equality_inside": "safari.assumption2.example_fails_outside",
             "safari.assumption2.mixture_alpha": "safari.assumption2.endpoint_target",
             "safari.thm4.q_condition_min_reading": "safari.thm4.printed_bound",
             "safari.tables.small_m_hurts_reading": "safari.tables.m_negative_effect_text"}
    for fixed, printed in pairs.items():
        assert get(fixed).corrects == printed
        assert get(printed).expected == "violated"
    assert np.isfinite(get("safari.thm4.printed_bound_shrunk").check(seed=0).measured)
