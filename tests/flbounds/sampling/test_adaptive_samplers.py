"""Tests of flbounds.sampling (samplers and the online harness) (K-Vib and the baselines)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flbounds.sampling import (
    Avare,
    Draw,
    Feedback,
    KVib,
    Mabs,
    OracleISP,
    UniformISP,
    UniformRSP,
    Vrb,
    optimal_isp_objective,
)
from flbounds.sampling.online import (
    Assumption51Feedback,
    best_fixed_cost,
    ftrl_full_information,
    kvib_online,
    regrets,
    run_online,
)


def test_vrb_anchor():
    """Official-code unit test: N=10, gamma=1, theta=0."""
    v = Vrb(10, 1, 100, gamma=1.0, theta=0.0)
    assert np.allclose(v.probabilities(), 0.1)
    draw = v.sample(np.random.default_rng(0))
    i = draw.clients[0]
    v.update(Feedback(draw, np.array([1.0])))
    assert v.s[i] == pytest.approx(11.0)
    assert v.probabilities()[i] == pytest.approx(np.sqrt(11) / (np.sqrt(11) + 9))


def test_vrb_duplicates_accumulate_and_mixing_floor():
    v = Vrb(5, 3, 100, gamma=1.0, theta=0.2)
    q = v.probabilities()
    draw = Draw(np.array([2]), np.array([2]), np.array([2 / (3 * q[2])]), q[[2]])
    v.update(Feedback(draw, np.array([1.0])))
    assert v.s[2] == pytest.approx(1 + 2 / q[2])
    assert abs(v.probabilities().sum() - 1) < 1e-12 and v.probabilities().min() >= 0.2 / 5


def test_mabs_properties():
    m = Mabs(6, 2, 100, L=1.0)
    m.delta = 0.0
    d = m.sample(np.random.default_rng(1))
    m.update(Feedback(d, np.ones(d.clients.size)))
    assert np.allclose(m.probabilities(), 1 / 6)
    m = Mabs(4, 1, 100, L=1.0)
    q = m.probabilities()
    for _ in range(50):  # constant feedback a_0 > a_1 on forced draws
        for i, val in ((0, 1.0), (1, 0.5)):
            m.update(Feedback(Draw(np.array([i]), np.array([1]), np.ones(1), q[[i]]),
                              np.array([val])))
    assert m.probabilities()[0] > m.probabilities()[1]
    # duplicates: count 2 equals two single updates
    a, b = Mabs(4, 2, 100, L=1.0), Mabs(4, 2, 100, L=1.0)
    q = a.probabilities()
    a.update(Feedback(Draw(np.array([3]), np.array([2]), np.ones(1), q[[3]]), np.array([0.7])))
    for _ in range(2):
        b.update(Feedback(Draw(np.array([3]), np.array([1]), np.ones(1), q[[3]]),
                          np.array([0.7])))
    np.testing.assert_allclose(a.u, b.u)


def test_feedback_order_is_by_client_id():
    q = np.full(4, 0.25)
    d1 = Draw(np.array([0, 2]), np.array([1, 1]), np.ones(2), q[[0, 2]])
    d2 = Draw(np.array([2, 0]), np.array([1, 1]), np.ones(2), q[[2, 0]])
    a, b = Vrb(4, 2, 100, gamma=1.0), Vrb(4, 2, 100, gamma=1.0)
    a.update(Feedback(d1, np.array([1.0, 2.0])))
    b.update(Feedback(d2, np.array([2.0, 1.0])))
    np.testing.assert_allclose(a.s, b.s)


def test_avare_kkt():
    av = Avare(8, 2, G=1.0)
    assert np.allclose(av.probabilities(), 1 / 8)
    av.m = np.array([0.0, 0.01, 1, 2, 3, 4, 5, 9.0])
    q = av.probabilities()
    assert abs(q.sum() - 1) < 1e-12 and q.min() >= av.p_min - 1e-15
    free = q > av.p_min + 1e-12
    ratio = av.m[free] / q[free]
    assert np.ptp(ratio) < 1e-9 * ratio.max()
    assert np.all(av.m[~free] / av.p_min <= ratio.max() * (1 + 1e-9))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.integers(3, 30), st.integers(0, 2**31), st.floats(0.0, 1.0))
def test_kvib_mixing_invariants(n, seed, theta):
    rng = np.random.default_rng(seed)
    k = float(rng.uniform(1, n))
    s = KVib(n, k, 1000, gamma=0.01, theta=theta)
    s.omega = rng.lognormal(0, 2, n)
    p = s.probabilities()
    assert abs(p.sum() - k) < 1e-9 * k
    assert p.min() >= theta * k / n - 1e-12 and p.max() <= 1 + 1e-12


@pytest.mark.parametrize("make", [
    lambda: UniformISP(6, 2), lambda: UniformRSP(6, 2), lambda: KVib(6, 2, 50, G=1.0),
    lambda: Vrb(6, 2, 50, G=1.0), lambda: Mabs(6, 2, 50, G=1.0), lambda: Avare(6, 2),
])
def test_estimators_unbiased_mc(make):
    rng = np.random.default_rng(5)
    z = rng.standard_normal((6, 2)) * np.arange(1, 7)[:, None]
    s = make()
    if isinstance(s, KVib):
        s.omega = rng.lognormal(size=6)
    n_draws = 20000
    est = np.empty((n_draws, 2))
    for m in range(n_draws):
        d = s.sample(rng)
        est[m] = (d.weights[:, None] * z[d.clients]).sum(axis=0)
    se = est.std(axis=0, ddof=1) / np.sqrt(n_draws)
    assert np.all(np.abs(est.mean(axis=0) - z.sum(axis=0)) <= 4.5 * se)


def test_oracle_uses_revealed_values():
    o = OracleISP(3, 2)
    o.reveal(np.array([1.0, 3.0, 6.0]))
    np.testing.assert_allclose(o.probabilities(), [0.25, 0.75, 1.0], atol=1e-10)


@pytest.mark.parametrize("variant", ["paper", "code"])
def test_kernel_matches_sampler_class(variant):
    fb = Assumption51Feedback.generate(np.random.default_rng(2), 40)
    slow = run_online(KVib(40, 5, 700, G=fb.G, variant=variant), fb, 700,
                      np.random.default_rng(9))
    fast = kvib_online(fb, 700, 5, np.random.default_rng(9), G=fb.G, variant=variant, chunk=128)
    np.testing.assert_allclose(fast.costs, slow.costs, rtol=1e-12)
    np.testing.assert_array_equal(fast.sizes, slow.sizes)


def test_regret_bookkeeping():
    fb = Assumption51Feedback.generate(np.random.default_rng(3), 20, profile="quantile")
    t, k = 300, 3.0
    rows = np.array([fb.values(s) for s in range(1, t + 1)])
    np.testing.assert_allclose(fb.squared_sums(t), (rows**2).sum(0), rtol=1e-12)
    opt = sum(optimal_isp_objective(r, k) for r in rows)
    assert fb.sum_optimal_costs(t, k) == pytest.approx(opt, rel=1e-12)
    tr = ftrl_full_information(fb, t, k, fb.G**2)
    r = regrets(tr.costs, fb, k)
    assert r.t_bfp >= 0 and r.best_fixed == pytest.approx(
        best_fixed_cost((rows**2).sum(0), k))
    assert r.dynamic == pytest.approx(tr.costs.sum() - opt)


def test_bad_inputs():
    with pytest.raises(ValueError, match="n_rounds"):
        KVib(100, 2, 10, G=1.0)
    with pytest.raises(ValueError, match="variant"):
        KVib(10, 2, 100, G=1.0, variant="x")
    with pytest.raises(ValueError, match="budget"):
        UniformISP(5, 6)
    s = UniformISP(4, 2)
    d = s.sample(np.random.default_rng(0))
    with pytest.raises(ValueError, match="feedback"):
        s.update(Feedback(d, -np.ones(d.clients.size)))


def test_ftrl_full_information_is_the_per_round_water_filling():
    """Rounds after the first go to the compiled kernel directly: the same numbers as
    optimal_isp_probabilities every round, and a bad budget is refused."""
    from flbounds.sampling import optimal_isp_probabilities

    fb = Assumption51Feedback.generate(np.random.default_rng(8), 9)
    k, gamma, acc = 2.5, 0.3, np.zeros(9)
    tr = ftrl_full_information(fb, 60, k, gamma)
    for t in range(1, 61):
        p = optimal_isp_probabilities(np.sqrt(acc + gamma), k)
        pi = fb.values(t)
        assert tr.costs[t - 1] == np.sum(pi * pi / p) and tr.z[t - 1] == k - np.sum(p >= 1.0)
        acc += pi * pi
    with pytest.raises(ValueError, match="k must satisfy"):
        ftrl_full_information(fb, 5, 10.0, gamma)
