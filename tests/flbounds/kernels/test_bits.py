"""Bit-level contracts of the gradient and round kernels, for every problem kind.

- The vectorized gradients (explicit vector multiply-adds over output elements, on the
  transposed layouts) equal a one-row-at-a-time scalar loop written here in the summation order
  the kernels promise, bit for bit, with dimensions and sample counts that leave 4-way and
  8-way tails. That scalar order is the one the kernels had before they were vectorized.
- (``test_bits_loops``) the round kernels equal plain loops on these scalar
  gradients, bit for bit.
- FedAvg, FOCUS and SG-FOCUS give the same bits serially, in chunks on one thread and in
  chunks on two threads (``numba.set_num_threads``), and match the NumPy twins to rounding.
- SAFARI's replicates give the same bits on one and two threads.
"""


import numba
import numpy as np
import pytest
from numba import njit

from flbounds.algorithms import fedavg, focus, sg_focus
from flbounds.algorithms.safari import safari, safari_plan
from flbounds.kernels import rounds
from flbounds.kernels._simd_exp import expit
from flbounds.kernels.block_gradients import block_gradients_at
from flbounds.kernels.gradients import QuadraticData, RidgeData, gradients_at, population
from flbounds.problems import (
    NonconvexLogistic,
    random_logistic,
    random_quadratics,
    random_ridge,
    random_scalar_pl,
)
from tests import reference as ref

N_CLIENTS = 40
TWO_THREADS = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2,
                                 reason="needs 2 numba threads")


def _problem(kind, dim, samples=7):
    rng = np.random.default_rng(dim)
    if kind == "quadratic":
        return random_quadratics(rng, N_CLIENTS, dim, mu=0.2, L=2.0)
    if kind == "ridge":
        return random_ridge(rng, N_CLIENTS, samples, dim, lam=0.1)
    if kind == "logistic":
        return random_logistic(rng, N_CLIENTS, samples, dim, lam=0.1)
    if kind == "nonconvex":
        base = random_logistic(rng, N_CLIENTS, samples + 2, dim, lam=0.1)
        return NonconvexLogistic(base.features, base.labels, 0.1, 0.3)
    return random_scalar_pl(rng, N_CLIENTS)


KINDS = ["quadratic", "ridge", "logistic", "nonconvex", "scalar_pl"]
VECTOR_KINDS = ["quadratic", "ridge", "logistic", "nonconvex"]
# (d, n): output widths that take every vector width of flbounds.kernels._simd (32, 16, 8, 4
# and single lanes) and every d % 4
SIZES = [(2, 7), (5, 7), (6, 29), (16, 45), (19, 20), (29, 7), (45, 29), (50, 20)]


