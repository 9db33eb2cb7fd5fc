"""K-Vib: the water-filling solver against a sort-and-loop baseline, and K-Vib online rounds/s.

1. ``optimal_isp_probabilities(a, k)`` (sort + binary search over breakpoints, vectorised)
   against a straightforward implementation of Lemma 2.2: sort, then a Python loop over l with
   a running sum (stopping at the first l that fails, as the released code does, but with the
   correct assignment). Same inputs, same run; the outputs are compared. The weights are
   lognormal with sigma 2.5, heavy-tailed enough that every size clips some probabilities at
   1 (column ``clipped``; with no clipping the answer is the proportional formula and the
   comparison would not exercise the water-filling).
2. One K-Vib regret run (Algorithm 2 on Assumption-5.1 feedback) with T = 10^4, N = 10^3: the
   numba kernel against the NumPy sampler class (the latter timed on fewer rounds).

Run: ``python -m benchmarks kvib_solver [--profile full] [--out DIR]``.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._common import best_time, parse_args, write
from flbounds.sampling import KVib, optimal_isp_probabilities
from flbounds.sampling.online import Assumption51Feedback, kvib_online, run_online

NAME = "kvib_solver"


def sort_and_loop(a: np.ndarray, k: float) -> np.ndarray:
    """Lemma 2.2 the direct way: sort, Python loop with a running sum, then assign."""
    n = a.size
    order = np.argsort(a)
    s = a[order]
    running, ell, total = 0.0, n, 0.0
    for pos in range(n):
        running += s[pos]
        if k + pos + 1 - n > running / s[pos]:
            ell = pos
            break
        total = running
    p_sorted = np.ones(n)
    p_sorted[:ell] = (k + ell - n) * s[:ell] / total
    p = np.empty(n)
    p[order] = p_sorted
    return p


def solver_rows(sizes, rng):
    rows = []
    for n in sizes:
        a = rng.lognormal(0.0, 2.5, n)
        k = max(1.0, n / 100)
        fast = best_time(lambda a=a, k=k: optimal_isp_probabilities(a, k), repeat=3,
                         min_time=0.1)
        loop = best_time(lambda a=a, k=k: sort_and_loop(a, k), repeat=1, min_time=0.0)
        p = optimal_isp_probabilities(a, k)
        diff = float(np.abs(p - sort_and_loop(a, k)).max())
        rows.append({"N": n, "K": k, "clipped": int(np.sum(p >= 1.0)), "solver_s": fast,
                     "sort_and_loop_s": loop, "speedup": loop / fast, "max_abs_diff": diff})
    return rows


def kvib_rows(rng, n_rounds, n_rounds_class):
    fb = Assumption51Feedback.generate(rng, 1000)
    kvib_online(fb, 200, 10, np.random.default_rng(0), G=fb.G)  # compile / load the cache
    start = time.perf_counter()
    kvib_online(fb, n_rounds, 10, np.random.default_rng(1), G=fb.G)
    fast = time.perf_counter() - start
    start = time.perf_counter()
    run_online(KVib(1000, 10, n_rounds, G=fb.G), fb, n_rounds_class, np.random.default_rng(1))
    slow = time.perf_counter() - start
    return [{"N": 1000, "K": 10, "T": n_rounds, "kernel_rounds_per_s": n_rounds / fast,
             "class_rounds_per_s": n_rounds_class / slow,
             "speedup": (n_rounds / fast) / (n_rounds_class / slow)}]


def main(argv=None):
    args = parse_args(argv, __doc__.splitlines()[0])
    rng = np.random.default_rng(0)
    full = args.profile == "full"
    sizes = [10**3, 10**4, 10**5, 10**6] + ([10**7] if full else [])
    paths = write(args.out, NAME, "K-Vib optimal ISP solver vs sort-and-loop",
                  solver_rows(sizes, rng),
                  ["N", "K", "clipped", "solver_s", "sort_and_loop_s", "speedup",
                   "max_abs_diff"],
                  notes="a ~ LogNormal(0, 2.5), K = max(1, N/100); best of 3 for the solver, "
                        "one call for the loop.")
    paths += write(args.out, "kvib_online", "K-Vib online regret run (Algorithm 2)",
                   kvib_rows(rng, 10**4, 10**4 if full else 1000),
                   ["N", "K", "T", "kernel_rounds_per_s", "class_rounds_per_s", "speedup"],
                   notes="numba kernel vs the NumPy sampler class (class timed on 10^3 rounds "
                         "in the quick profile).")
    return paths


if __name__ == "__main__":
    main()
