"""The machine's roofline measured in the run, the free-core check, and calibrated timing.

Roofline
    ``dgemm``: GFLOP/s of a float64 ``A @ B`` of size :data:`DGEMM_SIZE` (three 2 MiB
    matrices: the size of a round's working set of client blocks, so the rate is the one a
    cache-resident kernel could reach), with 1 and 2 BLAS threads.
    ``read``: GB/s of a STREAM-like read, the sum of a :data:`STREAM_BYTES` float64 array
    (larger than any L3), with 1 and 2 threads (``np.sum`` of one half per thread; best of
    3 passes).
    The roofline of a round is ``min(dgemm, AI * read)`` (:func:`roofline`), its arithmetic
    intensity ``AI`` from :func:`intensity`. On one thread both rates are also measured in
    process CPU time, the roofline of an implementation's CPU-time rate: on a machine shared
    with other processes, wall-time rates measure the other processes too.

Arithmetic intensity (per participating client and round; d the dimension, n the samples
per client, tau the local steps; client data read once per round at best)
    quadratic  flop = tau * 2 d^2,         bytes = 8 (d^2 + d)   (A_i z - b_i)
    ridge      flop = tau * 4 n d,         bytes = 8 (n d + n)   (X_i z, X_i' r)
    logistic   flop = tau * 4 n d,         bytes = 8 (n d + n)   (same two products; the n
               sigmoids and the O(d) vector updates are not counted)
The AI does not depend on N or p; the flop rate reached is this flop count times the
participants per round times rounds/s.

Free cores
    :func:`two_free_cores` runs a compute-only loop (no memory traffic) on 1 and on 2 threads
    right before a 2-thread measurement; two cores are free when 2 threads run it at least
    :data:`FREE_SPEEDUP` times faster than one, in one of up to :data:`FREE_ATTEMPTS`
    measurements (one alone lost cells to a moment's noise: in a run whose checks at its start
    and end read 1.93 and 1.95, half the 2-thread cells were marked busy).

Timing
    :func:`timed` auto-calibrates the calls per block so that a block lasts at least
    ``min_block`` seconds (perf_counter resolution and per-call overhead are then below 0.1%
    of a block: the +-5% left is the machine's noise, reported as the repeats' spread).
    :func:`timed_cpu` also returns the process CPU time of the block: on a shared machine
    the CPU-time rate is what the implementation costs when it holds a core, and wall / CPU
    shows how long it waited (for the core, or for its own threads).
"""

from __future__ import annotations

import math
import os
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit
from threadpoolctl import threadpool_limits

DGEMM_SIZE = 512
STREAM_BYTES = 256 * 2**20
FREE_SPEEDUP = 1.8
FREE_ATTEMPTS = 3


def flops_bytes(kind: str, dim: int, samples: int, tau: int) -> tuple[float, float]:
    """Flop and bytes of client data per participating client and round."""
    if kind == "quadratic":
        return float(tau * 2 * dim * dim), 8.0 * (dim * dim + dim)
    return float(tau * 4 * samples * dim), 8.0 * (samples * dim + samples)


def intensity(kind: str, dim: int, samples: int, tau: int) -> float:
    """Arithmetic intensity (flop per byte of client data) of a round."""
    flop, nbytes = flops_bytes(kind, dim, samples, tau)
    return flop / nbytes


def roofline(ai: float, gflops: float, read_gbs: float) -> float:
    """Attainable GFLOP/s: ``min(gflops, ai * read_gbs)``."""
    return min(gflops, ai * read_gbs)


