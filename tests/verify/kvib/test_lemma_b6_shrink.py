"""Lemma B.6's per-client counterexample, shrunk: the outlier's ratio crosses 1 first at the
reported N, and it agrees with the claim's own run at N = 100, R = 5."""

from verify.kvib.lemma_b6 import lemma_b6_per_client, outlier_ratio, smallest_outlier_n


def test_smallest_n_is_the_first_crossing():
    n = smallest_outlier_n(2)
    assert outlier_ratio(n, 2) > 1 >= outlier_ratio(n - 1, 2)
    ev = lemma_b6_per_client(rng=None)
    assert abs(outlier_ratio(100, 5) - ev.details["ratio"]) < 1e-12
