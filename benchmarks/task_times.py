"""Where the ledger's time goes: each claim's and attack's wall and CPU seconds, from a store.

Reads a results store (``flbounds-results/results.sqlite`` by default, or ``--results DIR``)
and keeps, for one profile, the last stored row of every task (a claim, or an attack
``attack:<claim id>``), and the last stored row of every cell of a claim split into cells
(:mod:`flbounds.ledger.api.registry`). Nothing is run. Written: a table sorted by wall time,
longest first, with each task's share of the summed task time and the running share, on
the terminal and as JSON (``task_times_<profile>.json`` in ``--out``, default
``benchmarks/results``) with the host, the date, the source commit(s) of the rows, the
profile, and the workers of the run (the most tasks that ran at once, from the rows' start
and end times, a split claim's cells counted one by one: a run's ``--workers`` is not
stored). That JSON is the input of
:mod:`benchmarks.scale_sim` (the makespan on 1 .. 256 workers).

The wall time of a task is its own duration (``elapsed_s``); its CPU time (``cpu_s``) is the
CPU seconds of the thread that ran it, 0 in rows stored before the store recorded it
(``cpu recorded`` in the output says how many rows have it). On a loaded machine wall > CPU.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from benchmarks._common import machine_line, out_folder, prog
from flbounds.ledger.engine.store import DB_FILE, ResultStore
from flbounds.ledger.engine.tasks import source_commit

NAME = "task_times"
RESULTS = Path("flbounds-results")
OUT = Path("benchmarks") / "results"


def collect(store: ResultStore, profile: str) -> dict:
    """The last row of every task and every cell of ``profile`` in ``store``, as a report
    (see the module docstring); ``ValueError`` naming ``profile`` when it has no rows."""
    last = {}
    for record in store.records():
        r = record.result
        if r.profile == profile:
            last[r.id] = record
    if not last:
        raise ValueError(f"profile: no rows of profile {profile!r} in {store.path}")
    cells: dict[tuple[str, int], dict] = {}
    for row in store.cell_records():
        if row.get("profile") == profile:
            cells[(row["id"], int(row["index"]))] = row
    tasks, spans = [], []
    for task_id, record in last.items():
        r = record.result
        own = sorted((c for (cid, _), c in cells.items() if cid == task_id),
                     key=lambda c: c["index"])
        tasks.append({"id": task_id, "task": "attack" if task_id.startswith("attack:")
                      else "claim", "wall_s": float(r.elapsed_s), "cpu_s": float(r.cpu_s),
                      "verdict": r.verdict, "cells": len(own),
                      "cell_wall_s": [float(c["elapsed_s"]) for c in own],
                      "cell_cpu_s": [float(c.get("cpu_s", 0.0)) for c in own],
                      "started": r.started, "finished": r.finished,
                      "commit": r.git_commit})
        # what ran when: a split claim's cells (its row spans the whole grid), else the task
        for t in own or [{"started": r.started, "finished": r.finished}]:
            spans.append((_epoch(t.get("started", "")), _epoch(t.get("finished", ""))))
    tasks.sort(key=lambda t: -t["wall_s"])
    total_wall = sum(t["wall_s"] for t in tasks)
    total_cpu = sum(t["cpu_s"] for t in tasks)
    running = 0.0
    for t in tasks:
        running += t["wall_s"]
        t["share"] = t["wall_s"] / total_wall if total_wall > 0 else 0.0
        t["cpu_share"] = t["cpu_s"] / total_cpu if total_cpu > 0 else 0.0
        t["cumulative_share"] = running / total_wall if total_wall > 0 else 0.0
    commits = Counter(t.pop("commit") or "unknown" for t in tasks)
    spans = [(a, b) for a, b in spans if a is not None and b is not None]
    return {
        "title": f"Task times of the {profile} ledger",
        "machine": machine_line(), "host": socket.gethostname(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "store": str(store.path), "profile": profile,
        "commits": dict(commits.most_common()), "source_commit": source_commit() or "",
        "workers": max_overlap(spans),
        "tasks_count": len(tasks), "claims": sum(t["task"] == "claim" for t in tasks),
        "attacks": sum(t["task"] == "attack" for t in tasks),
        "cpu_recorded": sum(t["cpu_s"] > 0 for t in tasks),
        "task_wall_s": total_wall, "task_cpu_s": total_cpu,
        "span_s": (max(b for _, b in spans) - min(a for a, _ in spans)) if spans else None,
        "tasks": tasks,
    }


def max_overlap(spans: list[tuple[float, float]]) -> int:
    """The most intervals ``(start, end)`` that overlap at one moment (0 for none); an
    interval ending when another starts does not overlap it."""
    events = sorted([(b, -1) for _, b in spans] + [(a, 1) for a, _ in spans])
    best = now = 0
    for _, step in events:
        now += step
        best = max(best, now)
    return best


def _epoch(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text).timestamp() if text else None
    except ValueError:
        return None


def table(report: dict, top: int) -> str:
    """The terminal table: the ``top`` longest tasks and the totals."""
    lines = [f"{report['title']}: {report['tasks_count']} tasks ({report['claims']} claims, "
             f"{report['attacks']} attacks) from {report['store']}",
             f"host {report['host']}, workers {report['workers']} (most tasks at once), "
             f"commit(s) {', '.join(report['commits'])}",
             f"{'task':<52} {'wall s':>9} {'share':>6} {'cum.':>6} {'CPU s':>9} {'cells':>5}"]
    for t in report["tasks"][:top]:
        lines.append(f"{t['id'][:52]:<52} {t['wall_s']:9.2f} {t['share']:6.1%} "
                     f"{t['cumulative_share']:6.1%} {t['cpu_s']:9.2f} {t['cells'] or '':>5}")
    if len(report["tasks"]) > top:
        rest = report["tasks"][top:]
        lines.append(f"{f'... {len(rest)} more':<52} {sum(t['wall_s'] for t in rest):9.2f} "
                     f"{sum(t['share'] for t in rest):6.1%}")
    span = report["span_s"]
    lines.append(f"{'total':<52} {report['task_wall_s']:9.2f} {1:6.0%} {'':6} "
                 f"{report['task_cpu_s']:9.2f}")
    lines.append(f"first start to last end: {span:.1f} s" if span is not None else
                 "first start to last end: not recorded")
    return "\n".join(lines)


def _results_dir(text: str) -> Path:
    path = Path(text)
    if not (path / DB_FILE).is_file():
        raise argparse.ArgumentTypeError(f"no results store {str(path / DB_FILE)!r}")
    return path


def main(argv=None) -> Path:
    parser = argparse.ArgumentParser(prog=prog(), description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=_results_dir, default=None, metavar="DIR",
                        help=f"folder of the results store (default: {RESULTS})")
    parser.add_argument("--profile", choices=("quick", "full"), default="full")
    parser.add_argument("--out", type=out_folder, default=str(OUT),
                        help=f"folder of the JSON (default: {OUT})")
    parser.add_argument("--top", type=int, default=25, help="rows of the terminal table")
    args = parser.parse_args(argv)
    if args.results is None:
        try:
            args.results = _results_dir(str(RESULTS))
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument --results: {exc}")
    if args.top < 1:
        parser.error(f"argument --top: must be >= 1, got {args.top}")
    try:
        report = collect(ResultStore(args.results), args.profile)
    except ValueError as exc:
        parser.error(f"argument --{exc}")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{NAME}_{args.profile}.json"
    path.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(table(report, args.top))
    print(f"written: {path}", file=sys.stderr)
    return path


if __name__ == "__main__":
    main()
