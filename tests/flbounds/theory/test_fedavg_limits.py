"""flbounds.theory.fedavg_limits: fixed points and stationary moments vs brute-force twins."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flbounds.algorithms import focus, focus_matrix
from flbounds.participation import Bernoulli, subset_distribution
from flbounds.problems import random_quadratics
from flbounds.theory.fedavg_limits import (
    fedavg_fixed_point,
    fedavg_stationary_moments,
    local_maps,
    shared_hessian_fixed_point,
    stationary_error,
    virtual_phase_errors,
    weighted_minimizer,
)


@pytest.fixture(scope="module")
def quad():
    return random_quadratics(np.random.default_rng(11), 4, 3, mu=1.0, L=3.0)


def twin_local(A, b, x, step, tau):
    for _ in range(tau):
        x = x - step * (A @ x - b)
    return x


def test_local_maps(quad):
    M, c = local_maps(quad.A, quad.b, step=0.1, local_steps=4)
    x = np.array([0.3, -1.0, 2.0])
    for i in range(4):
        np.testing.assert_allclose(M[i] @ x + c[i], twin_local(quad.A[i], quad.b[i], x, 0.1, 4),
                                   rtol=1e-13, atol=1e-14)


def test_fixed_point_is_fixed_point_of_mean_map(quad):
    proc = Bernoulli([0.2, 0.5, 0.7, 0.9])
    q, empty = proc.aggregation_weights(), proc.empty_probability()
    target = fedavg_fixed_point(quad.A, quad.b, q, step=0.05, local_steps=3)
    M, c = local_maps(quad.A, quad.b, step=0.05, local_steps=3)
    mapped = empty * target + np.einsum("i,ipq,q->p", q, M, target) + q @ c
    np.testing.assert_allclose(mapped, target, atol=1e-12)


def test_limits(quad):
    q = np.array([0.1, 0.2, 0.3, 0.4])
    x_q = weighted_minimizer(quad.A, quad.b, q)
    np.testing.assert_allclose(fedavg_fixed_point(quad.A, quad.b, q, step=0.2, local_steps=1),
                               x_q, atol=1e-12)
    small = fedavg_fixed_point(quad.A, quad.b, q, step=1e-6, local_steps=5)
    assert np.linalg.norm(small - x_q) < 1e-4
    uniform = fedavg_fixed_point(quad.A, quad.b, np.full(4, 0.25), step=0.2, local_steps=1)
    np.testing.assert_allclose(uniform, quad.x_star, atol=1e-12)


def test_shared_hessian(quad):
    A = quad.A[0]
    q = np.array([0.1, 0.2, 0.3, 0.4])
    got = shared_hessian_fixed_point(A, quad.b, q)
    want = fedavg_fixed_point(np.repeat(A[None], 4, 0), quad.b, q, step=0.1, local_steps=7)
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_stationary_moments_match_iteration(quad):
    proc = Bernoulli([0.2, 0.5, 0.7, 0.9])
    masks, probs = subset_distribution(proc)
    m, second = fedavg_stationary_moments(quad.A, quad.b, masks, probs, step=0.1, local_steps=2)
    M, c = local_maps(quad.A, quad.b, step=0.1, local_steps=2)
    mean, sec = np.zeros(3), np.zeros((3, 3))
    for _ in range(3000):  # iterate the exact moment recursion (slow twin)
        new_mean, new_sec = np.zeros(3), np.zeros((3, 3))
        for s, pr in zip(masks, probs, strict=True):
            if not s.any():
                MS, cS = np.eye(3), np.zeros(3)
            else:
                MS, cS = M[s].mean(axis=0), c[s].mean(axis=0)
            new_mean += pr * (MS @ mean + cS)
            new_sec += pr * (MS @ sec @ MS.T + np.outer(MS @ mean, cS) + np.outer(cS, MS @ mean)
                             + np.outer(cS, cS))
        mean, sec = new_mean, new_sec
    np.testing.assert_allclose(m, mean, atol=1e-10)
    np.testing.assert_allclose(second, sec, atol=1e-10)
    err = stationary_error(m, second, quad.x_star)
    phases = virtual_phase_errors(quad.A, quad.b, proc.aggregation_weights(), m, second,
                                  quad.x_star, step=0.1, local_steps=2)
    assert phases[0] == pytest.approx(err, rel=1e-12)


def test_validation(quad):
    q = np.full(4, 0.25)
    bad = quad.A.copy()
    bad[0, 0, 1] += 1.0
    with pytest.raises(ValueError, match="^A"):
        fedavg_fixed_point(bad, quad.b, q, step=0.1, local_steps=1)
    indefinite = quad.A.copy()
    indefinite[1] = np.diag([1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="^A"):
        fedavg_fixed_point(indefinite, quad.b, q, step=0.1, local_steps=1)
    with pytest.raises(ValueError, match="step"):
        fedavg_fixed_point(quad.A, quad.b, q, step=0.0, local_steps=1)
    with pytest.raises(ValueError, match="local_steps"):
        fedavg_fixed_point(quad.A, quad.b, q, step=0.1, local_steps=0)
    with pytest.raises(ValueError, match="^q"):
        fedavg_fixed_point(quad.A, quad.b, -q, step=0.1, local_steps=1)
    with pytest.raises(ValueError, match="^b"):
        fedavg_fixed_point(quad.A, quad.b[:3], q, step=0.1, local_steps=1)
    with pytest.raises(ValueError, match="^A"):
        fedavg_fixed_point(quad.A[:, :2], quad.b, q, step=0.1, local_steps=1)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(n_clients=st.integers(1, 5), dim=st.integers(1, 3), tau=st.integers(1, 4),
       seed=st.integers(0, 2**16))
def test_focus_forms_agree_property(n_clients, dim, tau, seed):
    rng = np.random.default_rng(seed)
    L = 1.0 if dim == 1 else 3.0
    problem = random_quadratics(rng, n_clients, dim, mu=1.0, L=L)
    plan = rng.random((12, n_clients)) < rng.random(n_clients)
    step = 0.5 / (L * n_clients)
    a = focus(problem, plan, step=step, local_steps=tau).x
    np.testing.assert_allclose(a, focus_matrix(problem, plan, step=step, local_steps=tau),
                               atol=1e-12)
