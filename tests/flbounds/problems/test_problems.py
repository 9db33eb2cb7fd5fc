"""Tests of flbounds.problems: kernel == reference, calculus, constants, validation."""

import numpy as np
import pytest
from hypothesis import example, given, settings

from flbounds import problems, validation
from flbounds.algorithms import focus
from flbounds.kernels._layout import CACHE_LINE, line_aligned
from flbounds.problems import (
    LogisticL2,
    NonconvexLogistic,
    Quadratic,
    Ridge,
    ScalarPL,
    random_logistic,
    random_quadratics,
    random_ridge,
    random_scalar_pl,
    shared_hessian_quadratics,
)
from tests import reference as ref
from tests.strategies import CORNER_CASES, Case, cases

# Kernel vs twin: both sum at most ~30 terms in different orders, so they differ by
# <= 30 eps * (sum of |terms|) ~ 7e-15 * magnitude; 1e-12 leaves a wide margin.
KERNEL_RTOL = 1e-12
# Central differences with h = 1e-6: truncation h^2 |f'''| / 6 and rounding eps |f| / h
# are both < 1e-9 at unit scale; 1e-6 is loose on purpose.
FD_STEP = 1e-6
FD_RTOL = 1e-6
# Gradient at x_star: solves are backward stable, residual ~ d eps kappa * magnitude.
X_STAR_RTOL = 1e-10

KINDS = ("quadratic", "ridge", "logistic", "nonconvex", "scalar_pl")


def make_problem(kind, case):
    """A problem of the given kind from a drawn case (data scaled by case.data_scale)."""
    rng, s = case.rng(), case.data_scale
    N, d, n = case.n_clients, case.dim, case.n_samples
    if kind == "quadratic":
        M = s * rng.standard_normal((N, d, d))
        return Quadratic(M @ M.transpose(0, 2, 1) / d + 0.1 * s**2 * np.eye(d),
                         s * rng.standard_normal((N, d)))
    if kind == "scalar_pl":
        c = s * rng.standard_normal(N)
        return ScalarPL(c - c.mean())
    features = s * rng.standard_normal((N, n, d))
    if kind == "ridge":
        return Ridge(features, s * rng.standard_normal((N, n)), lam=0.1 * s**2)
    labels = rng.choice([-1.0, 1.0], size=(N, n))
    if kind == "logistic":
        return LogisticL2(features, labels, lam=0.1)
    return NonconvexLogistic(features, labels, lam=0.0, rho=0.5)


def reference(problem, X, idx):
    """(losses, gradients) from the NumPy twins."""
    if isinstance(problem, Quadratic):
        args, pair = (problem.A, problem.b), (ref.quadratic_losses, ref.quadratic_gradients)
    elif isinstance(problem, Ridge):
        args = (problem.features, problem.targets, problem.lam)
        pair = (ref.ridge_losses, ref.ridge_gradients)
    elif isinstance(problem, ScalarPL):
        args, pair = (problem.c,), (ref.scalar_pl_losses, ref.scalar_pl_gradients)
    else:
        args = (problem.features, problem.labels, problem.lam, problem.rho)
        pair = (ref.logistic_losses, ref.logistic_gradients)
    return pair[0](*args, X, idx), pair[1](*args, X, idx)


def magnitudes(problem, X, idx):
    """Bounds on the sums of |terms| of each loss and gradient entry (the rounding scale)."""
    aX = np.abs(X)
    if isinstance(problem, Quadratic):
        args = (np.abs(problem.A), -np.abs(problem.b), aX, idx)
        return ref.quadratic_losses(*args), ref.quadratic_gradients(*args)
    if isinstance(problem, Ridge):
        args = (np.abs(problem.features), -np.abs(problem.targets), problem.lam, aX, idx)
        return ref.ridge_losses(*args), ref.ridge_gradients(*args)
    if isinstance(problem, ScalarPL):
        c = np.abs(problem.c[idx])[:, None]
        return (aX**2 + 3.0 + c * aX)[:, 0], 2.0 * aX + 3.0 + c
    F = np.abs(problem.features[idx])
    extra = (0.5 * problem.lam + problem.rho) * np.sum(aX**2, axis=1)
    losses = np.einsum("jkp,jp->jk", F, aX).mean(axis=1) + np.log(2.0) + extra
    return losses, F.mean(axis=1) + (problem.lam + 2.0 * problem.rho) * aX


