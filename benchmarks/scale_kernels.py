"""FedAvg / FOCUS on ridge: compiled rounds (1 and 2 threads) vs a per-client NumPy loop.

Ridge with d = 50, n = 20 samples per client, lam = 0.1, tau = 5 local steps, Bernoulli(p)
participation with p = 0.1 and p = 1.0 (the same plan for both paths), N = 10^2 .. 10^5
clients (quick: to 10^4), steps of :func:`benchmarks.focus_rounds.step_for` (FOCUS 1/(N L)).
Measured side by side in one run:

- rounds/s of ``flbounds.algorithms.fedavg`` / ``focus`` (one compiled call for all rounds,
  participants split over ``numba.set_num_threads(1 | 2)`` threads) and of the per-client
  NumPy loop of ``benchmarks.focus_rounds`` (how the papers' code runs a round); the loop runs
  a prefix of the same plan and its final iterate is compared (max_abs_diff);
- GFLOP/s of the local update (4 n d flops per client gradient, counted over all local steps
  of all participants, timed over the whole compiled call, so the transposes, the server sums
  and the parallel-region launches are included), next to a 2000 x 2000 float64 ``A @ B``
  (numpy's BLAS with 1 and 2 threads, via threadpoolctl) timed in the same run, and the same
  kernel on one client's data kept in L1 (the arithmetic rate without memory traffic), with a
  split of the per-client time (profile note);
- the fitted exponent of seconds per round vs N (least squares in log-log);
- peak memory: tracemalloc peak of the Python/NumPy allocations of one call (trace, scratch
  buffers; the problem data are allocated before and not counted; numba's own per-chunk
  scratch, a few KiB, is invisible to tracemalloc), and the process's max RSS at the end.

Times are best of ``best_time`` batches after a warm-up call (compilation excluded). The
machine's load average is recorded: other processes sharing the cores lower every rate and
the 2-thread gain most.
"""

from __future__ import annotations

import math
import os
import resource
import time

# Threads wait for work passively (a futex), not by spinning: on a machine whose cores are
# shared with other processes a spinning OpenMP thread steals the core its partner needs
# (measured here: 3x slower than 1 thread). Only effective if no OpenMP region ran before.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba
import numpy as np
from numba import njit
from threadpoolctl import threadpool_limits

from benchmarks._common import best_time, parse_args, write
from benchmarks._roofline import peak_mib, two_free_cores
from benchmarks.focus_rounds import (
    DIM,
    LAM,
    SAMPLES,
    TAU,
    checked_against_loop,
    loop_fedavg,
    loop_focus,
    step_for,
)
from flbounds.algorithms import fedavg, focus
from flbounds.kernels.gradients import client_gradient, client_scratch, load_client
from flbounds.problems import random_ridge

NAME = "scale_kernels"
PROFILES = {"quick": (100, 1000, 10000), "full": (100, 1000, 10000, 100000)}
FRACTIONS = (0.1, 1.0)
FLOPS_PER_GRADIENT = 4 * SAMPLES * DIM
BLAS_SIZE = 2000
BUSY = "(busy: 2 free cores not measured)"


def blas_gflops():
    """GFLOP/s of a BLAS_SIZE^2 float64 matrix product with 1 and 2 BLAS threads."""
    a = np.random.default_rng(0).standard_normal((BLAS_SIZE, BLAS_SIZE))
    b = a.copy()
    rates = {}
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            seconds = best_time(lambda: a @ b, repeat=3, min_time=0.3)
        rates[threads] = 2.0 * BLAS_SIZE**3 / seconds / 1e9
    return rates


@njit(cache=True, fastmath=False)
def _in_cache(data, reps, out):
    d = out.shape[0]
    scratch, z = client_scratch(data), np.zeros(d)
    load_client(data, 0, scratch)
    for _ in range(reps):
        client_gradient(data, 0, z, scratch, out)
        for p in range(d):
            z[p] -= 1e-3 * out[p]


@njit(cache=True, fastmath=False)
def _transposes(data, reps):
    scratch = client_scratch(data)
    for _ in range(reps):
        for c in range(min(data.features.shape[0], 8)):
            load_client(data, c, scratch)


