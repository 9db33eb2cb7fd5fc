"""App. G incremental K-Vib: sorted bookkeeping equals re-sorting, water level equals the
library's solver, bad input."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flbounds.sampling import optimal_isp_probabilities
from flbounds.sampling.incremental import SortedWeights, waterfill_sorted

PROPERTY = settings(max_examples=60, deadline=None, derandomize=True)


@given(st.integers(1, 30), st.integers(0, 2**32 - 1), st.integers(1, 200))
@example(1, 0, 5)
@PROPERTY
def test_sorted_weights_match_resorting(n, seed, n_updates):
    rng = np.random.default_rng(seed)
    weights, omega = SortedWeights(n), np.zeros(n)
    for _ in range(n_updates):
        j = int(rng.integers(n))
        inc = float(rng.choice([0.0, rng.exponential()]))   # zero increments make ties
        weights.add(j, inc)
        omega[j] += inc
        np.testing.assert_array_equal(weights.values, np.sort(omega))
        np.testing.assert_array_equal(weights.omega(), omega)
        np.testing.assert_array_equal(weights.slot[weights.clients], np.arange(n))
    assert weights.max_per_update <= int(np.ceil(np.log2(n + 1)))


@given(st.integers(1, 40), st.integers(0, 2**32 - 1), st.floats(0.05, 1.0))
@example(1, 0, 1.0)
@PROPERTY
def test_waterfill_sorted_equals_library_solver(n, seed, fraction):
    rng = np.random.default_rng(seed)
    w = np.sort(rng.lognormal(0.0, 2.0, n))
    budget = max(fraction * n, 1e-3)
    np.testing.assert_allclose(waterfill_sorted(w, budget),
                               optimal_isp_probabilities(w, budget), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("n", [0, -1, 2.5, True])
def test_sorted_weights_bad_size(n):
    with pytest.raises(ValueError, match="n_clients"):
        SortedWeights(n)


@pytest.mark.parametrize("inc", [-1.0, np.nan, np.inf])
def test_sorted_weights_bad_increment(inc):
    with pytest.raises(ValueError, match="increment"):
        SortedWeights(3).add(0, inc)
