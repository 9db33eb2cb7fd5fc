"""The raw PEPit rows of ``benchmarks/pep_sizes.py``'s table ``against_n`` solve the same SDPs
as the described rounds they are set beside (same Gram size, constraints and value)."""

import pytest

from benchmarks.pep_sizes import _described, _halves, _raw_fedavg_common, _raw_focus_common
from flbounds import pep
from flbounds.participation import Bernoulli


@pytest.mark.parametrize("algorithm", ["fedavg", "focus"])
def test_raw_pepit_twin_is_the_direct_sdp(algorithm):
    n = 4
    _, p = _halves(n)
    direct = pep.worst_case(*_described(algorithm, n), Bernoulli(p))
    raw = (_raw_fedavg_common(n, 3, 0.1, Bernoulli(p)) if algorithm == "fedavg" else
           _raw_focus_common(n, 2, 0.1 / n, 1.0 / n, Bernoulli(p)))
    assert (raw.gram_size, raw.n_constraints) == (direct.gram_size, direct.n_constraints)
    assert abs(raw.worst - direct.worst) <= 2 * pep.gap_tolerance(direct.worst)


def test_a_raw_focus_twin_at_another_step_is_told_apart():
    """Planted bug: the twin at the step of tau = 3's row (0.1 / 3 for N = 4) is not the
    direct SDP's value."""
    n = 4
    _, p = _halves(n)
    direct = pep.worst_case(*_described("focus", n), Bernoulli(p))
    raw = _raw_focus_common(n, 2, 0.1 / 3, 1.0 / n, Bernoulli(p))
    assert abs(raw.worst - direct.worst) > 2 * pep.gap_tolerance(direct.worst)
