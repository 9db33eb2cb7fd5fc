"""Gradient kernels before and after vectorization, side by side in one process.

``python -m benchmarks vec_kernels [--profile quick|full]``

For each problem kind of ``python -m benchmarks peers`` (quadratic d = 16; ridge and logistic
n = 20, d = 50) at N clients (quick 1e4, full also 1e5), one thread: the local phases of a
FedAvg round (tau = 5 GD steps per participant from the server model, final models summed in
client order), participants Bernoulli(p), p in {1, 0.1}, run by

- ``before``: the scalar kernels of :mod:`benchmarks._kernels_before` (ridge: transposed copy
  of the client's features on every visit);
- ``after``: :func:`flbounds.kernels.gradients.client_gradient` (vector multiply-adds on the
  layouts built once per problem);
- ``after+prefetch``: the same, with the data of the participant two places on hinted into
  L2 while the current one runs, a slice per local step (as the round loops do:
  :func:`flbounds.kernels.gradients.prefetch_slice`).

Also one gradient with the client's data in L1 (the arithmetic alone). The sums of all three
loops are checked to be the same bits before timing. Times are process CPU time per call,
min over interleaved repeats (the machine is shared; the ratio after/before is what counts).
"""

from __future__ import annotations

import json
import time

import numba
import numpy as np
from numba import njit
from numba.extending import overload

from benchmarks import _kernels_before as before
from benchmarks._common import machine_line, markdown_table, parse_args
from flbounds.kernels.gradients import (
    AHEAD,
    LogisticData,
    QuadraticData,
    RidgeData,
    _kind,
    client_ahead,
    client_gradient,
    client_scratch,
    load_client,
    prefetch_slice,
)
from flbounds.problems import random_logistic, random_quadratics, random_ridge

NAME = "vec_kernels"
TAU, SAMPLES, DIM, QUAD_DIM, STEP = 5, 20, 50, 16, 0.01
SIZES = {"quick": (10_000,), "full": (10_000, 100_000)}


def _old_load(data, c, ft):
    raise NotImplementedError("compiled only")


def _old_gradient(data, c, z, ft, resid, g):
    raise NotImplementedError("compiled only")


@overload(_old_load)
def _ol_old_load(data, c, ft):
    if _kind(data) is RidgeData:
        return lambda data, c, ft: before.transpose_client(data.features, c, ft)
    return lambda data, c, ft: None


@overload(_old_gradient)
def _ol_old_gradient(data, c, z, ft, resid, g):
    kind = _kind(data)
    if kind is QuadraticData:
        return lambda data, c, z, ft, resid, g: before._quadratic(data.A, data.b, c, z, g)
    if kind is RidgeData:
        def impl(data, c, z, ft, resid, g):
            before._ridge(data.features, data.targets, data.lam, c, ft, z, resid, g)
        return impl
    if kind is LogisticData:
        def impl(data, c, z, ft, resid, g):
            before._logistic(data.features, data.labels, data.lam, data.rho, c, z, g)
        return impl
    return None


@njit(cache=True, fastmath=False)
def _phases_after(data, clients, x, acc, ahead):
    d = x.shape[0]
    scratch, z, g = client_scratch(data), np.empty(d), np.empty(d)
    acc[:] = 0.0
    for j in range(clients.shape[0]):
        c = clients[j]
        nxt = client_ahead(AHEAD, clients, j, clients.shape[0]) if ahead else -1
        load_client(data, c, scratch)
        z[:] = x
        for t in range(TAU):
            prefetch_slice(data, nxt, t, TAU)
            client_gradient(data, c, z, scratch, g)
            for p in range(d):
                z[p] -= STEP * g[p]
        for p in range(d):
            acc[p] += z[p]


@njit(cache=True, fastmath=False)
def _phases_before(data, clients, x, acc, ft, resid):
    d = x.shape[0]
    z, g = np.empty(d), np.empty(d)
    acc[:] = 0.0
    for j in range(clients.shape[0]):
        c = clients[j]
        _old_load(data, c, ft)
        z[:] = x
        for _ in range(TAU):
            _old_gradient(data, c, z, ft, resid, g)
            for p in range(d):
                z[p] -= STEP * g[p]
        for p in range(d):
            acc[p] += z[p]


def _problem(kind, n_clients):
    rng = np.random.default_rng([n_clients, len(kind)])
    if kind == "quadratic":
        return random_quadratics(rng, n_clients, QUAD_DIM, mu=0.1, L=1.0, heterogeneity=1.0)
    if kind == "ridge":
        return random_ridge(rng, n_clients, SAMPLES, DIM, lam=0.1, heterogeneity=0.5)
    return random_logistic(rng, n_clients, SAMPLES, DIM, lam=0.1, heterogeneity=0.5)


