"""Set functions and maximizers of flbounds.submodular (SubTrunc / UnionFL, [004])."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flbounds import submodular as sm
from flbounds.kernels.submodular_gains import (
    fl_gains,
    fl_update,
    fl_values,
    naive_fl_greedy,
    weight_sums,
)
from flbounds.selection import exhaustive_margins, sampled_margins

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def _dissim(seed, n, dim=3):
    x = np.random.default_rng(seed).normal(size=(n, dim)) * np.linspace(0.5, 2, dim)
    return np.linalg.norm(x[:, None] - x[None], axis=-1)


# --- NumPy twins of the numba kernels --------------------------------------------------------
def gains_twin(dissim, cur, candidates):
    return np.maximum(cur[:, None] - dissim[:, candidates], 0.0).sum(axis=0)


def values_twin(dissim, offsets, index_sets, sizes):
    out = []
    for row, s in zip(index_sets, sizes, strict=True):
        cover = np.minimum(offsets, dissim[:, row[:s]].min(axis=1)) if s else offsets
        out.append(np.sum(offsets - cover))
    return np.array(out)


def test_kernels_match_numpy_twins():
    rng = np.random.default_rng(1)
    d = _dissim(1, 30)
    d[0, 5] += 1.0  # not symmetric: kernels must read d^T correctly
    dt = np.ascontiguousarray(d.T)
    cur = d.max(axis=1) * rng.random(30)
    cand = np.arange(0, 30, 3, dtype=np.int64)
    out = np.empty(cand.size)
    fl_gains(dt, cur, cand, out)
    np.testing.assert_allclose(out, gains_twin(d, cur, cand), rtol=1e-12)
    sets = rng.integers(0, 30, size=(50, 4)).astype(np.int64)
    sizes = rng.integers(0, 5, size=50).astype(np.int64)
    vals = np.empty(50)
    fl_values(dt, d.max(axis=1), sets, sizes, vals)
    np.testing.assert_allclose(vals, values_twin(d, d.max(axis=1), sets, sizes), rtol=1e-12)
    c2 = cur.copy()
    fl_update(dt, c2, 7)
    np.testing.assert_array_equal(c2, np.minimum(cur, d[:, 7]))
    sel, g = np.empty(5, dtype=np.int64), np.empty(5)
    naive_fl_greedy(dt, d.max(axis=1), 5, sel, g)
    assert sel.tolist() == sm.greedy(sm.facility_location(d), 5)


# --- validation -----------------------------------------------------------------------------
@pytest.mark.parametrize("bad, word", [(np.ones((3, 4)), "square"),
                                       (np.array([[0, np.nan], [1, 0]]), "finite"),
                                       (-np.ones((2, 2)), "nonnegative")])
def test_bad_dissim_raises(bad, word):
    with pytest.raises(ValueError, match=f"dissim.*{word}"):
        sm.facility_location(bad)
    with pytest.raises(ValueError, match="dissim"):
        sm.subtrunc(bad, np.ones(len(bad)), lam=1, b=1)


def test_bad_parameters_raise():
    d = _dissim(0, 5)
    with pytest.raises(ValueError, match="b must be > 0"):
        sm.subtrunc(d, np.ones(5), lam=1.0, b=0.0)
    with pytest.raises(ValueError, match="lam must be >= 0"):
        sm.subtrunc(d, np.ones(5), lam=-0.1, b=1.0)
    with pytest.raises(ValueError, match="losses"):
        sm.subtrunc(d, -np.ones(5), lam=1.0, b=1.0)
    with pytest.raises(ValueError, match="phi"):
        sm.subtrunc(d, np.ones(5), lam=1.0, b=1.0, phi=lambda x: x - 2)
    with pytest.raises(ValueError, match="mu must be >= 0"):
        sm.unionfl(d, [0], mu=-1)
    f = sm.facility_location(d)
    for algo in (sm.greedy, sm.lazy_greedy, sm.brute_force_max, sm.distorted_greedy):
        with pytest.raises(ValueError, match="k must satisfy"):
            algo(sm.unionfl(d, [0], mu=1) if algo is sm.distorted_greedy else f, 6)
    with pytest.raises(ValueError, match="S must hold indices"):
        f.value([7])


# --- values and limiting cases ---------------------------------------------------------------
def test_facility_location_values():
    d = np.array([[0.0, 0.1, 5.0], [0.1, 0.0, 4.9], [5.0, 4.9, 0.0]])
    f = sm.facility_location(d)
    assert f.value([]) == 0.0
    assert f.value([0]) == pytest.approx(9.8)
    assert f.value([0, 1, 2]) == pytest.approx(d.max(axis=1).sum())
    h = sm.unionfl(d, [1, 2], mu=10.0)
    assert h.value([0, 2]) == pytest.approx(4.8)
    assert sm.greedy(h, 2) == [0, 2]
    assert sm.brute_force_max(h, 2) == (pytest.approx(9.8), [0])
    assert sm.distorted_greedy(h, 2) == [0]


def test_scalar_offset_shifts_nonempty_sets():
    d = _dissim(2, 6)
    big = 2 * d.sum(axis=0).max()
    f, g = sm.facility_location(d), sm.FacilityLocation(d, offset=big)
    for S in ([0], [1, 3], [0, 2, 4, 5]):
        assert g.value(S) == pytest.approx(big - d[:, S].min(axis=1).sum())
        assert g.value(S) - f.value(S) == pytest.approx(big - d.max(axis=1).sum())
    assert g.value([]) == 0.0


# --- hypothesis properties ------------------------------------------------------------------
@SETTINGS
@given(seed=st.integers(0, 10**6), n=st.integers(1, 8), lam=st.floats(0, 5),
       b=st.floats(0.01, 5), phi=st.sampled_from(["log1p", "identity", "sqrt"]))
@example(seed=0, n=1, lam=0.0, b=0.01, phi="log1p")
def test_subtrunc_is_normalized_monotone_submodular(seed, n, lam, b, phi):
    rng = np.random.default_rng(seed)
    f = sm.subtrunc(_dissim(seed, n), rng.exponential(size=n), lam=lam, b=b, phi=phi)
    m = exhaustive_margins(f)
    tol = 1e-9 * max(1.0, abs(f.value(range(n))))
    assert f.value([]) == 0.0
    assert m.dr_min >= -tol and m.mono_min >= -tol


@SETTINGS
@given(seed=st.integers(0, 10**6), n=st.integers(1, 9), k=st.integers(0, 9))
def test_lazy_greedy_equals_greedy_and_incremental_values(seed, n, k):
    k = min(k, n)
    rng = np.random.default_rng(seed)
    f = sm.subtrunc(_dissim(seed, n), rng.exponential(size=n), lam=1.0, b=1.1)
    tr = sm.greedy_trace(f, k)
    assert sm.lazy_greedy(f, k) == tr.selected
    assert sum(tr.gains) == pytest.approx(f.value(tr.selected), abs=1e-9)
    state = f.start()
    for e in tr.selected:
        f.push(state, e)
    assert state.value == pytest.approx(f.value(tr.selected), abs=1e-9)


@SETTINGS
@given(seed=st.integers(0, 10**6), n=st.integers(2, 9), k=st.integers(1, 4))
def test_greedy_meets_the_one_minus_one_over_e_bound(seed, n, k):
    k = min(k, n)
    rng = np.random.default_rng(seed)
    f = sm.subtrunc(_dissim(seed, n), rng.exponential(size=n), lam=2.0, b=1.0)
    opt, _ = sm.brute_force_max(f, k)
    assert f.value(sm.greedy(f, k)) >= (1 - (1 - 1 / k) ** k) * opt - 1e-9


@SETTINGS
@given(seed=st.integers(0, 10**6), n=st.integers(2, 9), k=st.integers(1, 4),
       mu=st.floats(0, 10))
def test_distorted_greedy_guarantee(seed, n, k, mu):
    k = min(k, n)
    rng = np.random.default_rng(seed)
    h = sm.unionfl(_dissim(seed, n), rng.random(n) < 0.5, mu=mu)
    S = sm.distorted_greedy(h, k)
    # compare against every feasible set T: h(S) >= (1-1/e) G(T) - c(T)
    G = h.submodular_part
    best = max((1 - np.exp(-1)) * G.value(T) - h.cost[list(T)].sum()
               for T in _subsets(n, k))
    assert h.value(S) >= best - 1e-9


def _subsets(n, k):
    from itertools import combinations
    for s in range(k + 1):
        yield from combinations(range(n), s)


def test_stochastic_greedy_with_full_sample_is_greedy():
    rng = np.random.default_rng(3)
    f = sm.subtrunc(_dissim(3, 20), rng.exponential(size=20), lam=1.0, b=1.1)
    keys = sm.stochastic_greedy_plan(rng, 20, 5)
    assert sm.stochastic_greedy(f, 5, sample_size=20, keys=keys) == sm.greedy(f, 5)
    assert sm.stochastic_sample_size(100, 10, np.exp(-1)) == 10
    with pytest.raises(ValueError, match="keys"):
        sm.stochastic_greedy(f, 5, sample_size=3, keys=keys[:2])


def test_families_and_controls():
    w = np.array([2.0, -2.0])
    t = sm.Truncated(sm.Modular(w), 1.0)
    assert exhaustive_margins(t).dr_min == pytest.approx(-1.0)
    cov = sm.WeightedCoverage(np.array([[1, 1, 0], [0, 1, 1], [1, 0, 0]], bool), [1., 2., 3.])
    assert cov.value([0, 1]) == 6.0 and exhaustive_margins(cov).dr_min >= 0
    rank = sm.PartitionMatroidRank([0, 0, 1, 1, 1], [1, 2])
    assert rank.value([0, 1, 2, 3, 4]) == 3.0 and exhaustive_margins(rank).dr_min >= 0
    com = sm.ConcaveOfModular([1.0, 2.0, 3.0], "min", cap=2.5)
    assert com.value([1, 2]) == 2.5
    table = sm.TableFunction([0.0, 1.0, 2.0, 2.0])
    assert sm.Composed(lambda x: -x**2, table).value([1]) == -4.0
    rng = np.random.default_rng(0)
    m = sampled_margins(sm.facility_location(_dissim(4, 40)), rng, 500)
    assert m.dr_min >= -1e-9 and m.mono_min >= -1e-9


@SETTINGS
@given(seed=st.integers(0, 10**6), n=st.integers(1, 8))
def test_batch_values_match_single_values_for_every_family(seed, n):
    rng = np.random.default_rng(seed)
    d = _dissim(seed, n)
    fams = [sm.facility_location(d), sm.FacilityLocation(d, offset=2 * d.sum(axis=0).max()),
            sm.subtrunc(d, rng.exponential(size=n), lam=1.5, b=0.7, phi="sqrt"),
            sm.unionfl(d, rng.random(n) < 0.5, mu=0.3),
            sm.WeightedCoverage(rng.random((n, 4)) < 0.5, rng.random(4)),
            sm.ConcaveOfModular(rng.random(n), "log1p"),
            sm.PartitionMatroidRank(rng.integers(0, 2, size=n), [1, 2]),
            sm.Truncated(sm.Modular(rng.random(n)), 0.5),
            sm.LinearCombination([(2.0, sm.facility_location(d)), (-1.0, sm.Modular(np.ones(n)))])]
    sets = np.array([rng.permutation(n) for _ in range(6)], dtype=np.int64)
    sizes = rng.integers(0, n + 1, size=6).astype(np.int64)
    for f in fams:
        batch = f.values(sets, sizes)
        single = [f.value(row[:s]) for row, s in zip(sets, sizes, strict=True)]
        np.testing.assert_allclose(batch, single, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("width", [1, 5, 7, 8, 9, 16, 31, 64, 100, 127, 128])
def test_weight_sums_are_numpy_masked_row_sums(width):
    """SubTrunc's truncated sums read the first sizes[m] weights of each row: the bits of
    NumPy's ``np.where(valid, weights[sets], 0).sum(axis=1)`` (pairwise order over the
    padded row), signed zeros included."""
    r = np.random.default_rng(width)
    weights = np.exp(4 * r.normal(size=width + 3))
    weights[0] = -0.0
    sets = r.integers(0, width + 3, size=(300, width))
    sets[:4] = 0
    sizes = r.integers(0, width + 1, size=300)
    out = np.empty(300)
    weight_sums(weights, sets, sizes, out)
    ref = np.where(np.arange(width)[None, :] < sizes[:, None], weights[sets], 0.0).sum(axis=1)
    assert np.array_equal(out, ref) and np.array_equal(np.signbit(out), np.signbit(ref))
