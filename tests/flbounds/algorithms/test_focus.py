"""FOCUS / FedAvg: compiled loops == slow NumPy twins; FL form == matrix form; validation."""

import numpy as np
import pytest

from flbounds.algorithms import (
    fedau,
    fedavg,
    fedavg_matrix,
    fedavg_virtual,
    focus,
    focus_matrix,
    mifa,
    proxskip,
    scaffold,
    sg_focus,
)
from flbounds.problems import Quadratic, random_logistic, random_quadratics, random_ridge
from tests import reference as ref

RTOL = 1e-12  # kernels and twins perform the same operations up to summation order


def twin_fedavg(problem, plan, step, tau, x0):
    return ref.fedavg(problem, plan, step, tau, x0)


def twin_focus(problem, plan, step, tau, x0, noise=None):
    return ref.focus(problem, plan, step, tau, x0, noise)[0]


@pytest.fixture(scope="module")
def quad():
    return random_quadratics(np.random.default_rng(3), 6, 4, mu=1.0, L=5.0)


@pytest.fixture(scope="module")
def plan():
    rng = np.random.default_rng(4)
    return rng.random((40, 6)) < np.array([0.1, 0.3, 0.5, 0.7, 0.9, 0.0])


@pytest.mark.parametrize("tau", [1, 2, 5])
def test_fedavg_kernel_matches_twin(quad, plan, tau):
    x0 = np.linspace(-1, 1, 4)
    got = fedavg(quad, plan, step=0.05, local_steps=tau, x0=x0).x
    want = twin_fedavg(quad, plan, 0.05, tau, x0)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-13)


@pytest.mark.parametrize("tau", [1, 3])
def test_focus_kernel_matches_twin(quad, plan, tau):
    rng = np.random.default_rng(5)
    noise = 0.1 * rng.standard_normal((plan.shape[0], 6, tau, 4))
    got = sg_focus(quad, plan, noise, step=0.02, local_steps=tau).x
    want = twin_focus(quad, plan, 0.02, tau, np.zeros(4), noise)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-13)
    np.testing.assert_allclose(focus(quad, plan, step=0.02, local_steps=tau).x,
                               twin_focus(quad, plan, 0.02, tau, np.zeros(4)),
                               rtol=RTOL, atol=1e-13)


def test_ridge_kernel_matches_twin(plan):
    pb = random_ridge(np.random.default_rng(6), 6, 7, 4, lam=0.1)
    for algo, twin in ((fedavg, twin_fedavg), (focus, twin_focus)):
        a = algo(pb, plan, step=0.05, local_steps=3).x
        np.testing.assert_allclose(a, twin(pb, plan, 0.05, 3, np.zeros(4)), rtol=RTOL,
                                   atol=1e-13)
    q = pb.as_quadratic()
    np.testing.assert_allclose(focus(pb, plan, step=0.05, local_steps=3).x,
                               focus(q, plan, step=0.05, local_steps=3).x, rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("tau", [1, 4])
def test_matrix_forms_agree(quad, plan, tau):
    kw = dict(step=0.03, local_steps=tau)
    np.testing.assert_allclose(focus(quad, plan, **kw).x, focus_matrix(quad, plan, **kw),
                               atol=1e-12)
    fa = fedavg(quad, plan, **kw).x
    np.testing.assert_allclose(fa, fedavg_matrix(quad, plan, **kw), atol=1e-12)
    np.testing.assert_allclose(fa, fedavg_virtual(quad, plan, **kw), atol=1e-12)


def test_logistic_tracks(plan):
    pb = random_logistic(np.random.default_rng(7), 6, 10, 3, lam=0.1)
    tr = focus(pb, plan, step=0.1, local_steps=3, record_sum=True)
    np.testing.assert_allclose(tr.y, tr.g_sum, atol=1e-12)


def test_empty_rounds(quad):
    plan = np.zeros((3, 6), dtype=bool)
    assert np.all(fedavg(quad, plan, step=0.1, local_steps=2, x0=np.ones(4)).x == 1.0)
    tr = focus(quad, plan, step=0.1, local_steps=2, x0=np.ones(4), init="gradient")
    y0 = quad.client_gradients(np.ones((6, 4))).sum(axis=0)
    np.testing.assert_allclose(tr.x[1], np.ones(4) - 0.1 * y0)


@pytest.mark.parametrize("algo", [fedavg, focus, fedau, mifa, scaffold, proxskip,
                                  focus_matrix, fedavg_matrix])
def test_validation(quad, algo):
    good = np.ones((2, 6), dtype=bool)
    with pytest.raises(ValueError, match="plan"):
        algo(quad, np.ones((2, 5), dtype=bool), step=0.1, local_steps=1)
    with pytest.raises(ValueError, match="plan"):
        algo(quad, np.ones(6, dtype=bool), step=0.1, local_steps=1)
    with pytest.raises(ValueError, match="plan"):
        algo(quad, 2 * np.ones((2, 6)), step=0.1, local_steps=1)
    for bad in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="step"):
            algo(quad, good, step=bad, local_steps=1)
    with pytest.raises(ValueError, match="local_steps"):
        algo(quad, good, step=0.1, local_steps=0)
    with pytest.raises(ValueError, match="x0"):
        algo(quad, good, step=0.1, local_steps=1, x0=np.ones(3))