def _same_bits(a, b):
    """Equal bit patterns (``np.array_equal`` would let -0.0 pass for 0.0)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


@njit(cache=False)
def _dot(M, c, k, z):
    """``M[c, k, :] @ z`` in the promised order: four partial sums over the coordinates
    p = 0, 1, 2, 3 (mod 4) of the blocked part, the last ``d % 4`` into the first, each from 0 in
    coordinate order, combined as ``(s0 + s1) + (s2 + s3)``."""
    d = z.shape[0]
    s0 = s1 = s2 = s3 = 0.0
    p = 0
    while p + 4 <= d:
        s0 += M[c, k, p] * z[p]
        s1 += M[c, k, p + 1] * z[p + 1]
        s2 += M[c, k, p + 2] * z[p + 2]
        s3 += M[c, k, p + 3] * z[p + 3]
        p += 4
    while p < d:
        s0 += M[c, k, p] * z[p]
        p += 1
    return (s0 + s1) + (s2 + s3)


@njit(cache=False)
def _quadratic_rowwise(A, b, X, clients, out):
    """Row p of the gradient: :func:`_dot` (four strided partial sums) minus b."""
    for j in range(clients.shape[0]):
        for p in range(X.shape[1]):
            out[j, p] = _dot(A, clients[j], p, X[j]) - b[clients[j], p]


@njit(cache=False)
def _logistic_rowwise(features, labels, lam, rho, X, clients, out):
    """One sample per pass: weight from :func:`_dot`, then ``out += w a_k`` in sample order."""
    n, d = features.shape[1], X.shape[1]
    for j in range(clients.shape[0]):
        c, z = clients[j], X[j]
        out[j, :] = 0.0
        for k in range(n):
            y = labels[c, k]
            w = -y * expit(-y * _dot(features, c, k, z))
            for p in range(d):
                out[j, p] += w * features[c, k, p]
        for p in range(d):
            g = out[j, p] / n + lam * z[p]
            if rho != 0.0:
                s = 1.0 + z[p] * z[p]
                g += 2.0 * rho * z[p] / (s * s)
            out[j, p] = g


@njit(cache=False)
def _ridge_rowwise(features, targets, lam, X, clients, out):
    """Residual of sample k summed in coordinate order from -y_k; gradient in sample order."""
    n, d = features.shape[1], X.shape[1]
    for j in range(clients.shape[0]):
        c, z = clients[j], X[j]
        out[j, :] = 0.0
        for k in range(n):
            r = -targets[c, k]
            for p in range(d):
                r += features[c, k, p] * z[p]
            for q in range(d):
                out[j, q] += r * features[c, k, q]
        for q in range(d):
            out[j, q] = out[j, q] / n + lam * z[q]


def _rowwise(data, X, clients):
    """The scalar reference gradients of ``data`` at ``X[j]`` for clients ``clients[j]``."""
    want = np.empty_like(X)
    if isinstance(data, QuadraticData):
        _quadratic_rowwise(data.A, data.b, X, clients, want)
    elif isinstance(data, RidgeData):
        _ridge_rowwise(data.features, data.targets, data.lam, X, clients, want)
    else:
        _logistic_rowwise(data.features, data.labels, data.lam, data.rho, X, clients, want)
    return want


@pytest.mark.parametrize(("dim", "samples"), SIZES)
@pytest.mark.parametrize("kind", VECTOR_KINDS)
def test_vectorized_gradients_keep_the_rowwise_bits(kind, dim, samples):
    problem = _problem(kind, dim, samples)
    X = np.random.default_rng(1).standard_normal((N_CLIENTS, dim))
    X[3] = 0.0  # signed zeros: an all-zero point must give the reference's zeros
    clients = np.arange(N_CLIENTS)[::-1].copy()
    want = _rowwise(problem.kernel_data, X, clients)
    assert _same_bits(problem.client_gradients(X, clients=clients), want)
    pooled, first = population(problem.kernel_data), np.zeros(1, dtype=np.int64)
    got = np.empty((1, dim))
    gradients_at(pooled, X[:1], first, got)
    assert _same_bits(got, _rowwise(pooled, X[:1], first))


@pytest.mark.parametrize(("dim", "samples"), SIZES[::2])
@pytest.mark.parametrize("kind", VECTOR_KINDS)
def test_block_gradients_keep_the_rowwise_bits(kind, dim, samples):
    problem = _problem(kind, dim, samples)
    data, width, client = problem.kernel_data, 11, 5
    Z = np.random.default_rng(2).standard_normal((dim, width))
    got = np.empty_like(Z)
    block_gradients_at(data, Z, client, got)
    want = _rowwise(data, np.ascontiguousarray(Z.T), np.full(width, client))
    assert _same_bits(got, want.T)


def _plan(seed=3, n_rounds=12):
    rng = np.random.default_rng(seed)
    plan = rng.random((n_rounds, N_CLIENTS)) < rng.choice([0.1, 0.5, 1.0], size=(n_rounds, 1))
    plan[2] = False  # an empty round
    return plan


def _runs(problem, plan, tau=3):
    step = 0.05
    noise = 0.1 * np.random.default_rng(4).standard_normal((*plan.shape, tau, problem.dim))
    fo = focus(problem, plan, step=step, local_steps=tau, record_sum=True, init="gradient")
    sg = sg_focus(problem, plan, noise, step=step, local_steps=tau)
    return (fedavg(problem, plan, step=step, local_steps=tau).x, fo.x, fo.y, fo.g, fo.g_sum,
            sg.x, sg.y, sg.g)


def _settings_runs(problem, plan, monkeypatch):
    """Serial; in chunks on 1 thread; in chunks on 2 threads (if available)."""
    before = numba.get_num_threads()
    out = []
    try:
        for cut, threads in ((-1, 1), (0, 1), (0, 2)):
            if threads > numba.config.NUMBA_NUM_THREADS:
                continue
            monkeypatch.setattr(rounds, "PARALLEL_MIN_WORK", cut)
            numba.set_num_threads(threads)
            out.append(_runs(problem, plan))
    finally:
        numba.set_num_threads(before)
    return out


@pytest.mark.parametrize(("kind", "dim"), [(k, 1 if k == "scalar_pl" else 6) for k in KINDS]
                         + [("quadratic", 8), ("quadratic", 16)])   # the fused register spans
def test_rounds_same_bits_serial_chunked_and_two_threads(kind, dim, monkeypatch):
    problem = _problem(kind, dim)
    runs = _settings_runs(problem, _plan(), monkeypatch)
    assert len(runs) >= 2
    for other in runs[1:]:
        for one, two in zip(runs[0], other, strict=True):
            assert np.array_equal(one, two)


@pytest.mark.parametrize("kind", ["quadratic", "logistic", "nonconvex"])
def test_rounds_match_numpy_twins(kind):
    # The twins sum in other orders (einsum gradients, NumPy means): rounding ~ d n eps per
    # gradient, a few hundred gradients deep.
    problem, plan, tau, step = _problem(kind, 6), _plan(5), 3, 0.05
    x0 = np.zeros(problem.dim)
    np.testing.assert_allclose(fedavg(problem, plan, step=step, local_steps=tau).x,
                               ref.fedavg(problem, plan, step, tau, x0), rtol=1e-11,
                               atol=1e-12)
    tr = focus(problem, plan, step=step, local_steps=tau)
    for got, want in zip((tr.x, tr.y, tr.g), ref.focus(problem, plan, step, tau, x0),
                         strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)


@TWO_THREADS
@pytest.mark.parametrize("kind", ["quadratic", "logistic"])
def test_safari_same_bits_one_and_two_threads(kind):
    problem = _problem(kind, 5)
    plan = safari_plan(np.random.default_rng(6), n_rounds=20, q=0.5,
                       eligible=np.arange(N_CLIENTS), n_sampled=8, local_steps=3,
                       dim=problem.dim, client_noise_std=0.1, server_noise_std=0.1)
    before = numba.get_num_threads()
    traces = []
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            traces.append(safari(problem, plan, step_client=0.05, step_server=0.05))
    finally:
        numba.set_num_threads(before)
    for one, two in zip(*traces, strict=True):
        assert np.array_equal(one, two, equal_nan=True)
