"""Scale-out by simulation: the makespan of a recorded ledger on W = 1 .. 256 workers.

Input: the JSON of :mod:`benchmarks.task_times` (each task's recorded wall seconds, and its
cells' when the claim is split into cells). A task split into cells contributes its cells,
each schedulable alone; ``--whole`` keeps every claim one task (the ledger before cells).
Two policies, both list scheduling (a free worker takes the next task at once, tasks never
wait for one another):

- ``longest-first``: the runner's order (:func:`flbounds.ledger.engine.runner.longest_first`):
  longest recorded duration first. With the recorded durations as the prediction this is
  Graham's LPT rule, within 4/3 of the optimum.
- ``dask``: a Dask-like scheduler: tasks in submission order (the order of the claims as
  the store lists them), each to the first worker that is free (work stealing idealised:
  an idle worker never waits while a task is queued anywhere).

Every policy is bounded below by ``max(total / W, longest task)``: no run of these tasks
on W workers ends sooner, so the longest task caps the speed-up at ``total / longest``.
``--clock cpu`` schedules each task's recorded CPU seconds instead of its wall seconds: on a
loaded machine wall time is inflated by the other jobs, CPU time much less, so a record
taken under load models a quiet machine better by its CPU time. ``--overhead`` adds seconds
per task (scheduling and transfer). Written: the curve for every W as JSON
(``scale_sim_<profile>[_whole].json`` in ``--out``; the docs' performance page renders it)
and the powers of two as a table on the terminal. This is a model of the schedule, not a
measurement: the durations are those of the recorded run (a loaded machine inflates wall
times alike), and start-up, compilation and result storage are not modelled.
"""

from __future__ import annotations

import argparse
import heapq
import json
import sys
from pathlib import Path

from benchmarks._common import out_folder, prog

NAME = "scale_sim"
POLICIES = ("longest-first", "dask")
OUT = Path("benchmarks") / "results"


def makespan(durations, workers: int, *, order: str = "longest-first",
             overhead: float = 0.0) -> float:
    """The time the last of ``durations`` ends when ``workers`` workers take them in
    ``order`` (``longest-first`` or ``dask``: as given), each the moment it is free.

    ``ValueError`` naming the argument for a negative or non-finite duration, a worker count
    below 1, an unknown order or a negative overhead."""
    tasks = [float(d) for d in durations]
    if any(not (d >= 0.0) or d == float("inf") for d in tasks):
        raise ValueError("durations must be finite numbers >= 0")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if order not in POLICIES:
        raise ValueError(f"order must be one of {POLICIES}, got {order!r}")
    if not (overhead >= 0.0) or overhead == float("inf"):
        raise ValueError(f"overhead must be a finite number >= 0, got {overhead!r}")
    if order == "longest-first":
        tasks.sort(reverse=True)
    free = [0.0] * min(workers, max(len(tasks), 1))     # when each worker is next free
    for d in tasks:
        heapq.heapreplace(free, free[0] + d + overhead)
    return max(free)


def lower_bound(durations, workers: int) -> float:
    """``max(total / workers, longest)``: no schedule of ``durations`` ends sooner."""
    tasks = [float(d) for d in durations]
    return max(sum(tasks) / workers, max(tasks, default=0.0))


CLOCKS = ("wall", "cpu")


def units(report: dict, *, whole: bool = False, clock: str = "wall") -> list[tuple[str, float]]:
    """The schedulable units of a :mod:`benchmarks.task_times` report, in the store's claim
    order: a claim's cells when it has recorded cells (unless ``whole``), else the task; each
    with its recorded ``wall`` seconds, or its ``cpu`` seconds (the thread's CPU time, which a
    loaded machine inflates far less than wall time; ``ValueError`` naming ``clock`` when a
    row lacks it)."""
    if clock not in CLOCKS:
        raise ValueError(f"clock must be one of {CLOCKS}, got {clock!r}")
    tasks = sorted(report["tasks"], key=lambda t: t["id"])     # the registry's order
    out = []
    for t in tasks:
        if t[f"cell_{clock}_s"] and not whole:
            out += [(f"{t['id']}#{i}", float(d)) for i, d in enumerate(t[f"cell_{clock}_s"])]
        else:
            out.append((t["id"], float(t[f"{clock}_s"])))
    if clock == "cpu" and report.get("cpu_recorded", 0) < len(tasks):
        raise ValueError("clock: 'cpu' needs every task's CPU time; this report has rows "
                         "stored before CPU time was recorded (use 'wall')")
    return out


