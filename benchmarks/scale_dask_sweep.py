"""A sweep of claim tasks on a Dask LocalCluster with 1 and with 2 workers.

Tasks are ``(claim, "quick", seed)`` for the selected claims crossed with enough seeds to make
at least ``--tasks`` tasks (default: 200, ``--profile full`` 400; the claims always run at
their quick parameters). Both runs must give identical rows (measured values, verdicts) and
no task may end in "error"; the speed-up is the ratio of their wall times. Before either is
timed, every selected claim runs once in this process, so the numba kernels the sweep uses
are compiled and cached (else the first sweep would pay for the compilation).
"""

from __future__ import annotations

import argparse
import json
import time

from benchmarks._common import DEFAULT_OUT, OUT_HELP, out_folder, prog, write
from flbounds.cli._common import positive_int
from flbounds.ledger import select
from flbounds.ledger.engine.runner import run_tasks

NAME = "scale_dask_sweep"


def sweep(tasks, n_workers: int) -> tuple[float, dict]:
    from distributed import Client, LocalCluster

    rows = {}
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.run(lambda: __import__("verify") and None)  # warm imports before timing
        start = time.perf_counter()
        run_tasks(tasks, scheduler=client,
                  on_result=lambda row: rows.__setitem__((row["id"], row["seed"]), row))
        elapsed = time.perf_counter() - start
    return elapsed, rows


def fingerprint(rows: dict) -> dict:
    return {k: json.dumps([r["measured"], r["verdict"]]) for k, r in rows.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(prog=prog(), description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=out_folder, default=str(DEFAULT_OUT), help=OUT_HELP)
    parser.add_argument("--profile", choices=("quick", "full"), default="quick",
                        help="quick: 200 tasks; full: 400 (claims at quick parameters)")
    parser.add_argument("--pattern", nargs="*", default=["focus", "safari"],
                        help="claims to sweep (default: the focus and safari claims)")
    parser.add_argument("--tasks", type=positive_int,
                        help="at least this many tasks (default: the profile's)")
    args = parser.parse_args(argv)
    try:
        claims = select(args.pattern)
    except ValueError as exc:
        parser.error(f"--pattern: {exc}")
    n_tasks = args.tasks or (400 if args.profile == "full" else 200)
    n_seeds = -(-n_tasks // len(claims))
    tasks = [(c.id, "quick", seed) for seed in range(n_seeds) for c in claims]
    run_tasks([(c.id, "quick", 0) for c in claims], on_result=lambda row: None)  # warm
    t1, rows1 = sweep(tasks, 1)
    t2, rows2 = sweep(tasks, 2)
    identical = fingerprint(rows1) == fingerprint(rows2)
    errors = [sum(r["verdict"] == "error" for r in got.values()) for got in (rows1, rows2)]
    if any(errors):
        raise AssertionError(f"tasks ended in error ({errors[0]} with 1 worker, {errors[1]} "
                             "with 2): the sweep measures nothing")
    rows = [{"workers": 1, "tasks": len(tasks), "wall_s": t1, "speedup": 1.0,
             "identical": identical, "errors": errors[0]},
            {"workers": 2, "tasks": len(tasks), "wall_s": t2, "speedup": t1 / t2,
             "identical": identical, "errors": errors[1]}]
    return write(args.out, NAME, "Claim sweep on a Dask LocalCluster", rows,
                 ["workers", "tasks", "wall_s", "speedup", "identical", "errors"],
                 notes=f"{len(claims)} claims x {n_seeds} seeds, quick parameters, "
                       "kernels compiled before timing; identical = same measured values and "
                       "verdicts for every task; errors = tasks whose verdict is 'error'.")


if __name__ == "__main__":
    main()
