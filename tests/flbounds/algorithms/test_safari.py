"""SAFARI (Algorithm 1 of 000): numba kernel vs NumPy twin, special cases, closed forms."""

import numpy as np
import pytest

from flbounds.algorithms.safari import SafariPlan, safari, safari_plan
from flbounds.problems import random_logistic, random_ridge, random_scalar_pl
from tests import reference as twins
from verify.safari.closed_forms import (
    ClientQuadratics,
    exact_drift,
    safari_mean_limit,
    thm4_q_max,
)


def fedavg_sgd_reference(problem, clients, noise, step_c, x0):
    """Independent straightforward FedAvg with local SGD (no SAFARI code)."""
    x = np.array(x0, dtype=float)
    xs = [x]
    for r in range(len(clients)):
        locals_ = []
        for c, i in enumerate(clients[r]):
            y = x.copy()
            for k in range(noise.shape[2]):
                grad = problem.client_gradients(y[None, :], clients=np.array([i]))[0]
                y = y - step_c * (grad + noise[r, c, k])
            locals_.append(y)
        x = np.stack(locals_).mean(axis=0)
        xs.append(x)
    return np.array(xs)


def _instance(seed=0, n=6, d=3):
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(n, d, d))
    A = np.einsum("nij,nkj->nik", B, B) / d + 0.2 * np.eye(d)
    return ClientQuadratics(A, rng.normal(size=(n, d))), rng


@pytest.mark.parametrize("q", [0.0, 0.3, 1.0])
def test_kernel_matches_numpy_twin(q):
    prob, rng = _instance()
    plan = safari_plan(rng, n_rounds=60, q=q, eligible=[1, 2, 4, 5], n_sampled=3, local_steps=4,
                       dim=3, client_noise_std=0.3, server_noise_std=0.2)
    x0 = np.ones(3)
    run = safari(prob, plan, step_client=0.05, step_server=0.1, x0=x0)
    xs, g2 = twins.safari(prob, plan, 0.05, 0.1, x0)
    np.testing.assert_allclose(run.x, xs, rtol=1e-12, atol=1e-12)  # rounding, summation order
    np.testing.assert_allclose(run.local_grad_norm2, g2, rtol=1e-12)


