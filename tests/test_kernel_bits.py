"""Bit-level contracts of the gradient and round kernels, for every problem kind.

- The vectorized gradients (explicit vector multiply-adds over output elements, on the
  transposed layouts) equal a one-row-at-a-time scalar loop written here in the summation order
  the kernels promise, bit for bit, with dimensions and sample counts that leave 4-way and
  8-way tails. That scalar order is the one the kernels had before they were vectorized.
- FedAvg, FOCUS and SG-FOCUS equal, bit for bit, a plain round loop written here on top of
  those scalar gradients, at p = 1 and p = 0.1, serially and in chunks on one and two threads;
  so no change of the compiled kernels can move an iterate without failing here.
- FedAvg, FOCUS and SG-FOCUS give the same bits serially, in chunks on one thread and in
  chunks on two threads (``numba.set_num_threads``), and match the NumPy twins to rounding.
- SAFARI's replicates give the same bits on one and two threads.
"""

import re

import numba
import numpy as np
import pytest
from numba import njit

from flbounds.algorithms import fedavg, focus, sg_focus
from flbounds.algorithms.safari import safari, safari_plan
from flbounds.kernels import rounds
from flbounds.kernels.block_gradients import block_gradients_at
from flbounds.kernels.gradients import QuadraticData, RidgeData, gradients_at, population
from flbounds.kernels.losses import _expit
from flbounds.problems import (
    NonconvexLogistic,
    random_logistic,
    random_quadratics,
    random_ridge,
    random_scalar_pl,
)
from flbounds.problems._layout import rows_last
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
            w = -y * _expit(-y * _dot(features, c, k, z))
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


@pytest.mark.parametrize("kind", KINDS)
def test_rounds_same_bits_serial_chunked_and_two_threads(kind, monkeypatch):
    problem = _problem(kind, 1 if kind == "scalar_pl" else 6)
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


# ----------------------------------------------------------------- rounds on scalar gradients


def _reference_gradient(problem):
    data = problem.kernel_data

    def gradient(c, z):
        return _rowwise(data, z[None].copy(), np.array([c]))[0]

    return gradient


def _fedavg_loop(gradient, plan, step, tau, x0):
    """FedAvg as the kernels promise it: local steps ``z -= step * g``, the final models added
    in client order from 0, divided by their count; an empty round keeps the model."""
    xs, x = [x0.copy()], x0.copy()
    for r in range(plan.shape[0]):
        acc, members = np.zeros_like(x), np.flatnonzero(plan[r])
        for c in members:
            z = x.copy()
            for _ in range(tau):
                z -= step * gradient(c, z)
            acc += z
        x = acc / members.size if members.size else x.copy()
        xs.append(x)
    return np.array(xs)


def _focus_loop(gradient, plan, noise, step, tau, x0):
    """FOCUS / SG-FOCUS from Algorithm 1's zero memory, pushes added in client order."""
    x, y, g = x0.copy(), np.zeros_like(x0), np.zeros((plan.shape[1], x0.size))
    xs, ys = [x.copy()], [y.copy()]
    for r in range(plan.shape[0]):
        for c in np.flatnonzero(plan[r]):
            z = x.copy()
            for t in range(tau):
                h = gradient(c, z)
                if noise is not None:
                    h += noise[r, c, t]
                v = h - g[c]
                if t < tau - 1:
                    z -= step * v
            g[c] = h
            y += v
        x = x - step * y
        xs.append(x.copy())
        ys.append(y.copy())
    return np.array(xs), np.array(ys), g


@pytest.mark.parametrize("p", [1.0, 0.1])
@pytest.mark.parametrize("kind", VECTOR_KINDS)
def test_rounds_equal_a_plain_loop_on_scalar_gradients(kind, p, monkeypatch):
    problem, tau, step = _problem(kind, 19, 20), 3, 0.05
    plan = np.random.default_rng(7).random((10, N_CLIENTS)) < p
    plan[2] = False  # an empty round
    noise = 0.1 * np.random.default_rng(4).standard_normal((*plan.shape, tau, problem.dim))
    x0 = np.random.default_rng(8).standard_normal(problem.dim)
    gradient = _reference_gradient(problem)
    want = (_fedavg_loop(gradient, plan, step, tau, x0),
            *_focus_loop(gradient, plan, None, step, tau, x0),
            *_focus_loop(gradient, plan, noise, step, tau, x0))
    before = numba.get_num_threads()
    try:
        for cut, threads in ((-1, 1), (0, 1), (0, 2)):
            if threads > numba.config.NUMBA_NUM_THREADS:
                continue
            monkeypatch.setattr(rounds, "PARALLEL_MIN_WORK", cut)
            numba.set_num_threads(threads)
            fo = focus(problem, plan, step=step, local_steps=tau, x0=x0)
            sg = sg_focus(problem, plan, noise, step=step, local_steps=tau, x0=x0)
            got = (fedavg(problem, plan, step=step, local_steps=tau, x0=x0).x,
                   fo.x, fo.y, fo.g, sg.x, sg.y, sg.g)
            for one, two in zip(got, want, strict=True):
                assert _same_bits(one, two), (cut, threads)
    finally:
        numba.set_num_threads(before)