def curve(durations: list[float], workers: range, overhead: float = 0.0) -> list[dict]:
    """Makespan and speed-up (makespan on 1 worker / on W) per policy, and the bound."""
    serial = sum(durations) + overhead * len(durations)
    rows = []
    for w in workers:
        row = {"workers": w, "lower_bound_s": lower_bound(durations, w)}
        for policy in POLICIES:
            m = makespan(durations, w, order=policy, overhead=overhead)
            row[f"{policy}_s"] = m
            row[f"{policy}_speedup"] = serial / m if m > 0 else 1.0
        row["max_speedup"] = serial / row["lower_bound_s"] if row["lower_bound_s"] else 1.0
        rows.append(row)
    return rows


def table(result: dict) -> str:
    lines = [f"{result['title']}: {result['units']} units, total {result['total_s']:.1f} s, "
             f"longest {result['longest_s']:.1f} s ({result['longest_id']})",
             f"{'W':>4} {'longest-first s':>16} {'speed-up':>9} {'dask s':>10} "
             f"{'speed-up':>9} {'bound s':>9} {'max x':>7}"]
    for row in result["curve"]:
        if row["workers"] & (row["workers"] - 1) == 0:        # powers of two
            lines.append(f"{row['workers']:4d} {row['longest-first_s']:16.1f} "
                         f"{row['longest-first_speedup']:9.2f} {row['dask_s']:10.1f} "
                         f"{row['dask_speedup']:9.2f} {row['lower_bound_s']:9.1f} "
                         f"{row['max_speedup']:7.2f}")
    return "\n".join(lines)


def simulate(report: dict, *, whole: bool = False, max_workers: int = 256,
             overhead: float = 0.0, clock: str = "wall") -> dict:
    named = units(report, whole=whole, clock=clock)
    if not named:
        raise ValueError("report: no tasks")
    durations = [d for _, d in named]
    longest = max(named, key=lambda u: u[1])
    return {"title": f"Simulated makespan of the {report['profile']} ledger"
                     + (" (one task per claim)" if whole else ""),
            "source": {k: report.get(k) for k in ("host", "date", "profile", "workers",
                                                   "commits", "store")},
            "whole": whole, "clock": clock, "overhead_s": overhead, "units": len(named),
            "total_s": sum(durations), "longest_s": longest[1], "longest_id": longest[0],
            "curve": curve(durations, range(1, max_workers + 1), overhead)}


def main(argv=None) -> Path:
    parser = argparse.ArgumentParser(prog=prog(), description=__doc__.splitlines()[0])
    parser.add_argument("times", type=Path, help="JSON written by benchmarks.task_times")
    parser.add_argument("--whole", action="store_true",
                        help="one task per claim even where cells are recorded")
    parser.add_argument("--overhead", type=float, default=0.0,
                        help="seconds added to every task (default 0)")
    parser.add_argument("--max-workers", type=int, default=256)
    parser.add_argument("--clock", choices=CLOCKS, default="wall",
                        help="the recorded durations to schedule: wall seconds (default) or "
                             "CPU seconds (for a record taken on a loaded machine)")
    parser.add_argument("--out", type=out_folder, default=str(OUT))
    args = parser.parse_args(argv)
    if not args.times.is_file():
        parser.error(f"argument times: no such file: {args.times}")
    if args.max_workers < 1:
        parser.error(f"argument --max-workers: must be >= 1, got {args.max_workers}")
    if not (args.overhead >= 0):
        parser.error(f"argument --overhead: must be >= 0, got {args.overhead}")
    try:
        report = json.loads(args.times.read_text(encoding="utf-8"))
        result = simulate(report, whole=args.whole, max_workers=args.max_workers,
                          overhead=args.overhead, clock=args.clock)
    except (ValueError, KeyError, TypeError) as exc:
        parser.error(f"argument times: not a task_times report ({exc})")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{NAME}_{report['profile']}{'_whole' if args.whole else ''}.json"
    path.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(table(result))
    print(f"written: {path}", file=sys.stderr)
    return path


if __name__ == "__main__":
    main()
