"""Client weights p_k: F = sum_k p_k f_k and its constants, against NumPy twins."""

import numpy as np
import pytest
import scipy.linalg

from flbounds.problems import (
    LogisticL2,
    NonconvexLogistic,
    Quadratic,
    Ridge,
    ScalarPL,
    random_logistic,
    random_quadratics,
    random_ridge,
)

# Solves are backward stable: |x - x_twin| ~ d eps kappa |x| (kappa <= 100 here).
SOLVE_RTOL = 1e-11
N, D = 6, 3


def _weights(rng, n=N):
    w = rng.random(n) + 0.1
    return w / w.sum()


def _problem(kind, rng, weights=None):
    if kind == "quadratic":
        return random_quadratics(rng, N, D, mu=0.5, L=4.0).with_weights(weights)
    if kind == "ridge":
        return random_ridge(rng, N, 8, D, lam=0.1).with_weights(weights)
    return random_logistic(rng, N, 8, D, lam=0.1).with_weights(weights)


@pytest.mark.parametrize("kind", ["quadratic", "ridge", "logistic"])
def test_uniform_weights_are_todays_numbers(kind):
    """No weights, explicit uniform weights and the problem before weights existed: the
    same bits (F is the plain mean, x_star the mean system's solve)."""
    base = _problem(kind, np.random.default_rng(1))
    explicit = base.with_weights(np.full(N, 1.0 / N))
    assert base.uniform_weights and explicit.uniform_weights
    x = np.random.default_rng(2).standard_normal(D)
    for p in (base, explicit):
        assert p.loss(x) == float(p.client_losses(np.tile(x, (N, 1))).mean())
        assert np.array_equal(p.gradient(x), p.client_gradients(np.tile(x, (N, 1))).mean(axis=0))
    assert np.array_equal(base.x_star, explicit.x_star) and base.mu == explicit.mu
    if kind == "quadratic":
        twin = scipy.linalg.solve(base.A.mean(axis=0), base.b.mean(axis=0), assume_a="pos")
        assert np.array_equal(base.x_star, twin)
        assert base.mu == float(np.linalg.eigvalsh(base.A.mean(axis=0))[0])
    np.testing.assert_array_equal(base.weights, np.full(N, 1.0 / N))


@pytest.mark.parametrize("kind", ["quadratic", "ridge", "logistic"])
def test_weighted_objective_and_minimiser(kind):
    rng = np.random.default_rng(3)
    w = _weights(rng)
    p = _problem(kind, np.random.default_rng(4), w)
    x = rng.standard_normal(D)
    X = np.tile(x, (N, 1))
    assert p.loss(x) == pytest.approx(w @ p.client_losses(X), rel=1e-13)
    np.testing.assert_allclose(p.gradient(x), w @ p.client_gradients(X), rtol=1e-13, atol=0)
    g_star = w @ p.client_gradients(np.tile(p.x_star, (N, 1)))
    scale = np.abs(p.client_gradients(np.tile(p.x_star, (N, 1)))).max()
    assert np.abs(g_star).max() <= 1e-10 * scale
    # the minimiser moves with the weights (else the test could not fail)
    assert np.abs(p.x_star - _problem(kind, np.random.default_rng(4)).x_star).max() > 1e-3


def test_quadratic_constants_twin():
    rng = np.random.default_rng(5)
    w = _weights(rng)
    q = random_quadratics(rng, N, D, mu=0.5, L=4.0).with_weights(w)
    A_bar, b_bar = np.einsum("k,kpq->pq", w, q.A), w @ q.b
    np.testing.assert_allclose(q.x_star, np.linalg.solve(A_bar, b_bar), rtol=SOLVE_RTOL)
    assert q.mu == pytest.approx(np.linalg.eigvalsh(A_bar)[0], rel=1e-12)
    assert q.L == max(np.linalg.eigvalsh(q.A)[:, -1])
    assert q.F_star == pytest.approx(-0.5 * b_bar @ q.x_star, rel=1e-12)
    f_min = np.array([-0.5 * bk @ np.linalg.solve(Ak, bk) for Ak, bk in zip(q.A, q.b, strict=True)])
    assert q.heterogeneity_gap == pytest.approx(q.F_star - w @ f_min, rel=1e-10)
    G = np.einsum("kpq,q->kp", q.A, q.x_star) - q.b
    assert q.heterogeneity_gradient == pytest.approx(w @ (G**2).sum(axis=1), rel=1e-12)