def _cpu_min(fn, repeats, min_block=0.05):
    """Min over repeats of CPU seconds per call (calls per block calibrated once)."""
    calls, start = 1, time.process_time()
    fn()
    one = max(time.process_time() - start, 1e-6)
    calls = max(1, int(min_block / one))
    best = []
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(calls):
            fn()
        best.append((time.process_time() - start) / calls)
    return best


def _flops(kind):
    return 2.0 * QUAD_DIM**2 if kind == "quadratic" else 4.0 * SAMPLES * DIM


def _case(kind, n_clients, p, repeats):
    problem = _problem(kind, n_clients)
    data, d = problem.kernel_data, problem.dim
    rng = np.random.default_rng(1)
    clients = np.flatnonzero(rng.random(n_clients) < p).astype(np.int64)
    x = 0.1 * rng.standard_normal(d)
    accs = [np.empty(d) for _ in range(3)]
    ft, resid = before.scratch_of(problem.features if kind != "quadratic" else
                                  np.empty((1, 1, 1)))
    impls = {"before": lambda: _phases_before(data, clients, x, accs[0], ft, resid),
             "after": lambda: _phases_after(data, clients, x, accs[1], False),
             "after+prefetch": lambda: _phases_after(data, clients, x, accs[2], True)}
    for fn in impls.values():
        fn()
    same = all(np.array_equal(accs[0].view(np.int64), a.view(np.int64)) for a in accs[1:])
    times = {name: [] for name in impls}
    for _ in range(repeats):  # interleaved
        for name, fn in impls.items():
            times[name] += _cpu_min(fn, 1)
    per = {name: min(t) / clients.size for name, t in times.items()}
    gflops = TAU * _flops(kind) / per["after"] / 1e9
    return dict(kind=kind, N=n_clients, p=p, m=int(clients.size), bits_equal=same,
                before_us=per["before"] * 1e6, after_us=per["after"] * 1e6,
                prefetch_us=per["after+prefetch"] * 1e6,
                speedup=per["before"] / per["after"],
                prefetch_gain=per["after"] / per["after+prefetch"], gflops_after=gflops)


@njit(cache=True, fastmath=False)
def _one_client_after(data, x, reps, g):
    scratch = client_scratch(data)
    for _ in range(reps):
        client_gradient(data, 0, x, scratch, g)


@njit(cache=True, fastmath=False)
def _one_client_before(data, x, reps, ft, resid, g):
    for _ in range(reps):
        _old_load(data, 0, ft)
        _old_gradient(data, 0, x, ft, resid, g)


def _l1_case(kind, repeats, reps=20_000):
    problem = _problem(kind, 4)
    data, g, x = problem.kernel_data, np.empty(problem.dim), np.full(problem.dim, 0.1)
    ft, resid = before.scratch_of(problem.features if kind != "quadratic" else
                                  np.empty((1, 1, 1)))
    t_before = min(_cpu_min(lambda: _one_client_before(data, x, reps, ft, resid, g), repeats))
    t_after = min(_cpu_min(lambda: _one_client_after(data, x, reps, g), repeats))
    return dict(kind=kind, before_ns=t_before / reps * 1e9, after_ns=t_after / reps * 1e9,
                speedup=t_before / t_after, gflops_after=_flops(kind) * reps / t_after / 1e9)


def main(argv=None):
    args = parse_args(argv, __doc__.splitlines()[0])
    numba.set_num_threads(1)
    repeats = 5 if args.profile == "quick" else 9
    rows = [_case(kind, n, p, repeats) for n in SIZES[args.profile]
            for kind in ("quadratic", "ridge", "logistic") for p in (1.0, 0.1)]
    l1 = [_l1_case(kind, repeats) for kind in ("quadratic", "ridge", "logistic")]
    text = (f"## Gradient kernels before / after vectorization\n\n{machine_line()}\n\n"
            "Local phases of a FedAvg round (tau = 5), us per participating client, 1 thread, "
            "CPU time, min over interleaved repeats:\n\n"
            + markdown_table(rows, ["kind", "N", "p", "m", "bits_equal", "before_us",
                                    "after_us", "prefetch_us", "speedup", "prefetch_gain",
                                    "gflops_after"])
            + "\nOne gradient, client data in L1 (ns):\n\n"
            + markdown_table(l1, ["kind", "before_ns", "after_ns", "speedup", "gflops_after"]))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{NAME}.md").write_text(text, encoding="utf-8")
    (args.out / f"{NAME}.json").write_text(json.dumps({"rows": rows, "l1": l1}, default=float),
                                           encoding="utf-8")
    print(text)
    return [args.out / f"{NAME}.md"]


if __name__ == "__main__":
    main()
