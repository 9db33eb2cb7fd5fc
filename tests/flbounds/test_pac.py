"""SAFARI Theorem 1 probabilities: exact values and input validation."""

import pytest

from flbounds.pac import impossibility_chernoff_bound, impossibility_event_probability


@pytest.mark.parametrize(("M", "m", "n", "expected"), [(2, 1, 1, 0.5625)])
def test_exact_small_case(M, m, n, expected):
    # Bin(2, 1/4) < 1 means no x_2 draw: (3/4)^2.
    assert impossibility_event_probability(M, m, n) == pytest.approx(expected, rel=1e-15)


def test_probability_grows_with_n():
    values = [impossibility_event_probability(10, 5, n) for n in (1, 10, 100)]
    assert values == sorted(values) and values[-1] > 0.999


@pytest.mark.parametrize(("args", "name"), [((10, 10, 1), "n_participating"),
                                            ((10, -1, 1), "n_participating"),
                                            ((10, 5, 0), "n_samples"),
                                            ((0, 0, 1), "n_clients"),
                                            ((10, 5.0, 1), "n_participating")])
def test_rejects_bad_input(args, name):
    with pytest.raises(ValueError, match=name):
        impossibility_event_probability(*args)
    with pytest.raises(ValueError, match=name):
        impossibility_chernoff_bound(*args)