def test_ridge_gap_matches_its_quadratic():
    rng = np.random.default_rng(6)
    r = random_ridge(rng, N, 8, D, lam=0.1).with_weights(_weights(rng))
    q = r.as_quadratic()
    np.testing.assert_allclose(r.x_star, q.x_star, rtol=SOLVE_RTOL)
    # the losses differ by ||y_k||^2 / 2n per client, which the gap cancels
    assert r.heterogeneity_gap == pytest.approx(q.heterogeneity_gap, rel=1e-10)
    assert r.heterogeneity_gap > 0


def test_gap_is_none_for_a_singular_client():
    A = np.stack([np.diag([1.0, 0.0]), np.eye(2)])
    q = Quadratic(A, np.ones((2, 2)), weights=[0.5, 0.5])
    assert q.heterogeneity_gap is None
    # a zero weight takes the singular client out of the sum
    assert Quadratic(A, np.ones((2, 2)), weights=[0.0, 1.0]).heterogeneity_gap == 0.0


def test_scalar_pl_weighted_sum():
    c = np.array([1.0, -1.0, 2.0])
    w = np.array([0.5, 0.3, -0.1])
    with pytest.raises(ValueError, match="weights"):
        ScalarPL(c - c.mean(), weights=w)
    w = np.array([0.4, 0.4, 0.2])
    c = np.array([1.0, -2.0, 2.0])      # sum_k w_k c_k = 0.4 - 0.8 + 0.4 = 0
    p = ScalarPL(c, weights=w)
    assert p.loss(np.zeros(1)) == 0.0
    assert abs(p.gradient(np.zeros(1))[0]) <= 1e-15
    with pytest.raises(ValueError, match="c must sum to 0"):
        ScalarPL(c)                      # sum c != 0
    with pytest.raises(ValueError, match="c must have weighted sum 0"):
        ScalarPL(c, weights=[0.2, 0.2, 0.6])


@pytest.mark.parametrize("bad, match", [
    ([0.5, 0.5], "weights"),                              # wrong length
    ([0.6, 0.6, -0.2, 0.0, 0.0, 0.0], "weights"),         # negative
    ([0.2] * 6, "weights"),                               # sums to 1.2
    ([np.nan] * 6, "weights"),
])
def test_bad_weights(bad, match):
    rng = np.random.default_rng(7)
    F = rng.standard_normal((N, 4, D))
    labels = np.where(rng.random((N, 4)) < 0.5, -1.0, 1.0)
    A = np.tile(np.eye(D), (N, 1, 1))
    for make in (lambda: Quadratic(A, np.zeros((N, D)), weights=bad),
                 lambda: Ridge(F, F[..., 0], 0.1, weights=bad),
                 lambda: LogisticL2(F, labels, 0.1, weights=bad),
                 lambda: NonconvexLogistic(F, labels, 0.1, 0.5, weights=bad),
                 lambda: ScalarPL(np.zeros(N), weights=bad)):
        with pytest.raises(ValueError, match=match):
            make()


def test_weighted_logistic_is_newtons_minimiser():
    rng = np.random.default_rng(8)
    w = _weights(rng)
    p = random_logistic(rng, N, 10, D, lam=0.1).with_weights(w)
    H = p.hessian(p.x_star)
    H_twin = np.einsum("k,kpq->pq", w, p.client_hessians(np.tile(p.x_star, (N, 1))))
    np.testing.assert_allclose(H, H_twin, rtol=1e-13)
    assert p.mu == 0.1 and isinstance(p, LogisticL2)