def test_quadratic_kernel_reads_the_transpose_of_a_nonsymmetric_matrix():
    # rows_last copies only a non-symmetric A; the gradient must still be A z - b row by row
    rng = np.random.default_rng(9)
    A, b = rng.standard_normal((3, 13, 13)), rng.standard_normal((3, 13))
    X, clients = rng.standard_normal((6, 13)), np.array([2, 0, 1, 1, 0, 2])
    At = rows_last(A)
    assert At is not A and np.array_equal(At[1], A[1].T)
    got = np.empty_like(X)
    gradients_at(QuadraticData(A, b, At), X, clients, got)
    want = np.empty_like(X)
    _quadratic_rowwise(A, b, X, clients, want)
    assert _same_bits(got, want)
    symmetric = 0.5 * (A + A.transpose(0, 2, 1))
    assert rows_last(symmetric) is symmetric


@pytest.mark.parametrize("kind", ["quadratic", "ridge", "logistic"])
def test_gradients_compile_to_vector_code_without_fast_math(kind):
    # a fresh, uncached compilation (cached code cannot be inspected): the multiply-adds must
    # be LLVM vector operations, and no floating-point instruction may carry a fast-math flag
    # (which would allow the reassociation the bit-identity rests on excluding)
    problem = _problem(kind, 16, 20)
    fresh = njit(cache=False)(gradients_at.py_func)
    X = np.zeros((2, problem.dim))
    fresh(problem.kernel_data, X, np.arange(2), np.empty_like(X))
    ir = fresh.inspect_llvm(fresh.signatures[0])
    assert "fmul <8 x double>" in ir
    assert not re.search(r"\bf(add|sub|mul|div) (fast|reassoc|contract|afn|arcp|nsz)", ir)


def _focus_models_loop(gradient, plan, step, tau, start):
    """:func:`_focus_loop` from a given state, also keeping each client's last local point."""
    x, y, g, models = (a.copy() for a in start)
    for r in range(plan.shape[0]):
        for c in np.flatnonzero(plan[r]):
            z = x.copy()
            for t in range(tau):
                h = gradient(c, z)
                v = h - g[c]
                if t < tau - 1:
                    z -= step * v
            g[c], models[c] = h, z
            y += v
        x = x - step * y
    return x, y, g, models


@pytest.mark.parametrize("tau", [1, 3])
@pytest.mark.parametrize("dim", [8, 16])
def test_register_resident_quadratic_phases_equal_a_plain_loop(dim, tau, monkeypatch):
    # d = 8 and 16 run each local phase in registers (flbounds.kernels._simd_quad): the same
    # bits as the plain loop on the scalar gradients, serial, chunked, one and two threads,
    # including the stored gradients and the models of a FOCUS run from a given state
    problem, step = _problem("quadratic", dim), 0.05
    plan = np.random.default_rng(7).random((10, N_CLIENTS)) < 0.3
    plan[2], plan[5] = False, True
    noise = 0.1 * np.random.default_rng(4).standard_normal((*plan.shape, tau, dim))
    x0 = np.random.default_rng(8).standard_normal(dim)
    rng = np.random.default_rng(11)
    start = rounds.FocusState(x0, rng.standard_normal(dim),
                              rng.standard_normal((N_CLIENTS, dim)),
                              rng.standard_normal((N_CLIENTS, dim)))
    gradient = _reference_gradient(problem)
    want = (_fedavg_loop(gradient, plan, step, tau, x0),
            *_focus_loop(gradient, plan, None, step, tau, x0),
            *_focus_loop(gradient, plan, noise, step, tau, x0),
            *_focus_models_loop(gradient, plan, step, tau, start))
    before = numba.get_num_threads()
    try:
        for cut, threads in ((-1, 1), (0, 1), (0, 2)):
            if threads > numba.config.NUMBA_NUM_THREADS:
                continue
            monkeypatch.setattr(rounds, "PARALLEL_MIN_WORK", cut)
            numba.set_num_threads(threads)
            fo = focus(problem, plan, step=step, local_steps=tau, x0=x0)
            sg = sg_focus(problem, plan, noise, step=step, local_steps=tau, x0=x0)
            st = focus(problem, plan, step=step, local_steps=tau, start=start)
            got = (fedavg(problem, plan, step=step, local_steps=tau, x0=x0).x,
                   fo.x, fo.y, fo.g, sg.x, sg.y, sg.g, st.x[-1], st.y[-1], st.g, st.models)
            for k, (one, two) in enumerate(zip(got, want, strict=True)):
                assert _same_bits(one, two), (k, cut, threads)
    finally:
        numba.set_num_threads(before)
