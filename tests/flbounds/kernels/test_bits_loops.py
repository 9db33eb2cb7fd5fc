"""Bit-level contracts of the round kernels against plain loops on scalar gradients.

- FedAvg, FOCUS and SG-FOCUS equal, bit for bit, a plain round loop written here on top of the
  scalar gradients of ``test_bits`` (the summation order the kernels promise), at
  p = 1 and p = 0.1, serially and in chunks on one and two threads; so no change of the
  compiled kernels can move an iterate without failing here.
- The register-resident quadratic local phases (d = 8, 16) equal the same plain loops.
"""

import re

import numba
import numpy as np
import pytest
from numba import njit

from flbounds.algorithms import fedavg, focus, sg_focus
from flbounds.kernels import rounds
from flbounds.kernels._layout import rows_last
from flbounds.kernels.gradients import QuadraticData, gradients_at
from tests.flbounds.kernels.test_bits import (
    N_CLIENTS,
    VECTOR_KINDS,
    _problem,
    _quadratic_rowwise,
    _rowwise,
    _same_bits,
)


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