def test_convexity_required():
    A = np.stack([np.eye(2), np.eye(2)])
    with pytest.raises(ValueError, match="A"):
        Quadratic(A + np.array([[0, 1.0], [0, 0]]), np.zeros((2, 2)))  # non-symmetric
    with pytest.raises(ValueError, match="A"):
        Quadratic(np.stack([np.diag([1.0, -1.0])] * 2), np.zeros((2, 2)))  # indefinite


def test_noise_shape(quad, plan):
    with pytest.raises(ValueError, match="noise"):
        sg_focus(quad, plan, np.zeros((40, 6, 2, 4)), step=0.1, local_steps=1)


def test_logistic_kernel_matches_twin(plan):
    from flbounds.problems import NonconvexLogistic
    base = random_logistic(np.random.default_rng(8), 6, 9, 3, lam=0.1)
    for pb in (base, NonconvexLogistic(base.features, base.labels, 0.01, 0.5)):
        for algo, twin in ((fedavg, twin_fedavg), (focus, twin_focus)):
            a = algo(pb, plan, step=0.1, local_steps=3).x
            np.testing.assert_allclose(a, twin(pb, plan, 0.1, 3, np.zeros(3)), rtol=RTOL,
                                       atol=1e-13)


def test_scalar_pl_kernel_matches_twin(plan):
    from flbounds.problems import ScalarPL
    pb = ScalarPL(np.array([1.0, -2.0, 0.5, 0.5, -0.25, 0.25]))
    for algo, twin in ((fedavg, twin_fedavg), (focus, twin_focus)):
        a = algo(pb, plan, step=0.01, local_steps=3, x0=np.array([2.0])).x
        np.testing.assert_allclose(a, twin(pb, plan, 0.01, 3, np.array([2.0])), rtol=RTOL,
                                   atol=1e-13)


@pytest.mark.parametrize("dim", [4, 8])      # d = 8: the fused register kernels
def test_resume_from_a_state_is_the_continued_run(quad, plan, dim):
    """Ten rounds, then the rest resumed from the state after ten: the same iterates; a
    participant's model is where its stored gradient was evaluated (``models`` are only
    carried through for the others)."""
    from flbounds.algorithms import FocusState
    kw = dict(step=0.02, local_steps=3)
    if dim != 4:
        quad = random_quadratics(np.random.default_rng(3), 6, dim, mu=1.0, L=5.0)
    full = focus(quad, plan, init="gradient", **kw)
    head = focus(quad, plan[:10], init="gradient", **kw)
    models = np.full((6, dim), 7.0)  # carried through unread
    part = focus(quad, plan[10:11], start=FocusState(head.x[-1], head.y[-1], head.g, models),
                 **kw)
    rest = focus(quad, plan[10:], start=FocusState(head.x[-1], head.y[-1], head.g, models),
                 **kw)
    assert np.array_equal(rest.x, full.x[10:]) and np.array_equal(rest.g, full.g)
    idx = np.flatnonzero(plan[10])
    assert idx.size and np.all(part.models[~plan[10]] == 7.0)
    assert np.array_equal(quad.client_gradients(part.models[idx], clients=idx), part.g[idx])
    with pytest.raises(ValueError, match="start"):
        focus(quad, plan, start=(head.x[-1], head.y[-1], head.g, models), **kw)


def test_non_library_problem_and_compiled_false_rejected(quad, plan):
    class Custom:
        n_clients, dim = 6, 4

        def client_gradients(self, X, clients=None):
            return X

    for algo in (fedavg, focus):
        with pytest.raises(ValueError, match="problem"):
            algo(Custom(), plan, step=0.1, local_steps=1)
        with pytest.raises(ValueError, match="compiled"):
            algo(quad, plan, step=0.1, local_steps=1, compiled=False)


def test_mifa_tau1_is_focus_with_step_over_n(quad, plan):
    """MIFA with tau = 1 memorizes eta grad f_i(stale) and averages over N: FOCUS (tau = 1)
    with step eta / N (spec 002, section 2.4)."""
    a = mifa(quad, plan, step=0.3, local_steps=1).x
    b = focus(quad, plan, step=0.3 / 6, local_steps=1).x
    np.testing.assert_allclose(a, b, atol=1e-13)


def test_fedau_full_participation_is_fedavg(quad):
    plan = np.ones((30, 6), dtype=bool)
    np.testing.assert_allclose(fedau(quad, plan, step=0.05, local_steps=3).x,
                               fedavg(quad, plan, step=0.05, local_steps=3).x, atol=1e-13)


def test_scaffold_and_proxskip_exact_under_full_participation(quad):
    plan = np.ones((400, 6), dtype=bool)
    for algo in (scaffold, proxskip):
        x = algo(quad, plan, step=0.05, local_steps=3).x[-1]
        assert np.linalg.norm(x - quad.x_star) <= 1e-10 * np.linalg.norm(quad.x_star)
