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
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks._common import DEFAULT_OUT, write

NAME = "scale_check_wall"
HISTORY = Path("flbounds-results") / "results.sqlite"


def run_check(profile: str, workers: int, history: Path | None,
              patterns: list[str], keep: Path) -> dict:
    """One ``flbounds check`` run in a subprocess; its wall time and summary. The run's
    results (``--json``) are kept at ``keep``."""
    with tempfile.TemporaryDirectory(prefix="flbounds-wall-") as tmp:
        results = Path(tmp) / "results"
        results.mkdir()
        if history is not None and history.is_file():
            shutil.copyfile(history, results / history.name)
        out = Path(tmp) / "run.json"
        cmd = [sys.executable, "-m", "flbounds", "check", "--profile", profile,
               "--workers", str(workers), "--results", str(results), "--json", str(out),
               *patterns]
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode not in (0, 1) or not out.is_file():
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
        rows = json.loads(out.read_text())
        shutil.copyfile(out, keep)
    verdicts = Counter(r["verdict"] for r in rows)
    return {
        "profile": profile,
        "workers": workers,
        "claims": len(rows),
        "wall_s": wall,
        "task_s": sum(r["elapsed_s"] for r in rows),
        "as_expected": sum(r["verdict"] == r["expected"] for r in rows),
        "verdicts": ", ".join(f"{v} {verdicts[v]}" for v in sorted(verdicts)),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "exit": proc.returncode,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--profile", choices=("quick", "full"), default="quick")
    parser.add_argument("--history", type=Path, default=HISTORY,
                        help="results store whose task durations order the tasks")
    parser.add_argument("--pattern", nargs="*", default=[],
                        help="claims to run (default: all)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    runs = [("quick", 1), ("quick", 2)] + ([("full", 2)] if args.profile == "full" else [])
    rows = []
    for profile, workers in runs:
        keep = args.out / f"{NAME}_{profile}_{workers}w_results.json"
        row = run_check(profile, workers, args.history, args.pattern, keep)
        print(f"check --profile {profile} --workers {workers}: {row['wall_s']:.0f} s",
              file=sys.stderr)
        rows.append(row)
    return write(args.out, NAME, "Wall time of flbounds check", rows,
                 ["profile", "workers", "claims", "wall_s", "task_s", "as_expected",
                  "verdicts", "peak_rss_mib", "exit"],
                 notes="task_s: sum of the tasks' own durations (wall_s x workers minus idle "
                       "and start-up time); peak_rss_mib: largest resident set of any child "
                       "process so far (a running maximum over the rows); exit 1 means some "
                       "claim met a verdict other than its expected one.")


if __name__ == "__main__":
    main()