def best_block(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def calibrate(fn, min_block: float) -> int:
    """Calls per block so that a block lasts at least ``min_block`` seconds."""
    one = best_block(fn, 1)
    return max(1, math.ceil(min_block / max(one, 1e-9)))


def timed(fn, calls: int) -> float:
    """Seconds per call over one block of ``calls`` calls."""
    return best_block(fn, calls)


def timed_cpu(fn, calls: int) -> tuple[float, float]:
    """(wall, process CPU) seconds per call over one block of ``calls`` calls. CPU time
    counts every thread of the process and not the time other processes held the core."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - wall) / calls, (time.process_time() - cpu) / calls


def dgemm_gflops(threads: int, min_block: float = 0.1, repeat: int = 3) -> tuple[float, float]:
    """(wall, CPU-time) GFLOP/s of a :data:`DGEMM_SIZE` float64 ``A @ B``, best of
    ``repeat`` blocks each."""
    a = np.random.default_rng(0).standard_normal((DGEMM_SIZE, DGEMM_SIZE))
    b = a.T.copy()
    with threadpool_limits(limits=threads, user_api="blas"):
        calls = calibrate(lambda: a @ b, min_block)
        blocks = [timed_cpu(lambda: a @ b, calls) for _ in range(repeat)]
    flop = 2.0 * DGEMM_SIZE**3 / 1e9
    return flop / min(w for w, _ in blocks), flop / max(min(c for _, c in blocks), 1e-9)


def _threaded_sum(parts, pool):
    """Sum of the arrays ``parts``, one ``np.sum`` per worker (NumPy releases the GIL in
    the reduction loop, so the workers run in parallel)."""
    return sum(pool.map(np.sum, parts))


def read_gbs(threads: int, repeat: int = 3) -> tuple[float, float]:
    """(wall, CPU-time) GB/s of summing a :data:`STREAM_BYTES` array with ``threads``
    threads (the CPU time of all threads, so the CPU-time rate is per core)."""
    x = np.ones(STREAM_BYTES // 8)
    parts = np.array_split(x, threads)
    with ThreadPoolExecutor(threads) as pool:
        _threaded_sum([p[:16] for p in parts], pool)
        blocks = [timed_cpu(lambda: _threaded_sum(parts, pool), 1) for _ in range(repeat)]
    return (x.nbytes / min(w for w, _ in blocks) / 1e9,
            x.nbytes / max(min(c for _, c in blocks), 1e-9) / 1e9)


@njit(cache=True, parallel=True)
def _spin(n):
    out = np.zeros(16)
    for i in numba.prange(16):
        acc = 0.0
        for j in range(n):
            acc += math.sin(j * 1e-6 + i)
        out[i] = acc
    return out


def parallel_speedup(work: int = 60_000) -> float:
    """Wall-time speed-up of 2 threads over 1 on a compute-only loop (best of 3 each)."""
    before = numba.get_num_threads()
    _spin(10)
    seconds = {}
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            seconds[threads] = min(timed(lambda: _spin(work), 1) for _ in range(3))
    finally:
        numba.set_num_threads(before)
    return seconds[1] / seconds[2]


def two_free_cores(attempts: int = FREE_ATTEMPTS) -> tuple[bool, float, float]:
    """(free, best measured 2-thread speed-up, 1-minute load average) at this moment: free as
    soon as one of up to ``attempts`` measurements reaches :data:`FREE_SPEEDUP`."""
    if (os.cpu_count() or 1) < 2 or numba.config.NUMBA_NUM_THREADS < 2:
        return False, 0.0, os.getloadavg()[0]
    best = 0.0
    for _ in range(attempts):
        best = max(best, parallel_speedup())
        if best >= FREE_SPEEDUP:
            break
    return best >= FREE_SPEEDUP, best, os.getloadavg()[0]


def peak_mib(fn) -> float:
    """tracemalloc peak (MiB) of the Python/NumPy allocations of one call of ``fn``."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def measure_machine(light: bool = False) -> dict:
    """The roofline inputs (dgemm and read rates on 1 and 2 threads; the 2-thread ones only
    when two free cores were measured just before) and the free-core check; ``light``: the
    check and the load average only."""
    free, speedup, load = two_free_cores()
    out = {"free": free, "free_speedup": speedup, "load1": load}
    if light:
        return out
    (out["dgemm_1t"], out["dgemm_1t_cpu"]), (out["read_1t"], out["read_1t_cpu"]) = (
        dgemm_gflops(1), read_gbs(1))
    free, speedup, load = two_free_cores()
    if free:
        out.update(dgemm_2t=dgemm_gflops(2)[0], read_2t=read_gbs(2)[0])
    out.update(free_2t=free, free_speedup_2t=speedup)
    return out