def assert_matches(actual, desired, magnitude, rtol):
    assert actual.shape == desired.shape
    assert np.all(np.abs(actual - desired) <= rtol * (np.abs(desired) + magnitude))


def random_points(case, problem, m):
    return case.point_scale * case.rng().standard_normal((m, problem.dim))


# ----------------------------------------------------------------- kernel == reference


@pytest.mark.parametrize("kind", KINDS)
@settings(deadline=None, derandomize=True, max_examples=30)
@given(case=cases())
@example(case=CORNER_CASES[0])
@example(case=CORNER_CASES[1])
@example(case=CORNER_CASES[2])
def test_kernels_match_reference(kind, case):
    problem = make_problem(kind, case)
    for clients in (None, np.array(case.clients, dtype=np.int64)):
        idx = np.arange(problem.n_clients) if clients is None else clients
        X = random_points(case, problem, idx.size)
        losses = problem.client_losses(X, clients=clients)
        grads = problem.client_gradients(X, clients=clients)
        ref_losses, ref_grads = reference(problem, X, idx)
        mag_losses, mag_grads = magnitudes(problem, X, idx)
        assert_matches(losses, ref_losses, mag_losses, KERNEL_RTOL)
        assert_matches(grads, ref_grads, mag_grads, KERNEL_RTOL)


@pytest.mark.parametrize("kind", KINDS)
def test_global_loss_is_mean_of_clients(kind):
    case = Case(3, 2, 4, 7, 1.0, 1.0, ())
    problem = make_problem(kind, case)
    x = random_points(case, problem, 1)[0]
    X = np.tile(x, (problem.n_clients, 1))
    assert problem.loss(x) == pytest.approx(problem.client_losses(X).mean(), rel=1e-14)
    np.testing.assert_allclose(problem.gradient(x), problem.client_gradients(X).mean(axis=0),
                               rtol=1e-14, atol=1e-15)


# ---------------------------------------------------------------------------- calculus


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", [Case(3, 3, 5, 11, 1.0, 1.0, ()), CORNER_CASES[0]])
def test_gradients_match_finite_differences(kind, case):
    problem = make_problem(kind, case)
    X = random_points(case, problem, problem.n_clients)
    fd = np.empty_like(X)
    for p in range(problem.dim):
        E = np.zeros_like(X)
        E[:, p] = FD_STEP
        fd[:, p] = (problem.client_losses(X + E) - problem.client_losses(X - E)) / (2 * FD_STEP)
    _, mag = magnitudes(problem, X, np.arange(problem.n_clients))
    assert_matches(problem.client_gradients(X), fd, mag, FD_RTOL)


@pytest.mark.parametrize("kind", ("logistic", "nonconvex"))
def test_logistic_hessians_match_finite_differences(kind):
    case = Case(2, 3, 6, 5, 1.0, 1.0, ())
    problem = make_problem(kind, case)
    X = random_points(case, problem, problem.n_clients)
    H = problem.client_hessians(X)
    for p in range(problem.dim):
        E = np.zeros_like(X)
        E[:, p] = FD_STEP
        diff = problem.client_gradients(X + E) - problem.client_gradients(X - E)
        np.testing.assert_allclose(H[:, :, p], diff / (2 * FD_STEP), rtol=FD_RTOL, atol=FD_RTOL)


@pytest.mark.parametrize("kind", ("quadratic", "ridge", "logistic", "scalar_pl"))
@pytest.mark.parametrize("case", [Case(4, 3, 6, 3, 1.0, 1.0, ()), *CORNER_CASES])
def test_x_star_is_stationary(kind, case):
    problem = make_problem(kind, case)
    X = np.tile(problem.x_star, (problem.n_clients, 1))
    _, mag = magnitudes(problem, X, np.arange(problem.n_clients))
    scale = np.linalg.norm(mag.mean(axis=0))
    assert np.linalg.norm(problem.gradient(problem.x_star)) <= X_STAR_RTOL * scale
    assert problem.F_star == pytest.approx(problem.loss(problem.x_star), rel=1e-14, abs=1e-300)


def test_quadratic_x_star_solves_mean_normal_equations():
    problem = random_quadratics(np.random.default_rng(0), 4, 3, mu=0.5, L=4.0)
    A_mean, b_mean = problem.A.mean(axis=0), problem.b.mean(axis=0)
    np.testing.assert_allclose(A_mean @ problem.x_star, b_mean, rtol=1e-12, atol=1e-12)
    assert problem.F_star == pytest.approx(-0.5 * b_mean @ problem.x_star, rel=1e-12)
    assert problem.hessians() is problem.A


