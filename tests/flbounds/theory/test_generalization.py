"""The generalization engine of FedALS checks against slow per-draw recomputations."""

import numpy as np
import pytest

from flbounds.theory.data_models import (
    RidgeModel,
    SoftmaxPool,
    logistic_pool,
)
from flbounds.theory.generalization import one_round_batch, one_round_draws, summarize_bound
from flbounds.theory.generalization_rounds import batch_plan, one_pass_plan, ridge_local_sgd
from flbounds.theory.ols import ols_averaged_gap, ols_local_gap, ols_nonidness


def _ridge(K=3, d=4, lam=0.2, seed=0):
    rng = np.random.default_rng(seed)
    return RidgeModel(rng.standard_normal((K, d)), 0.7, lam), rng


def _naive_risk(X, y, theta, lam):
    return 0.5 * np.mean((X @ theta - y) ** 2) + 0.5 * lam * theta @ theta


def test_ridge_statistics_match_samples():
    model, rng = _ridge()
    data = model.sample(rng, 2, 9)
    theta = rng.standard_normal((2, 3, 4))
    risk = model.empirical_risk(data, theta)
    for t in range(2):
        for k in range(3):
            ref = _naive_risk(data.X[t, k], data.y[t, k], theta[t, k], model.lam)
            np.testing.assert_allclose(risk[t, k], ref, rtol=1e-12)
    erm = model.erm(data)
    np.testing.assert_allclose(model.empirical_grad(data, erm), 0.0, atol=1e-12)


def test_ridge_population_risk_against_large_sample():
    model, rng = _ridge(K=1)
    theta = rng.standard_normal((1, 1, 4))
    data = model.sample(rng, 1, 400_000)
    np.testing.assert_allclose(model.empirical_risk(data, theta), model.population_risk(theta),
                               rtol=2e-2)
    ref = model.reference_theta
    grad = (ref - model.theta_star) * model.second_moment + model.lam * ref
    np.testing.assert_allclose(grad, 0.0, atol=1e-12)


def test_one_round_batch_against_naive_loops():
    model, rng = _ridge()
    w = np.array([0.5, 0.3, 0.2])
    data, copy = model.sample(rng, 2, 8), model.sample(rng, 2, 8)
    theta, theta_c = model.erm(data), model.erm(copy)
    dr = one_round_batch(model, w, data, copy, theta, theta_c, local_is_erm=True)
    ref_avg = w @ model.reference_theta
    for t in range(2):
        avg = w @ theta[t]
        gap = 0.0
        for k in range(3):
            pop = model.population_risk(avg[None, None].repeat(3, 1))[0, k]
            pop_ref = model.population_risk(ref_avg[None, None].repeat(3, 1))[0, k]
            emp = _naive_risk(data.X[t, k], data.y[t, k], avg, model.lam)
            emp_ref = _naive_risk(data.X[t, k], data.y[t, k], ref_avg, model.lam)
            gap += w[k] * (pop - emp - pop_ref + emp_ref)
            local = _naive_risk(data.X[t, k], data.y[t, k], theta[t, k], model.lam)
            np.testing.assert_allclose(dr.nonid[t, k], emp - local, rtol=1e-10, atol=1e-13)
            replaced = avg + w[k] * (theta_c[t, k] - theta[t, k])
            loo = (_naive_risk(copy.X[t, k], copy.y[t, k], avg, model.lam)
                   - _naive_risk(copy.X[t, k], copy.y[t, k], replaced, model.lam))
            np.testing.assert_allclose(dr.loo[t, k], loo, rtol=1e-10, atol=1e-13)
            np.testing.assert_allclose(dr.v_sq[t, k], np.sum((avg - replaced) ** 2), rtol=1e-12)
        np.testing.assert_allclose(dr.gap[t], gap, rtol=1e-10, atol=1e-13)
    assert dr.sc_slack.min() > -1e-12 and dr.pl_slack.min() > -1e-12


