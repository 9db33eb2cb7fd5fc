"""The bisection of many weight vectors of one size at once gives each vector's own
bisection bit for bit (the reference solver of kvib.lemma_b8.floor_solution)."""

import numpy as np

from verify.kvib.instances import random_budget, random_weights
from verify.kvib.lemma_b8 import _bisections
from verify.kvib.solver import bisection_probabilities, bisection_probabilities_rows


def test_rows_are_the_one_row_bisections():
    rng = np.random.default_rng(5)
    for n in (2, 9, 130):
        rows = rng.lognormal(0.0, 2.0, (20, n))
        ks = rng.uniform(1, n, 20)
        p_mins = rng.uniform(0, 1, 20) * ks / n
        p_mins[0] = 0.0
        got = bisection_probabilities_rows(rows, ks, p_mins)
        for row, k, p_min, p in zip(rows, ks, p_mins, got, strict=True):
            assert np.array_equal(p, bisection_probabilities(row, k, p_min))


def test_instances_of_mixed_sizes_keep_their_order():
    rng = np.random.default_rng(6)
    instances = []
    for _ in range(60):
        a = random_weights(rng, 12)
        k = random_budget(rng, a.size)
        instances.append(dict(a=a, budget=k, p_min=float(rng.uniform(0, k / a.size))))
    for inst, p in zip(instances, _bisections(instances), strict=True):
        assert np.array_equal(p, bisection_probabilities(inst["a"], inst["budget"],
                                                         inst["p_min"]))
