r"""Per-client gradients of the synthetic problems: one implementation per problem kind.

A problem reaches the compiled code as a small typed container (a NamedTuple of arrays and
scalars), one class per kind; numba compiles each caller once per container type and
:func:`client_gradient` dispatches on that type at compile time:

- :class:`QuadraticData` ``(A (N, d, d), b (N, d), At)``, ``At[i] = A[i].T``:
  :math:`\nabla f_i(z) = A_i z - b_i`;
- :class:`RidgeData` ``(features (N, n, d), targets (N, n), lam)``:
  :math:`\nabla f_i(z) = X_i^\top (X_i z - y_i)/n + \lambda z`;
- :class:`LogisticData` ``(features (N, n, d), labels (N, n) in {-1, +1}, lam, rho)``:
  :math:`-\frac1n\sum_k y_k\sigma(-y_k a_k^\top z)a_k + \lambda z + 2\rho z/(1 + z^2)^2`;
- :class:`ScalarPLData` ``(c (N,))``: :math:`f_i'(z) = 2z + 3\sin 2z + c_i` (d = 1).

Protocol (all compiled-only): ``scratch = client_scratch(data)`` once per thread,
``load_client(data, c, scratch)`` once before a run of gradients of client ``c``, then
``client_gradient(data, c, z, scratch, out)``; ``prefetch_slice(data, c, part, parts)`` hints
one slice of a client's data into the cache (:func:`client_ahead` names the participant to
hint for). :func:`client_work` is the multiply-add count of one gradient (for the parallel
threshold). :func:`gradients_at` evaluates many (point, client)
pairs through the same calls; it is what :meth:`flbounds.problems.Quadratic.client_gradients`
and the other problems run, so the round loops and the problems' gradients are one
implementation. No RNG, no validation.

Summation order (fixed, fastmath off, so the bits do not depend on threads or chunking): a row
:math:`m^\top z` of :math:`A_c z` and a logistic margin :math:`a_k^\top z` are four partial sums
over the coordinates :math:`\equiv 0, 1, 2, 3 \pmod 4` (the last ``d % 4`` into the first), each
from 0 in coordinate order, combined as ``(s0 + s1) + (s2 + s3)``; a ridge residual is one sum
from :math:`-y_k` in coordinate order; :math:`X^\top r` and the logistic weighted sum are one
sum over the samples in order from 0.

Layout (why the data sit as they do): without fastmath LLVM may not reorder any of these sums,
so the only vectorization left is across *independent* outputs, several rows or samples at
once, and that needs the outputs to be the contiguous axis. For :math:`A_c z` that is
:math:`A_c^\top` (``At``, which is ``A`` itself since the problems' :math:`A_i` are exactly
symmetric: no copy, :func:`flbounds.kernels._layout.rows_last`); for :math:`X_c z` (ridge
residuals, logistic margins) it is :math:`X_c^\top` as (d, n), and for :math:`X_c^\top r` it is
:math:`X_c` as stored. Ridge therefore transposes the client's (n, d) block into the (d, n)
scratch in :func:`load_client`, once per visit (in 4 x 4 register tiles,
:func:`~flbounds.kernels._simd.transpose_into`), where it stays in L1 for the
``local_steps`` gradients. A logistic margin needs no copy: its four partial sums are the four
lanes of a vector read from the samples as stored (:mod:`flbounds.kernels._simd_samples`; a
ridge residual, one sum from :math:`-y_k`, has no such lanes, and four partial sums in its
place measured slower than the copy). A second, transposed copy of all features stored once
per problem was measured slower at N = 1e4 (``python -m benchmarks vec_kernels``): it doubles
the bytes a round reads from memory, which costs more than the in-cache transpose. The vector
code itself is emitted by :mod:`flbounds.kernels._simd` (LLVM's loop vectorizer leaves loops
over d = 16 or n = 20 outputs scalar); each lane there is the scalar expression, so the bits
are those of the scalar loops the tests keep as reference (``tests/flbounds/kernels/test_bits.py``).
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from flbounds.kernels._layout import rows_last
from flbounds.kernels._simd import (
    dot4_rows,
    madd_rows,
    prefetch_l2,
    transpose_into,
)
from flbounds.kernels._simd_exp import logistic_weights
from flbounds.kernels._simd_samples import sample_sums4

#: jit options of the protocol's implementations (and the blocked ones'): cached on disk as
#: the kernels are, so each is compiled once for every process and caller; numba would
#: otherwise compile an overload's implementation anew in each process that needs it
CACHED = {"fastmath": False, "cache": True}


class QuadraticData(NamedTuple):
    """Clients :math:`f_i(z) = z^\\top A_i z/2 - b_i^\\top z`; ``At[i] = A[i].T`` (the same
    array when every :math:`A_i` is exactly symmetric, see :mod:`flbounds.kernels._layout`)."""

    A: np.ndarray
    b: np.ndarray
    At: np.ndarray


class RidgeData(NamedTuple):
    """Clients :math:`\\|X_i z - y_i\\|^2/(2n) + \\lambda\\|z\\|^2/2`."""

    features: np.ndarray
    targets: np.ndarray
    lam: float


class LogisticData(NamedTuple):
    """Logistic clients with the L2 term and the non-convex penalty weight ``rho``."""

    features: np.ndarray
    labels: np.ndarray
    lam: float
    rho: float


class ScalarPLData(NamedTuple):
    """Scalar PL clients :math:`z^2 + 3\\sin^2 z + c_i z`."""

    c: np.ndarray


def _kind(data):
    """The container class of a numba type (None for anything else)."""
    return getattr(data, "instance_class", None)


@njit(cache=True, fastmath=False, inline="always")
def _quadratic(At, b, c, z, acc, out):
    r""":math:`A_c z - b_c`, every row in the summation order of the module docstring,
    vectorized over rows through the transposed copy ``At``; the partial sums stay in
    registers (:func:`~flbounds.kernels._simd.dot4_rows`)."""
    d = z.shape[0]
    dot4_rows(out, d, At, c * d * d, d, z, d, b, c * d)


@njit(cache=True, fastmath=False, inline="always")
def _ridge(features, ft, targets, lam, c, z, resid, out):
    r""":math:`X_c^\top (X_c z - y_c)/n + \lambda z`: each residual summed over the coordinates
    in order from :math:`-y_{c,k}` (vectorized over samples on ``ft``, the client's features
    transposed by :func:`load_client`), then the
    gradient summed over the samples in order from 0 (vectorized over coordinates on
    ``features``)."""
    n, d = features.shape[1], z.shape[0]
    for k in range(n):
        resid[k] = -targets[c, k]
    madd_rows(resid, 0, n, ft, 0, n, z, 0, d)
    for q in range(d):
        out[q] = 0.0
    madd_rows(out, 0, d, features, c * n * d, d, resid, 0, n)
    for q in range(d):
        out[q] = out[q] / n + lam * z[q]


@njit(cache=True, fastmath=False, inline="always")
def _logistic(features, labels, lam, rho, c, z, acc, out):
    r"""Margins :math:`a_k^\top z` in the module docstring's order (the four partial sums
    as the lanes of a vector, from the samples as stored:
    :func:`~flbounds.kernels._simd_samples.sample_sums4`), weights
    :math:`-y_k\sigma(-y_k a_k^\top z)` (eight samples per vector,
    :func:`~flbounds.kernels._simd_exp.logistic_weights`), then the weighted sum of the samples
    in sample order from 0 (vectorized over coordinates), penalty terms last."""
    n, d = features.shape[1], z.shape[0]
    sample_sums4(acc, n, features, c * n * d, d, z)
    logistic_weights(acc, n, labels, c * n)
    for p in range(d):
        out[p] = 0.0
    madd_rows(out, 0, d, features, c * n * d, d, acc, 0, n)
    if rho == 0.0:      # the branch outside the loops: each of them vectorizes
        for p in range(d):
            out[p] = out[p] / n + lam * z[p]
        return
    for p in range(d):
        s = 1.0 + z[p] * z[p]
        out[p] = (out[p] / n + lam * z[p]) + 2.0 * rho * z[p] / (s * s)


def client_scratch(data):
    """Per-thread scratch of :func:`client_gradient` (compiled only)."""
    raise NotImplementedError("client_scratch is only callable from compiled code")


def load_client(data, c, scratch):
    """Prepare ``scratch`` for gradients of client ``c`` (compiled only)."""
    raise NotImplementedError("load_client is only callable from compiled code")


def client_gradient(data, c, z, scratch, out):
    r"""Write :math:`\nabla f_c(z)` into ``out`` (d,) (compiled only)."""
    raise NotImplementedError("client_gradient is only callable from compiled code")


def prefetch_slice(data, c, part, parts):
    """Hint slice ``part`` of ``parts`` (equal up to rounding, in memory order) of client
    ``c``'s data into L2; nothing if c < 0 (compiled only).

    The round loops hint the data of the participant :data:`AHEAD` places on (:func:`client_ahead`;
    only for data large enough, :func:`hint_ahead`), slice t at the current one's local step t:
    a burst of a ridge client's 125 cache lines stalls the gradients after it (ridge FedAvg at
    N = 1e4, tau = 5, p = 1: 1.70 us per participant with one burst per client, 1.37 us spread
    over the steps). Two places on, the per-participant time at N = 1e4 (78 MiB) is that of
    N = 100 (in cache), 1.12-1.14 against 1.23 us one place on. The hints pay also for the next
    client in memory: the hardware prefetcher stops at every 4 KiB page."""
    raise NotImplementedError("prefetch_slice is only callable from compiled code")


#: how many participants ahead of the current one the round loops hint data for
AHEAD = 2
#: fewest values of one client's data, and fewest bytes of all clients' data, for which the
#: round loops hint: smaller data stay in the caches, and the hint code alone slowed a loop
#: it sat in (FedAvg on 8 quadratic clients with d = 3: 300 against 200 ns per participant)
HINT_MIN, HINT_BYTES = 64, 4 * 2**20


def hint_ahead(data):
    """The ``ahead`` of :class:`~flbounds.kernels.rounds.RoundSettings` for these data:
    :data:`AHEAD` if hints pay, else None, for which the kernels are compiled without any
    hint code (plain Python, once per run)."""
    if isinstance(data, QuadraticData):
        block = data.A
    elif isinstance(data, (RidgeData, LogisticData)):
        block = data.features
    else:
        return None
    values = block.shape[1] * block.shape[2]
    return AHEAD if values >= HINT_MIN and block.nbytes >= HINT_BYTES else None


def client_ahead(ahead, clients, j, m):
    """``clients[j + ahead]`` if that is among the first m participants, else -1; always -1
    when ``ahead`` is None (compiled only)."""
    raise NotImplementedError("client_ahead is only callable from compiled code")


def index_ahead(ahead, c, n):
    """:func:`client_ahead` for a loop over all n clients in order (compiled only)."""
    raise NotImplementedError("index_ahead is only callable from compiled code")


@overload(client_ahead, jit_options=CACHED, inline="always")
def _client_ahead(ahead, clients, j, m):
    if isinstance(ahead, types.NoneType):
        return lambda ahead, clients, j, m: np.int64(-1)
    return lambda ahead, clients, j, m: clients[j + ahead] if j + ahead < m else np.int64(-1)


@overload(index_ahead, jit_options=CACHED, inline="always")
def _index_ahead(ahead, c, n):
    if isinstance(ahead, types.NoneType):
        return lambda ahead, c, n: np.int64(-1)
    return lambda ahead, c, n: np.int64(c + ahead) if c + ahead < n else np.int64(-1)


def client_work(data):
    """Multiply-adds of one gradient (compiled only)."""
    raise NotImplementedError("client_work is only callable from compiled code")


@overload(client_scratch, jit_options=CACHED)
def _client_scratch(data):
    kind = _kind(data)
    if kind is QuadraticData:
        return lambda data: (np.empty((1, 1)), np.empty(4 * data.A.shape[1]))
    if kind in (RidgeData, LogisticData):
        def impl(data):
            n, d = data.features.shape[1], data.features.shape[2]
            return np.empty((d, n)), np.empty(4 * n)
        return impl
    if kind is ScalarPLData:
        return lambda data: (np.empty((1, 1)), np.empty(1))
    return None


@njit(cache=True, fastmath=False, inline="always")
def slice_bounds(size, part, parts):
    """``(lo, count)`` of slice ``part`` of ``parts`` of ``size`` values: the slices are
    contiguous, in order, and cover ``range(size)`` exactly once."""
    lo = part * size // parts
    return lo, (part + 1) * size // parts - lo


@njit(cache=True, fastmath=False, inline="always")
def _hint_slice(arr, c, size, part, parts):
    """Hint slice ``part`` of ``parts`` of the ``size`` values of block c of ``arr``; a whole
    block (``parts == 1``, the fused kernels) without an integer division."""
    if parts == 1:
        prefetch_l2(arr, c * size, size)
    else:
        lo, count = slice_bounds(size, part, parts)
        prefetch_l2(arr, c * size + lo, count)


@njit(cache=True, fastmath=False, inline="always")
def _load_ridge(data, c, scratch):
    transpose_into(scratch[0], data.features, c)


@njit(cache=True, fastmath=False, inline="always")
def _quadratic_gradient(data, c, z, scratch, out):
    _quadratic(data.At, data.b, c, z, scratch[1], out)


@njit(cache=True, fastmath=False, inline="always")
def _ridge_gradient(data, c, z, scratch, out):
    _ridge(data.features, scratch[0], data.targets, data.lam, c, z, scratch[1], out)


@njit(cache=True, fastmath=False, inline="always")
def _logistic_gradient(data, c, z, scratch, out):
    _logistic(data.features, data.labels, data.lam, data.rho, c, z, scratch[1], out)


@njit(cache=True, fastmath=False, inline="always")
def _scalar_gradient(data, c, z, scratch, out):
    out[0] = 2.0 * z[0] + 3.0 * math.sin(2.0 * z[0]) + data.c[c]


@njit(cache=True, fastmath=False, inline="always")
def _hint_quadratic(data, c, part, parts):
    if c >= 0:
        d = data.At.shape[1]
        _hint_slice(data.At, c, d * d, part, parts)
        _hint_slice(data.b, c, d, part, parts)


@njit(cache=True, fastmath=False, inline="always")
def _hint_samples(data, c, part, parts):
    if c >= 0:
        n, d = data.features.shape[1], data.features.shape[2]
        _hint_slice(data.features, c, n * d, part, parts)
        _hint_slice(data[1], c, n, part, parts)     # targets or labels


@njit(cache=True, fastmath=False, inline="always")
def _load_none(data, c, scratch):
    pass


@njit(cache=True, fastmath=False, inline="always")
def _hint_none(data, c, part, parts):
    pass


#: per container class: what load_client, client_gradient and prefetch_slice run, in order
KIND_STEPS = {
    QuadraticData: (_load_none, _quadratic_gradient, _hint_quadratic),
    RidgeData: (_load_ridge, _ridge_gradient, _hint_samples),
    LogisticData: (_load_none, _logistic_gradient, _hint_samples),
    ScalarPLData: (_load_none, _scalar_gradient, _hint_none),
}


def kind_steps(data):
    """``(load, gradient, hint)`` of :data:`KIND_STEPS` for a numba type (None if unknown)."""
    return KIND_STEPS.get(_kind(data))


@overload(load_client, jit_options=CACHED)
def _load_client(data, c, scratch):
    steps = kind_steps(data)
    return None if steps is None else steps[0].py_func


@overload(client_gradient, jit_options=CACHED)
def _client_gradient(data, c, z, scratch, out):
    steps = kind_steps(data)
    return None if steps is None else steps[1].py_func


@overload(prefetch_slice, jit_options=CACHED)
def _prefetch_slice(data, c, part, parts):
    steps = kind_steps(data)
    return None if steps is None else steps[2].py_func


@overload(client_work, jit_options=CACHED)
def _client_work(data):
    kind = _kind(data)
    if kind is QuadraticData:
        return lambda data: data.A.shape[1] * data.A.shape[2]
    if kind in (RidgeData, LogisticData):
        return lambda data: data.features.shape[1] * data.features.shape[2]
    if kind is ScalarPLData:
        return lambda data: 1
    return None


@njit(cache=True, fastmath=False)
def gradients_at(data, X, clients, out):
    """``out[j] = grad f_{clients[j]}(X[j])`` for every row j."""
    scratch = client_scratch(data)
    for j in range(clients.shape[0]):
        load_client(data, clients[j], scratch)
        client_gradient(data, clients[j], X[j], scratch, out[j])


def population(data):
    r"""The container of :math:`F = \frac1N \sum_i f_i` as a single client (index 0).

    Quadratics average :math:`A_i, b_i`; ridge and logistic clients have the same number of
    samples each, so F is the same loss on all samples pooled; scalar PL averages :math:`c_i`.
    Plain Python (glue): it builds arrays once per run."""
    if isinstance(data, QuadraticData):
        A = data.A.mean(axis=0)[None]
        return QuadraticData(A, data.b.mean(axis=0)[None], rows_last(A))
    if isinstance(data, RidgeData):
        d = data.features.shape[2]
        return RidgeData(data.features.reshape(1, -1, d), data.targets.reshape(1, -1),
                         data.lam)
    if isinstance(data, LogisticData):
        d = data.features.shape[2]
        return LogisticData(data.features.reshape(1, -1, d), data.labels.reshape(1, -1),
                            data.lam, data.rho)
    if isinstance(data, ScalarPLData):
        return ScalarPLData(np.array([data.c.mean()]))
    raise ValueError(f"data must be a container of flbounds.kernels.gradients, got {data!r}")