@pytest.mark.parametrize("kind", ["ridge", "logistic", "scalar_pl"])
def test_every_problem_kind_runs_compiled(kind):
    rng = np.random.default_rng(7)
    if kind == "ridge":
        prob = random_ridge(rng, 6, 5, 3, lam=0.1)
    elif kind == "logistic":
        prob = random_logistic(rng, 6, 5, 3, lam=0.1)
    else:
        prob = random_scalar_pl(rng, 6)
    plan = safari_plan(rng, n_rounds=30, q=0.5, eligible=[0, 2, 3, 5], n_sampled=2,
                       local_steps=3, dim=prob.dim, client_noise_std=0.1, server_noise_std=0.1)
    x0 = np.full(prob.dim, 0.5)
    run = safari(prob, plan, step_client=0.05, step_server=0.1, x0=x0)
    xs, g2 = twins.safari(prob, plan, 0.05, 0.1, x0)
    np.testing.assert_allclose(run.x, xs, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(run.local_grad_norm2, g2, rtol=1e-12)


def test_q1_is_fedavg_sgd_and_q0_is_server_sgd():
    prob, rng = _instance(1)
    plan = safari_plan(rng, n_rounds=40, q=1.0, eligible=np.arange(6), n_sampled=2,
                       local_steps=3, dim=3, client_noise_std=0.5, server_noise_std=0.5)
    x0 = np.full(3, 2.0)
    run = safari(prob, plan, step_client=0.05, step_server=0.1, x0=x0)
    ref = fedavg_sgd_reference(prob, plan.clients, plan.client_noise, 0.05, x0)
    np.testing.assert_allclose(run.x, ref, rtol=1e-12, atol=1e-12)
    plan0 = plan._replace(client_round=np.zeros(40, dtype=bool))
    run0 = safari(prob, plan0, step_client=0.05, step_server=0.1, x0=x0)
    x, ref0 = x0.copy(), [x0.copy()]
    for r in range(40):
        x = x - 0.1 * (prob.gradient(x) + plan.server_noise[r])
        ref0.append(x)
    np.testing.assert_allclose(run0.x, np.array(ref0), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="fast"):
        safari(prob, plan0, step_client=0.05, step_server=0.1, x0=x0, fast=False)


def test_shared_streams_across_q():
    a = safari_plan(np.random.default_rng(3), n_rounds=20, q=0.2, eligible=np.arange(5),
                    n_sampled=2, local_steps=2, dim=2, client_noise_std=1, server_noise_std=1)
    b = safari_plan(np.random.default_rng(3), n_rounds=20, q=0.9, eligible=np.arange(5),
                    n_sampled=2, local_steps=2, dim=2, client_noise_std=1, server_noise_std=1)
    np.testing.assert_array_equal(a.client_noise, b.client_noise)
    np.testing.assert_array_equal(a.clients, b.clients)


def test_mean_limit_matches_noise_free_iteration_in_expectation():
    centers = np.array([[-1.5, 0]] * 4 + [[1.0, 0]] * 6)
    prob = ClientQuadratics.isotropic(centers)
    xbar = safari_mean_limit(prob, np.arange(4, 10), q=0.8, step_client=0.004,
                             step_server=0.01, local_steps=5)
    # with identical Hessians the expected map is exact; the first-order limit is close
    assert np.linalg.norm(xbar) ** 2 == pytest.approx((1.6 / 1.8) ** 2, rel=0.01)
    assert safari_mean_limit(prob, np.arange(4, 10), q=0.0, step_client=0.004,
                             step_server=0.01, local_steps=5) == pytest.approx(np.zeros(2))


def test_exact_drift_matches_monte_carlo():
    prob, rng = _instance(2, n=1, d=2)
    x = np.array([1.0, -1.0])
    g = prob.client_gradients(x[None], clients=np.array([0]))[0]
    exact = exact_drift(prob.A[0], g, step_client=0.1, k=4, sigma2=0.5)
    noise = rng.normal(size=(20000, 4, 2)) * np.sqrt(0.25)
    Y = np.tile(x, (20000, 1))
    for k in range(4):
        Y = Y - 0.1 * (Y @ prob.A[0] - prob.b[0] + noise[:, k])
    mc = np.sum((Y - x) ** 2, axis=1)
    assert abs(mc.mean() - exact) < 4 * mc.std() / np.sqrt(mc.size)


def test_q_max_reproduces_spec_number():
    q_max, linear = thm4_q_max(4.0, 123.0, sigma_G2=2.25, local_steps=5, L=1.0,
                               step_server=0.01, printed=False)
    assert linear and q_max == pytest.approx(1.13, abs=0.01)


def test_plan_validation():
    with pytest.raises(ValueError, match="q"):
        safari_plan(np.random.default_rng(0), n_rounds=2, q=1.5, eligible=[0, 1], n_sampled=1,
                    local_steps=1, dim=1, client_noise_std=0, server_noise_std=0)
    prob, _ = _instance()
    bad = SafariPlan(np.ones(2, bool), np.full((2, 1), 7), np.zeros((2, 1, 1, 3)),
                     np.zeros((2, 3)))
    with pytest.raises(ValueError, match="clients"):
        safari(prob, bad, step_client=0.1, step_server=0.1)


def test_homogeneous_stationary_error_matches_simulation():
    from verify.safari.closed_forms import homogeneous_stationary_error
    prob = ClientQuadratics(np.tile(0.5 * np.eye(2), (4, 1, 1)), np.tile([0.5, -0.5], (4, 1)))
    rng = np.random.default_rng(5)
    plan = safari_plan(rng, n_rounds=60000, q=0.6, eligible=np.arange(4), n_sampled=2,
                       local_steps=3, dim=2, client_noise_std=1.0, server_noise_std=0.5)
    tr = safari(prob, plan, step_client=0.05, step_server=0.1, x0=prob.x_star)
    err = np.sum((tr.x[1000:] - prob.x_star) ** 2, axis=1)
    exact = homogeneous_stationary_error(q=0.6, step_client=0.05, step_server=0.1,
                                         local_steps=3, n_sampled=2, mu=0.5, sigma2=1.0,
                                         sigma_s2=0.25)
    batches = np.array([b.mean() for b in np.array_split(err, 50)])
    assert abs(batches.mean() - exact) < 4 * batches.std(ddof=1) / np.sqrt(50)
