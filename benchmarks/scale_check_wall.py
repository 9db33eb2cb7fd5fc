"""Wall time of the main job, ``flbounds check``, as a user runs it.

Runs ``python -m flbounds check --profile quick`` with 1 and with 2 workers, and (with
``--profile full``) ``python -m flbounds check --profile full --workers 2``, each in a fresh
subprocess writing to a fresh results directory. Only the durations in an existing results
store (``--history``, default ``flbounds-results/results.sqlite``; an old
``results.jsonl`` works too) are copied in, so tasks
start longest first as in a user's repeated runs; nothing is resumed, every task is
computed; each run's results (its ``--json``) are kept beside the table. Reported: wall
seconds, the summed task seconds (CPU-bound work), the verdict counts, how many claims met
their expected verdict, and the peak resident memory of the largest process (``ru_maxrss``
of the children).

``--record`` appends the run to ``benchmarks/results/scale_check_wall.json`` (with
``--first-warm``: ``scale_check_wall_first.json``), the data of the performance page.

``--first-warm N`` measures the first run instead: N times, the quick ledger with an empty
numba cache (``NUMBA_CACHE_DIR`` set to a fresh folder) and at once again with that cache
filled, both with ``--workers 2`` (the warm run ordered by the first run's task durations
when there is no ``--history``); reported per pair: wall and CPU seconds (user + system of
the whole process tree) of each run and the first/warm ratios. On a shared machine the CPU
ratio is the steadier of the two.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks._common import DEFAULT_OUT, OUT_HELP, out_folder, prog, write
from flbounds.cli._common import non_negative_int
from flbounds.ledger.api.registry import select

NAME = "scale_check_wall"
HISTORY = Path("flbounds-results") / "results.sqlite"
UNITS = {"wall_s": "s", "cpu_s": "s (user + system of the process tree)",
         "task_s": "s (sum of the tasks' own durations)",
         "peak_rss_mib": "MiB (largest child process)", "claims": "claims"}
FIRST_UNITS = {"first_wall_s": "s", "warm_wall_s": "s", "wall_ratio": "first / warm (wall)",
               "first_cpu_s": "s (user + system, process tree)", "warm_cpu_s": "s",
               "cpu_ratio": "first / warm (CPU)",
               "compile_cpu_s": "s of CPU compiling library kernels"}
#: the issue's targets for the quick ledger with two workers
FIRST_TARGETS = [
    {"what": "warm quick ledger, --workers 2", "table": "pairs", "column": "warm_wall_s",
     "at_most": 40.0},
    {"what": "first run at most 1.5x the warm run (wall)", "table": "pairs",
     "column": "wall_ratio", "at_most": 1.5}]


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_check(profile: str, workers: int, history: Path | None,
              patterns: list[str], keep: Path, env: dict | None = None,
              keep_store: Path | None = None) -> dict:
    """One ``flbounds check`` run in a subprocess (environment ``env``, default this
    one's); its wall and CPU time and summary. The run's results (``--json``) are kept at
    ``keep``, its results store at ``keep_store`` when given."""
    with tempfile.TemporaryDirectory(prefix="flbounds-wall-") as tmp:
        results = Path(tmp) / "results"
        results.mkdir()
        if history is not None and history.is_file():
            shutil.copyfile(history, results / history.name)
        out = Path(tmp) / "run.json"
        cmd = [sys.executable, "-m", "flbounds", "check", "--profile", profile,
               "--workers", str(workers), "--results", str(results), "--json", str(out),
               *patterns]
        cpu, start = _cpu_children(), time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        wall, cpu = time.perf_counter() - start, _cpu_children() - cpu
        if proc.returncode not in (0, 1) or not out.is_file():
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
        rows = json.loads(out.read_text())
        shutil.copyfile(out, keep)
        if keep_store is not None:
            shutil.copyfile(results / HISTORY.name, keep_store)
    verdicts = Counter(r["verdict"] for r in rows)
    return {
        "profile": profile,
        "workers": workers,
        "claims": len(rows),
        "wall_s": wall,
        "cpu_s": cpu,
        "task_s": sum(r["elapsed_s"] for r in rows),
        "as_expected": sum(r["verdict"] == r["expected"] for r in rows),
        "verdicts": ", ".join(f"{v} {verdicts[v]}" for v in sorted(verdicts)),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "exit": proc.returncode,
    }


def first_and_warm(repeats: int, history: Path | None, patterns: list[str],
                   out: Path, workers: int = 2) -> list[dict]:
    """``repeats`` pairs of quick runs: from an empty numba cache, then warm. Without a
    ``history`` store the warm run takes the first run's task durations (a user's second
    run starts its tasks longest first the same way)."""
    rows = []
    for rep in range(repeats):
        with tempfile.TemporaryDirectory(prefix="flbounds-numba-") as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            first_store = Path(cache) / HISTORY.name
            pair = {}
            for run in ("first", "warm"):
                keep = out / f"{NAME}_{run}{rep}_results.json"
                own = history if history is not None and history.is_file() else None
                if run == "warm" and own is None:
                    own = first_store
                pair[run] = run_check("quick", workers, own, patterns, keep, env=env,
                                      keep_store=first_store if run == "first" else None)
                print(f"{run} run {rep}: {pair[run]['wall_s']:.0f} s wall, "
                      f"{pair[run]['cpu_s']:.0f} s CPU", file=sys.stderr)
        first, warm = pair["first"], pair["warm"]
        rows.append({"repeat": rep, "workers": workers, "claims": first["claims"],
                     "first_wall_s": first["wall_s"], "warm_wall_s": warm["wall_s"],
                     "wall_ratio": first["wall_s"] / warm["wall_s"],
                     "first_cpu_s": first["cpu_s"], "warm_cpu_s": warm["cpu_s"],
                     "cpu_ratio": first["cpu_s"] / warm["cpu_s"],
                     "as_expected": f"{first['as_expected']}/{warm['as_expected']}"})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog=prog(), description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=out_folder, default=str(DEFAULT_OUT), help=OUT_HELP)
    parser.add_argument("--profile", choices=("quick", "full"), default="quick",
                        help="full: also time the full ledger on 2 workers (not with "
                             "--first-warm, which measures the quick ledger)")
    parser.add_argument("--history", type=Path, default=HISTORY,
                        help="results store whose task durations order the tasks")
    parser.add_argument("--pattern", nargs="*", default=[],
                        help="claims to run (default: all)")
    parser.add_argument("--first-warm", type=non_negative_int, default=0, metavar="N",
                        help="measure N pairs of first (empty numba cache) and warm runs")
    parser.add_argument("--record", action="store_true",
                        help="also append the run to benchmarks/results/<name>.json (the "
                             "performance page's data)")
    args = parser.parse_args(argv)
    if args.first_warm > 0 and args.profile != "quick":
        parser.error("--first-warm measures the quick ledger; leave --profile at quick")
    if args.history != HISTORY and not args.history.is_file():
        parser.error(f"argument --history: no such results store: {args.history}")
    try:
        select(args.pattern)               # a pattern matching no claim: before any run
    except ValueError as exc:
        parser.error(f"argument --pattern: {exc}")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.first_warm > 0:
        rows = first_and_warm(args.first_warm, args.history, args.pattern, args.out)
        return write(args.out, f"{NAME}_first", "The quick ledger's first run (empty numba "
                     "cache) against its warm run, --workers 2", rows,
                     ["repeat", "workers", "claims", "first_wall_s", "warm_wall_s",
                      "wall_ratio", "first_cpu_s", "warm_cpu_s", "cpu_ratio", "as_expected"],
                     notes="first: empty numba cache (NUMBA_CACHE_DIR a fresh folder); warm: "
                           "the same cache right after; cpu_s: user + system seconds of the "
                           "whole process tree; as_expected: claims meeting their expected "
                           "verdict, first/warm.",
                     table="pairs", units=FIRST_UNITS, profile="quick", record=args.record,
                     command=f"python -m benchmarks {NAME} --first-warm 2 --record",
                     targets=FIRST_TARGETS)
    runs = [("quick", 1), ("quick", 2)] + ([("full", 2)] if args.profile == "full" else [])
    rows = []
    for profile, workers in runs:
        keep = args.out / f"{NAME}_{profile}_{workers}w_results.json"
        row = run_check(profile, workers, args.history, args.pattern, keep)
        print(f"check --profile {profile} --workers {workers}: {row['wall_s']:.0f} s",
              file=sys.stderr)
        rows.append(row)
    return write(args.out, NAME, "Wall time of flbounds check", rows,
                 ["profile", "workers", "claims", "wall_s", "cpu_s", "task_s", "as_expected",
                  "verdicts", "peak_rss_mib", "exit"],
                 notes="task_s: sum of the tasks' own durations (wall_s x workers minus idle "
                       "and start-up time); peak_rss_mib: largest resident set of any child "
                       "process so far (a running maximum over the rows); exit 1 means some "
                       "claim met a verdict other than its expected one.",
                 units=UNITS, profile=args.profile, record=args.record,
                 command=f"python -m benchmarks {NAME} --record")


if __name__ == "__main__":
    main()
