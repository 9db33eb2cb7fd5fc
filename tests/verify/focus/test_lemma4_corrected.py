"""FOCUS Lemma 4 corrected: holds where the printed lemma fails, and only with the factor N+1."""

import pytest

from verify.focus.lemma4.corrected import corrected_constant, printed_constant, rare_sides
from verify.focus.one_round import ROUNDING

WITNESSES = [(4, 0.02, 80), (6, 0.05, 20), (8, 0.1, 10)]


@pytest.mark.parametrize(("n", "p", "k"), WITNESSES)
def test_corrected_bound_holds_on_the_counterexample_family(n, p, k):
    lhs, rhs = rare_sides(n, p, k, corrected_constant)
    assert lhs <= rhs * (1 + ROUNDING)


@pytest.mark.parametrize(("n", "p", "k"), WITNESSES)
def test_removing_the_factor_breaks_the_bound(n, p, k):
    lhs, rhs = rare_sides(n, p, k, printed_constant)
    assert lhs > rhs * (1 + ROUNDING)


@pytest.mark.parametrize("k", [0, 1, 10])
def test_single_always_participating_client_edge_case(k):
    """N = 1, p = 1, tau = 1: q' = 1, the case the derivation handles without Young's split."""
    lhs, rhs = rare_sides(1, 1.0, k, corrected_constant)
    assert lhs <= rhs * (1 + ROUNDING)