def best_cpu_time(fn, repeat=5):
    """Best process CPU time of one call (robust to being descheduled on a shared machine)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


@njit(cache=True, fastmath=False, parallel=True)
def _control(n):
    out = np.zeros(64)
    for i in numba.prange(64):
        acc = 0.0
        for j in range(n):
            acc += math.sin(j * 1e-6 + i)
        out[i] = acc
    return out


def parallel_control():
    """Wall-time speed-up of 2 threads over 1 on an embarrassingly parallel compute loop (no
    memory traffic): the parallelism this machine actually offers during the run."""
    _control(10)
    seconds = {}
    for threads in (1, 2):
        numba.set_num_threads(threads)
        seconds[threads] = best_time(lambda: _control(200_000), repeat=3, min_time=0.2)
    return seconds[1] / seconds[2]


def in_cache_costs(problem):
    """Single thread, data resident in L1/L2: CPU seconds per gradient (one client's data
    reused) and per transpose of a client's features (8 clients cycled)."""
    out, reps, data = np.empty(DIM), 20000, problem.kernel_data
    _in_cache(data, 1, out)
    _transposes(data, 1)
    gradient = best_cpu_time(lambda: _in_cache(data, reps, out)) / reps
    transpose = best_cpu_time(lambda: _transposes(data, reps // 8)) / (reps // 8 * 8)
    return gradient, transpose


def profile_line(rows, gradient, transpose):
    """Split the 1-thread CPU time per participating client at the largest N, p = 1 into the
    in-L1 arithmetic of its tau gradients, its transpose, and the rest (all CPU times), and
    compare it with the smallest N, whose clients' data all sit in L2 (the cost of fetching
    each client's data from memory is the difference)."""
    lines = []
    for name in ("FedAvg", "FOCUS"):
        sel = [r for r in rows if r["p"] > 0.5 and r["algorithm"] == name]
        if not sel:
            continue
        small, r = sel[0], sel[-1]
        per_client = 1e-6 * r["cpu_us_per_client_1t"]
        arith, trans = TAU * gradient, transpose
        lines.append(
            f"- {name}, N = {r['N']}, p = 1, 1 thread: {per_client * 1e6:.2f} us CPU "
            f"per client = {arith / per_client:.0%} gradient arithmetic at the in-L1 rate "
            f"({TAU} x {gradient * 1e9:.0f} ns) + {trans / per_client:.0%} transpose "
            f"({trans * 1e9:.0f} ns) + {1 - (arith + trans) / per_client:.0%} other "
            f"(local-step updates, copies, server sum, loop overhead, memory stalls). "
            f"Memory: at N = {small['N']} (all data in L2) a client costs "
            f"{small['cpu_us_per_client_1t']:.2f} us, i.e. fetching a client's "
            f"{SAMPLES * DIM * 8 // 1024} KiB from DRAM adds "
            f"{r['cpu_us_per_client_1t'] / small['cpu_us_per_client_1t'] - 1:+.0%}. "
            f"The NumPy loop spends {1e6 / (r['loop_rounds_s'] * r['N'] * r['p']):.1f} us "
            f"per client.")
    return "\n".join(lines)


def bench_case(name, algo, loop, problem, plan):
    n_rounds, n_clients = plan.shape
    flops = float(plan.sum()) * TAU * FLOPS_PER_GRADIENT
    row = {"algorithm": name, "N": n_clients, "p": float(np.mean(plan))}
    step = step_for(name, problem)

    def run():
        return algo(problem, plan, step=step, local_steps=TAU)

    slow_rounds = max(1, min(n_rounds, int(round(2e3 / max(plan[0].sum(), 1)))))
    prefix = plan[:slow_rounds]
    row["max_abs_diff"] = checked_against_loop(algo, loop, problem, plan, step, slow_rounds,
                                               f"{name} N={n_clients} p={row['p']:.2g}")
    for threads in (1, 2):
        if threads == 2 and not two_free_cores()[0]:
            for key in ("rounds_s_2t", "gflops_2t", "cpu_per_wall_2t"):
                row[key] = BUSY
            continue
        numba.set_num_threads(threads)
        run()
        seconds = best_time(run, repeat=3, min_time=0.3)
        row[f"rounds_s_{threads}t"] = n_rounds / seconds
        row[f"gflops_{threads}t"] = flops / seconds / 1e9
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        cpu = time.process_time() - cpu
        row[f"cpu_per_wall_{threads}t"] = cpu / (time.perf_counter() - wall)
        if threads == 1:
            row["cpu_us_per_client_1t"] = 1e6 * cpu / max(float(plan.sum()), 1.0)
    row["peak_MiB"] = peak_mib(run)
    slow = best_time(lambda: loop(problem, prefix, np.zeros(DIM), step), repeat=3,
                     min_time=0.3)
    row["loop_rounds_s"] = slow_rounds / slow
    row["speedup_1t"] = row["rounds_s_1t"] / row["loop_rounds_s"]
    row["speedup_2t"] = (BUSY if row["rounds_s_2t"] == BUSY
                         else row["rounds_s_2t"] / row["loop_rounds_s"])
    return row


def _num(value):
    return value if isinstance(value, str) else f"{value:.3f}"


def exponents(rows):
    """Slope of log(seconds per round) vs log N per (algorithm, p, threads)."""
    fits = []
    for name in ("FedAvg", "FOCUS"):
        for p in FRACTIONS:
            sel = [r for r in rows if r["algorithm"] == name and abs(r["p"] - p) < 0.05]
            if len(sel) < 2:
                continue
            n = np.log([r["N"] for r in sel])
            fit = {"algorithm": name, "p": p}
            for threads in (1, 2):
                rates = [r[f"rounds_s_{threads}t"] for r in sel]
                if any(isinstance(v, str) for v in rates):
                    fit[f"exponent_{threads}t"] = BUSY
                    continue
                sec = np.log([1.0 / v for v in rates])
                fit[f"exponent_{threads}t"] = float(np.polyfit(n, sec, 1)[0])
            fits.append(fit)
    return fits


def main(argv=None):
    args = parse_args(argv, __doc__.splitlines()[0])
    rng = np.random.default_rng(0)
    before = numba.get_num_threads()
    load = os.getloadavg()
    blas = blas_gflops()
    control = [parallel_control()]
    rows, in_cache = [], None
    try:
        for n_clients in PROFILES[args.profile]:
            problem = random_ridge(rng, n_clients, SAMPLES, DIM, lam=LAM, heterogeneity=0.5)
            if in_cache is None:
                in_cache = in_cache_costs(problem)
            for p in FRACTIONS:
                n_rounds = max(2, int(2e4 / (n_clients * p)))
                plan = rng.random((n_rounds, n_clients)) < p
                for name, algo, loop in (("FedAvg", fedavg, loop_fedavg),
                                         ("FOCUS", focus, loop_focus)):
                    row = bench_case(name, algo, loop, problem, plan)
                    row["blas_fraction_1t"] = row["gflops_1t"] / blas[1]
                    row["blas_fraction_2t"] = (BUSY if row["gflops_2t"] == BUSY
                                               else row["gflops_2t"] / blas[2])
                    rows.append(row)
                    print(", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                    for k, v in row.items()))
            del problem
    finally:
        numba.set_num_threads(before)
    control.append(parallel_control())
    numba.set_num_threads(before)
    load_end = os.getloadavg()
    fits = exponents(rows)
    for fit in fits:
        print(fit)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    fit_lines = "\n".join(
        f"- {f['algorithm']}, p = {f['p']}: exponent {f['exponent_1t']:.3f} (1 thread), "
        f"{_num(f['exponent_2t'])} (2 threads)" for f in fits)
    notes = (
        f"BLAS reference: {blas[2]:.2f} GFLOP/s ({BLAS_SIZE}x{BLAS_SIZE} float64 A @ B, 2 BLAS "
        f"threads). Gradient kernel with one client's data in L1 (1 thread, CPU time): "
        f"{FLOPS_PER_GRADIENT / in_cache[0] / 1e9:.2f} GFLOP/s. blas_fraction_kt = "
        f"gflops_kt / BLAS with k threads ({blas[1]:.2f} GFLOP/s with 1 thread). Load "
        f"average (1/5/15 min) at start {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}, at end "
        f"{load_end[0]:.2f}/{load_end[1]:.2f}/{load_end[2]:.2f} on "
        f"{os.cpu_count()} cores. Process max RSS: {rss:.0f} MiB. Numba threading layer: "
        f"{numba.threading_layer()}, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}. "
        "cpu_per_wall_2t: process CPU seconds per wall second of one 2-thread call (2.0 = "
        "both cores busy for us; about 1.0 = the second core was taken by other processes)."
        f" Control: 2-thread speed-up of an embarrassingly parallel sin loop (no memory "
        f"traffic) = {control[0]:.2f} at start, {control[1]:.2f} at end (2.0 = two free "
        "cores).\n\n"
        f"Seconds per round vs N (fitted exponent, target 1.0 +- 0.1):\n{fit_lines}\n\n"
        f"Profile:\n{profile_line(rows, *in_cache)}\n\n"
        "peak_MiB: tracemalloc peak of one compiled call (outputs and scratch; the problem "
        "data are not counted). gflops: 4 n d flops per gradient over the whole call.")
    return write(args.out, NAME, "Ridge FedAvg/FOCUS kernel: rounds/s (1, 2 threads) vs "
                 "per-client NumPy loop, GFLOP/s vs BLAS", rows,
                 ["algorithm", "N", "p", "rounds_s_1t", "rounds_s_2t", "loop_rounds_s",
                  "speedup_1t", "speedup_2t", "gflops_1t", "gflops_2t", "blas_fraction_1t",
                  "blas_fraction_2t", "cpu_per_wall_2t",
                  "peak_MiB", "max_abs_diff"], notes=notes)


if __name__ == "__main__":
    main()
