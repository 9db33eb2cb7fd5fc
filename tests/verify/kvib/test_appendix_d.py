"""App. D.2's FTRL paths: the water-filling of every round and eq. (47)'s sides over all round
pairs at once give the numbers of the round-by-round computation."""

import numpy as np
import pytest

from flbounds.sampling import optimal_isp_probabilities
from verify.kvib.appendix_d import TIE, FTRLPath, _paths, lemma_d2_sides, smallest_counterexample


def _sides_by_round(path, corrected):
    lhs, rhs, scale = [], [], []
    for t in range(path.p.shape[0] - 1):
        rising = path.p[t] < path.p[t + 1] * (1 - TIE)
        a0, a1 = path.a[t, rising], path.a[t + 1, rising]
        inv0, inv1 = 1 / path.p[t, rising], 1 / path.p[t + 1, rising]
        if corrected:
            u0, u1 = path.c[t] / path.z[t] / a0, path.c[t + 1] / path.z[t + 1] / a1
        else:
            zmin = min(path.z[t], path.z[t + 1])
            u0, u1 = path.c[t] / a0 / zmin, path.c[t + 1] / a1 / zmin
        lhs.append(inv0 - inv1)
        rhs.append(u0 - u1)
        scale.append(inv0 + inv1 + np.abs(u0) + np.abs(u1))
    return tuple(np.concatenate(v) for v in (lhs, rhs, scale))


@pytest.mark.parametrize("corrected", [False, True])
def test_sides_equal_the_round_by_round_computation(corrected):
    paths = [smallest_counterexample()[0], *_paths(np.random.default_rng(3), 9, 60)]
    for path in paths:
        for fast, slow in zip(lemma_d2_sides(path, corrected), _sides_by_round(path, corrected),
                              strict=True):
            assert fast.dtype == slow.dtype and np.array_equal(fast, slow)


def test_paths_water_fill_every_round_as_the_library():
    for path in _paths(np.random.default_rng(4), 6, 30):
        expected = [optimal_isp_probabilities(a, path.budget, p_min=path.p_min) for a in path.a]
        assert np.array_equal(path.p, np.array(expected))


def test_bad_budget_is_refused_before_the_rounds():
    with pytest.raises(ValueError, match="k"):
        FTRLPath(np.ones((3, 4)), 5.0, 1.0, 0.0)