def test_single_client_has_no_nonidness():
    model, rng = _ridge(K=1)
    dr = one_round_draws(model, [1.0], 20, 50, rng)
    np.testing.assert_allclose(dr.gap, dr.local_gap[:, 0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dr.nonid, 0.0, atol=1e-13)
    s = summarize_bound(dr, [1.0], model.mu, model.L, rng)
    np.testing.assert_allclose(s.bound, model.L / model.mu * s.G[0], rtol=1e-12)


def test_ols_formulas_consistent():
    # K = 1: the averaged gap is the local gap and D = 0.
    assert ols_averaged_gap(5, 40, 1) == pytest.approx(ols_local_gap(5, 40), rel=1e-14)
    assert ols_nonidness(5, 40, 1) == 0.0
    with pytest.raises(ValueError):
        ols_local_gap(5, 6)


def test_softmax_pool_newton_and_gradient():
    rng = np.random.default_rng(4)
    pool = logistic_pool(rng, rng.standard_normal((2, 3)), 200, 0.1)
    data = pool.sample(rng, 3, 15)
    erm = pool.erm(data)
    assert np.max(np.abs(pool.empirical_grad(data, erm))) <= 1e-12
    theta = rng.standard_normal((3, 2, pool.dim))
    g = pool.empirical_grad(data, theta)
    h = 1e-6
    for j in range(pool.dim):
        e = np.zeros(pool.dim)
        e[j] = h
        fd = (pool.empirical_risk(data, theta + e) - pool.empirical_risk(data, theta - e)) / (2 * h)
        np.testing.assert_allclose(g[..., j], fd, rtol=1e-6, atol=1e-9)
    X, c = pool._gather(data)
    H = pool._hessian(X, theta)
    for j in range(pool.dim):
        e = np.zeros(pool.dim)
        e[j] = h
        fd = (pool.empirical_grad(data, theta + e) - pool.empirical_grad(data, theta - e)) / (2 * h)
        np.testing.assert_allclose(H[..., :, j], fd, rtol=1e-5, atol=1e-8)
    assert pool.L == pytest.approx(0.5 + 0.1)


def test_local_sgd_against_loop():
    model, rng = _ridge(K=2, d=3)
    data = model.sample(rng, 2, 10)
    plan = batch_plan(rng, 2, 2, 10, 4, 3)
    got = ridge_local_sgd(model, data, plan, step=0.3)
    for t in range(2):
        for k in range(2):
            th = np.zeros(3)
            for s in range(4):
                Xb, yb = data.X[t, k, plan[t, k, s]], data.y[t, k, plan[t, k, s]]
                th = th - 0.3 * (Xb.T @ (Xb @ th - yb) / 3 + model.lam * th)
            np.testing.assert_allclose(got[t, k], th, rtol=1e-12, atol=1e-14)
    assert one_pass_plan(1, 1, 3, 2)[0, 0].tolist() == [[0, 1], [2, 3], [4, 5]]


def test_bad_inputs():
    with pytest.raises(ValueError, match="theta_star"):
        RidgeModel(np.zeros(3))
    with pytest.raises(ValueError, match="lam"):
        RidgeModel(np.zeros((2, 3)), lam=-1.0)
    model, rng = _ridge()
    with pytest.raises(ValueError, match="weights"):
        one_round_draws(model, [0.5, 0.5, 0.5], 10, 5, rng)
    with pytest.raises(ValueError, match="n_samples"):
        model.sample(rng, 2, 0)
    with pytest.raises(ValueError, match="n_draws"):
        one_round_draws(model, [1 / 3] * 3, 10, 1, rng)
    with pytest.raises(ValueError, match="labels"):
        SoftmaxPool(np.zeros((1, 4, 2)), np.full((1, 4), 3), 2, 0.1)


def test_fixed_data_rounds_against_loop():
    from flbounds.theory.generalization_rounds import r_round_fedavg_fixed_data

    model, _ = _ridge(K=2, d=3)
    w = np.array([0.25, 0.75])
    tr = r_round_fedavg_fixed_data(model, w, np.random.default_rng(4), n_draws=2, n_rounds=3,
                                   local_steps=2, batch_size=3, step=0.3, n_samples=8)
    rng = np.random.default_rng(4)                 # replay the same stream by hand
    data = model.sample(rng, 2, 8)
    server = np.zeros((2, 3))
    for _ in range(3):
        plan = batch_plan(rng, 2, 2, 8, 2, 3)
        theta = np.empty((2, 2, 3))
        for t in range(2):
            for k in range(2):
                th = server[t].copy()
                for s in range(2):
                    Xb, yb = data.X[t, k, plan[t, k, s]], data.y[t, k, plan[t, k, s]]
                    th = th - 0.3 * (Xb.T @ (Xb @ th - yb) / 3 + model.lam * th)
                theta[t, k] = th
        server = np.einsum("k,tki->ti", w, theta)
    for t in range(2):
        train = sum(w[k] * _naive_risk(data.X[t, k], data.y[t, k], server[t], model.lam)
                    for k in range(2))
        np.testing.assert_allclose(tr.train_risk[t], train, rtol=1e-12)
    with pytest.raises(ValueError, match="n_rounds"):
        r_round_fedavg_fixed_data(model, w, rng, n_draws=2, n_rounds=0, local_steps=1,
                                  batch_size=1, step=0.1, n_samples=4)


def test_eq56_bound_below_thmB1_bound():
    model, rng = _ridge(K=3, d=4)
    w = np.full(3, 1 / 3)

    def local(data, g):
        return ridge_local_sgd(model, data, batch_plan(g, data.X.shape[0], 3, 12, 3, 4),
                               step=0.5)

    dr = one_round_draws(model, w, 12, 50, rng, local=local)
    b37 = summarize_bound(dr, w, model.mu, model.L, np.random.default_rng(0), kind="thmB1")
    b56 = summarize_bound(dr, w, model.mu, model.L, np.random.default_rng(0), kind="eq56")
    assert b56.first_term == b37.first_term
    assert b56.bound < b37.bound
    with pytest.raises(ValueError, match="kind"):
        summarize_bound(dr, w, model.mu, model.L, rng, kind="other")


def test_bootstrap_from_indices_has_the_multinomial_law():
    """``bootstrap="indices"``: the same bound, a bootstrap SE from counts of uniform indices
    (each replicate's counts sum to T, mean 1 and variance 1 - 1/T per draw, as multinomial
    counts), close to the multinomial one; a bad name is refused."""
    model, rng = _ridge(K=3, d=4)
    w = np.full(3, 1 / 3)
    dr = one_round_draws(model, w, 12, 400, rng)
    multi = summarize_bound(dr, w, model.mu, model.L, np.random.default_rng(1), n_boot=2000)
    picks = summarize_bound(dr, w, model.mu, model.L, np.random.default_rng(1), n_boot=2000,
                            bootstrap="indices")
    assert picks.bound == multi.bound and picks.gap == multi.gap
    # SD of a bootstrap SD from 2000 replicates: about 1.6% of it; 5 of those for the pair
    assert picks.bound_se == pytest.approx(multi.bound_se, rel=0.12)
    with pytest.raises(ValueError, match="bootstrap"):
        summarize_bound(dr, w, model.mu, model.L, rng, bootstrap="poisson")


def test_single_threaded_blas_limits_every_blas_and_restores_them():
    from threadpoolctl import threadpool_info

    from flbounds.theory.generalization import single_threaded_blas

    before = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    for _ in range(2):       # the second call reuses the controller
        with single_threaded_blas():
            inside = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
            assert inside and all(n == 1 for n in inside)
        assert [i["num_threads"] for i in threadpool_info()
                if i["user_api"] == "blas"] == before