def test_ridge_as_quadratic_agrees():
    ridge = random_ridge(np.random.default_rng(1), 3, 7, 4, lam=0.05)
    quad = ridge.as_quadratic()
    X = np.random.default_rng(2).standard_normal((3, 4))
    offsets = 0.5 * np.mean(ridge.targets**2, axis=1)
    np.testing.assert_allclose(quad.client_losses(X) + offsets, ridge.client_losses(X),
                               rtol=1e-12)
    np.testing.assert_allclose(quad.client_gradients(X), ridge.client_gradients(X),
                               rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(quad.x_star, ridge.x_star, rtol=1e-10)
    for name in ("mu", "L", "client_mu", "client_L"):
        np.testing.assert_allclose(getattr(quad, name), getattr(ridge, name), rtol=1e-12)


# ------------------------------------------------------------------------------ Newton


@pytest.mark.parametrize("seed", range(3))
def test_logistic_newton_converges_to_minimizer(seed):
    rng = np.random.default_rng(seed)
    problem = random_logistic(rng, 4, 10, 3, lam=1e-3, heterogeneity=2.0)
    scale = np.linalg.norm(problem.features, axis=2).mean()
    assert np.linalg.norm(problem.gradient(problem.x_star)) <= problems.NEWTON_RTOL * scale
    for delta in 1e-3 * rng.standard_normal((5, 3)):
        assert problem.loss(problem.x_star + delta) >= problem.F_star


def test_newton_raises_when_not_converged(monkeypatch):
    monkeypatch.setattr(problems._base, "NEWTON_MAX_ITER", 1)
    problem = random_logistic(np.random.default_rng(0), 3, 10, 3, lam=1e-3)
    with pytest.raises(RuntimeError, match="did not converge"):
        _ = problem.x_star


@pytest.mark.parametrize("seed", range(3))
def test_nonconvex_stationary_point(seed):
    rng = np.random.default_rng(seed)
    data = random_logistic(rng, 3, 8, 3, lam=1e-2)
    problem = NonconvexLogistic(data.features, data.labels, lam=0.0, rho=1.0)
    x = problem.stationary_point(x0=rng.standard_normal(3), tol=1e-10)
    scale = np.linalg.norm(data.features, axis=2).mean() + np.sqrt(3)
    assert np.linalg.norm(problem.gradient(x)) <= 1e-10 * scale
    assert problem.x_star is None and problem.mu is None


# --------------------------------------------------------------------------- constants


def test_random_quadratics_constants_are_exact():
    for dim in (2, 3, 5):
        problem = random_quadratics(np.random.default_rng(dim), 4, dim, mu=0.3, L=7.0)
        assert problem.mu == pytest.approx(0.3, rel=1e-12)
        assert problem.L == pytest.approx(7.0, rel=1e-12)
        assert np.all(problem.client_mu >= 0.3 * (1 - 1e-12))
        assert np.all(problem.client_L <= 7.0 * (1 + 1e-12))
    shared = shared_hessian_quadratics(np.random.default_rng(0), 3, 4, mu=0.5, L=2.0)
    assert (shared.mu, shared.L) == (pytest.approx(0.5), pytest.approx(2.0))
    np.testing.assert_array_equal(shared.A[0], shared.A[-1])
    one = random_quadratics(np.random.default_rng(0), 2, 1, mu=2.0, L=2.0)
    assert (one.mu, one.L) == (pytest.approx(2.0), pytest.approx(2.0))


def test_heterogeneity_is_one_keyword_and_spread_still_works_deprecated():
    """random_quadratics and shared_hessian_quadratics name the spread of the b_i alike."""
    new = shared_hessian_quadratics(np.random.default_rng(1), 3, 4, mu=0.5, L=2.0,
                                    heterogeneity=0.25)
    with pytest.warns(DeprecationWarning, match="heterogeneity="):
        old = shared_hessian_quadratics(np.random.default_rng(1), 3, 4, mu=0.5, L=2.0,
                                        spread=0.25)
    np.testing.assert_array_equal(new.b, old.b)
    default = shared_hessian_quadratics(np.random.default_rng(1), 3, 4, mu=0.5, L=2.0)
    assert not np.array_equal(default.b, new.b)
    with pytest.raises(ValueError, match="spread"):
        shared_hessian_quadratics(np.random.default_rng(1), 3, 4, mu=0.5, L=2.0,
                                  heterogeneity=0.25, spread=0.25)
    with pytest.raises(ValueError, match="heterogeneity"):
        shared_hessian_quadratics(np.random.default_rng(1), 3, 4, mu=0.5, L=2.0,
                                  heterogeneity=-1.0)


def test_ridge_constants_sandwich_hessians():
    ridge = random_ridge(np.random.default_rng(3), 4, 6, 3, lam=0.0)
    n = ridge.features.shape[1]
    hess = np.einsum("ikp,ikq->ipq", ridge.features, ridge.features) / n
    eig = np.linalg.eigvalsh(hess)
    np.testing.assert_allclose(eig[:, -1], ridge.client_L, rtol=1e-12)
    assert ridge.mu == pytest.approx(np.linalg.eigvalsh(hess.mean(axis=0))[0], rel=1e-12)


@pytest.mark.parametrize("rho", [0.0, 0.7])
def test_logistic_constants_sandwich_hessians(rho):
    rng = np.random.default_rng(4)
    data = random_logistic(rng, 3, 9, 3, lam=0.2)
    problem = data if rho == 0.0 else NonconvexLogistic(data.features, data.labels, 0.2, rho)
    lower = 0.2 - rho / 2 - 1e-12
    for X in 3.0 * rng.standard_normal((20, 3, 3)):
        eig = np.linalg.eigvalsh(problem.client_hessians(X))
        assert np.all(eig >= lower)
        assert np.all(eig <= problem.client_L[:, None] * (1 + 1e-12))
    assert problem.L == problem.client_L.max()
    if rho == 0.0:
        assert problem.mu == 0.2 and problem.mu_is_bound and problem.L_is_bound


def test_scalar_pl_constants():
    problem = random_scalar_pl(np.random.default_rng(0), 5)
    x = np.linspace(-10.0, 10.0, 4001)
    F = np.array([problem.loss([t]) for t in x[::40]])
    grad = np.array([problem.gradient([t])[0] for t in x[::40]])
    assert np.all(0.5 * grad**2 >= problem.beta * (F - problem.F_star) - 1e-12)
    curvature = 2.0 + 6.0 * np.cos(2.0 * x)
    assert curvature.max() == pytest.approx(problem.L) and np.all(curvature <= problem.L)
    assert problem.mu is None and problem.gradient([0.0])[0] == pytest.approx(0.0, abs=1e-15)


def test_generators_are_deterministic_and_arrays_read_only():
    a = random_logistic(np.random.default_rng(5), 2, 4, 3, lam=0.1)
    b = random_logistic(np.random.default_rng(5), 2, 4, 3, lam=0.1)
    np.testing.assert_array_equal(a.features, b.features)
    np.testing.assert_array_equal(a.x_star, b.x_star)
    with pytest.raises(ValueError, match="read-only"):
        a.x_star[0] = 1.0


@pytest.mark.parametrize("offset", range(8))
def test_kernel_data_start_on_a_cache_line(offset):
    # the kernels' vector loads span one cache line each only if the data start on one;
    # inputs at every 8-byte offset get an aligned read-only copy with the same values
    rng = np.random.default_rng(offset)
    buf = np.empty(30 + 16)
    start = (-buf.ctypes.data % CACHE_LINE) // 8 + offset
    X = buf[start:start + 30].reshape(2, 3, 5)
    X[...] = rng.standard_normal(X.shape)
    assert X.ctypes.data % CACHE_LINE == 8 * offset
    y = rng.choice([-1.0, 1.0], size=(2, 3))
    quad = Quadratic(np.stack([np.eye(5) * (1 + k) for k in range(2)]), X[:, 0, :])
    for problem in (Ridge(X, y, 0.1), LogisticL2(X, y, 0.1), quad):
        for name, array in problem.kernel_data._asdict().items():
            if isinstance(array, np.ndarray):
                assert array.ctypes.data % CACHE_LINE == 0, name
                assert not array.flags.writeable, name
        np.testing.assert_array_equal(getattr(problem, "features", X), X)
    same = line_aligned(np.zeros(16))
    assert same.ctypes.data % CACHE_LINE == 0 and line_aligned(same) is same
    # FOCUS's stored gradients, read and written every round, start on a line as well
    g = focus(quad, np.ones((2, 2), dtype=bool), step=0.1, local_steps=2).g
    assert g.ctypes.data % CACHE_LINE == 0 and g.flags.writeable


# -------------------------------------------------------------------------- validation

_A = np.stack([np.eye(2), 2 * np.eye(2)])
_B = np.ones((2, 2))
_F = np.ones((2, 3, 2))
_Y = np.ones((2, 3))
_BAD_INPUTS = [
    (lambda: Quadratic(_A + [[0, 1e-6], [0, 0]], _B), "A must be symmetric"),
    (lambda: Quadratic(np.eye(2), _B), "A must be 3-dimensional"),
    (lambda: Quadratic(np.stack([np.eye(2), -np.eye(2)]), _B), "A must be positive semi"),
    (lambda: Quadratic(np.stack([np.diag([1.0, 0.0])] * 2), _B), "A: the mean Hessian"),
    (lambda: Quadratic(_A, np.ones((2, 3))), "b must have shape"),
    (lambda: Quadratic(_A, [[1.0, np.nan], [0.0, 0.0]]), "b must be finite"),
    (lambda: Quadratic(_A.astype(complex), _B), "A must hold real"),
    (lambda: Ridge(_F, _Y, -1.0), "lam must be >= 0"),
    (lambda: Ridge(_F, np.ones((2, 4)), 1.0), "targets must have shape"),
    (lambda: Ridge(_F, _Y, 0.0), "features: the mean Hessian"),
    (lambda: LogisticL2(_F, 0.5 * _Y, 1.0), "labels must be -1 or"),
    (lambda: LogisticL2(_F, _Y, 0.0), "lam must be > 0"),
    (lambda: NonconvexLogistic(_F, _Y, 0.0, -1.0), "rho must be >= 0"),
    (lambda: ScalarPL([1.0, 1.0]), "c must sum to 0"),
    (lambda: ScalarPL(np.zeros((2, 1))), "c must be 1-dimensional"),
    (lambda: ScalarPL([1.0, -1.0]).client_losses(np.zeros(2)), "X must be 2-dimensional"),
    (lambda: ScalarPL([1.0, -1.0]).client_losses(np.zeros((3, 1))), "X must have shape"),
    (lambda: ScalarPL([1.0, -1.0]).gradient(np.zeros(2)), "x must have shape"),
    (lambda: ScalarPL([1.0, -1.0]).client_losses([[0.0]], clients=[2]), "clients must"),
    (lambda: ScalarPL([1.0, -1.0]).client_losses([[0.0]], clients=[0.0]), "clients must"),
    (lambda: random_quadratics(np.random.default_rng(), 2, 2, mu=2, L=1), "mu must be <= L"),
    (lambda: random_quadratics(np.random.default_rng(), 2, 1, mu=1, L=2), "mu: with dim = 1"),
    (lambda: random_quadratics(0, 2, 2, mu=1, L=2), "rng must be a numpy.random.Gen"),
    (lambda: random_ridge(np.random.default_rng(), 0, 2, 2, lam=1.0), "n_clients must be >="),
    (lambda: random_logistic(np.random.default_rng(), 2, 2, 2, lam=1.0, heterogeneity=-1),
     "heterogeneity must be >= 0"),
]


@pytest.mark.parametrize(("build", "match"), _BAD_INPUTS)
def test_bad_input_raises_value_error_naming_argument(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_validate_helpers():
    assert validation.as_float_array([1, 2], "v", shape=(None,)).dtype == np.float64
    assert validation.as_index_array([], "idx", 3).dtype == np.int64
    np.testing.assert_array_equal(validation.check_probability_vector([0.25, 0.75], "p"),
                                  [0.25, 0.75])
    with pytest.raises(ValueError, match="p must sum to 1"):
        validation.check_probability_vector([0.5, 0.6], "p")
    with pytest.raises(ValueError, match="p must be nonnegative"):
        validation.check_probability_vector([1.5, -0.5], "p")
    with pytest.raises(ValueError, match="k must be an integer"):
        validation.check_int(2.0, "k")
    with pytest.raises(ValueError, match="step must be > 0"):
        validation.check_positive(0, "step")
    with pytest.raises(ValueError, match="step must be finite"):
        validation.check_positive(np.inf, "step")
