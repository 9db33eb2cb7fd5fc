"""Tests of the K-Vib FL layer and the numba water-filling kernels."""

import numpy as np
import pytest

from flbounds.algorithms.fedavg_sampler import exact_variance, fedavg_sampler, local_updates
from flbounds.kernels.waterfill import waterfill, waterfill_objectives
from flbounds.problems.generators import random_ridge
from flbounds.sampling import (
    KVib,
    OracleISP,
    UniformISP,
    UniformRSP,
    Vrb,
    optimal_isp_objective,
    optimal_isp_probabilities,
)
from flbounds.sampling.exact import design_moments, uniform_subset_design
from verify.kvib.fedprox_synthetic import fedprox_synthetic


def test_waterfill_kernels_match_numpy_solver():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(1, 40))
        a = rng.lognormal(0, 2, n)
        k = float(rng.uniform(min(1.0, n), n))
        p = np.empty(n)
        waterfill(a, k, np.empty(n, dtype=np.int64), np.empty(n), p)
        np.testing.assert_allclose(p, optimal_isp_probabilities(a, k), rtol=1e-12, atol=1e-14)
    rows = rng.lognormal(0, 2, (20, 15))
    out = np.empty(20)
    waterfill_objectives(rows, 3.0, out)
    np.testing.assert_allclose(out, [optimal_isp_objective(r, 3.0) for r in rows], rtol=1e-12)


def test_full_participation_is_plain_fedavg():
    rng = np.random.default_rng(1)
    problem = random_ridge(rng, 8, 10, 3, lam=0.1)
    step = 0.1 / problem.L
    tr = fedavg_sampler(problem, UniformISP(8, 8), rng, n_rounds=5, local_steps=3, step=step)
    x = np.zeros(3)
    for t in range(5):
        x = x - local_updates(problem, x, local_steps=3, step=step).mean(axis=0)
        np.testing.assert_allclose(tr.x[t + 1], x, rtol=1e-12, atol=1e-14)
    assert np.all(tr.variance == 0) and np.all(tr.sizes == 8)


def test_exact_variance_subset_and_oracle():
    rng = np.random.default_rng(2)
    z = rng.standard_normal((6, 2))
    pi = np.linalg.norm(z, axis=1)
    mom = design_moments(z, *uniform_subset_design(6, 2))
    assert exact_variance(UniformRSP(6, 2), z, pi) == pytest.approx(mom.variance, rel=1e-12)
    o = OracleISP(6, 2)
    o.reveal(pi)
    assert exact_variance(o, z, pi) == pytest.approx(
        optimal_isp_objective(pi, 2) - pi @ pi, rel=1e-9)


@pytest.mark.parametrize("make", [lambda n, t: KVib(n, 3, t, G=0.05),
                                  lambda n, t: Vrb(n, 3, t, G=0.05)])
def test_adaptive_fl_runs_and_records(make):
    rng = np.random.default_rng(3)
    problem = random_ridge(rng, 12, 10, 3, lam=0.5)
    q = np.full(12, 0.8)
    plan = rng.random((30, 12)) < q
    tr = fedavg_sampler(problem, make(12, 30), rng, n_rounds=30, local_steps=2,
                        step=0.05 / problem.L, availability=plan, avail_probs=q)
    assert tr.x.shape == (31, 3) and np.all(np.isfinite(tr.loss))
    assert np.all(tr.q_gap >= -1e-12) and np.all(tr.variance >= 0)


def test_softmax_problem_gradients():
    problem = fedprox_synthetic(np.random.default_rng(4), 0.5, 0.5, n_clients=5,
                                n_features=4, n_classes=3, max_samples=60)
    X = np.random.default_rng(5).standard_normal((5, problem.dim)) * 0.3
    g = problem.client_gradients(X)
    eps = 1e-6
    for j in (0, 7, problem.dim - 1):
        e = np.zeros(problem.dim)
        e[j] = eps
        fd = (problem.client_losses(X + e) - problem.client_losses(X - e)) / (2 * eps)
        np.testing.assert_allclose(fd, g[:, j], rtol=1e-6, atol=1e-8)
    assert abs(problem.weights.sum() - 1) < 1e-12


def test_fl_rejects_bad_weights():
    problem = random_ridge(np.random.default_rng(6), 4, 5, 2, lam=0.1)
    with pytest.raises(ValueError, match="weights"):
        fedavg_sampler(problem, UniformISP(4, 2), np.random.default_rng(0), n_rounds=1,
                       local_steps=1, step=0.01, weights=[1.0, 1.0, 0.0, 0.0])
