"""Lazy vs naive greedy on phantom facility location (DivFL's G, [004]), n = 10^2 .. 10^4.

Run as ``python benchmarks/subtrunc_lazy_greedy.py [--out DIR] [--sizes ...] [--k K]``.
Measures, in the same run and on the same matrix: naive greedy (Python loop over steps,
one numba call scoring all remaining candidates per step), lazy greedy (max-heap of stale
upper bounds, one numba call per re-evaluation) and the all-numba naive kernel. Reports wall
times, marginal-gain evaluations, evaluation rates (evaluations/s, each O(n)) and speed-up
ratios; checks that all three select the same set. Writes Markdown + JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from flbounds.kernels.submodular_gains import naive_fl_greedy
from flbounds.selection import gradient_distances
from flbounds.setfunctions import FacilityLocation, greedy_trace, lazy_greedy_trace

DEFAULT_OUT = Path("flbounds-results") / "benchmarks"


def _timed(func, repeats):
    best, out = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - start)
    return best, out


def bench(n: int, k: int, rng: np.random.Generator) -> dict:
    points = rng.normal(size=(n, 10)) * rng.uniform(0.2, 2.0, size=(n, 1))
    f = FacilityLocation(gradient_distances(points))
    repeats = 3 if n <= 3000 else 1
    t_naive, naive = _timed(lambda: greedy_trace(f, k), repeats)
    t_lazy, lazy = _timed(lambda: lazy_greedy_trace(f, k), repeats)
    sel, gains = np.empty(k, dtype=np.int64), np.empty(k)
    t_kernel, _ = _timed(lambda: naive_fl_greedy(f.dissim_t, f.row_offsets, k, sel, gains),
                         repeats)
    same = naive.selected == lazy.selected == sel.tolist()
    return dict(n=n, k=k, naive_s=t_naive, lazy_s=t_lazy, numba_naive_s=t_kernel,
                naive_evals=naive.n_evaluations, lazy_evals=lazy.n_evaluations,
                naive_rate=naive.n_evaluations / t_naive, lazy_rate=lazy.n_evaluations / t_lazy,
                speedup_lazy_vs_naive=t_naive / t_lazy,
                speedup_lazy_vs_numba_naive=t_kernel / t_lazy, same_selection=bool(same))


def to_markdown(rows: list[dict]) -> str:
    head = ("| n | k | naive [s] | lazy [s] | all-numba naive [s] | naive evals | lazy evals | "
            "naive evals/s | lazy evals/s | naive/lazy | numba-naive/lazy | same set |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    body = "".join(
        f"| {r['n']} | {r['k']} | {r['naive_s']:.4f} | {r['lazy_s']:.4f} | "
        f"{r['numba_naive_s']:.4f} | {r['naive_evals']} | {r['lazy_evals']} | "
        f"{r['naive_rate']:.3g} | {r['lazy_rate']:.3g} | {r['speedup_lazy_vs_naive']:.1f} | "
        f"{r['speedup_lazy_vs_numba_naive']:.1f} | {r['same_selection']} |\n" for r in rows)
    return "# Lazy vs naive greedy, phantom facility location\n\n" + head + body


def main(argv=None) -> list[Path]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000, 3000, 10000])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    bench(50, 3, rng)  # compile the kernels outside the timings
    rows = [bench(n, args.k, rng) for n in args.sizes]
    args.out.mkdir(parents=True, exist_ok=True)
    md, js = args.out / "subtrunc_lazy_greedy.md", args.out / "subtrunc_lazy_greedy.json"
    md.write_text(to_markdown(rows))
    js.write_text(json.dumps({"rows": rows, "python": platform.python_version(),
                              "numpy": np.__version__}, indent=1))
    print(to_markdown(rows))
    return [md, js]


if __name__ == "__main__":
    main()
