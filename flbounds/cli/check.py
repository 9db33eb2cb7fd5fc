"""``flbounds check``: run claims and compare each verdict with its expectation."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from flbounds.ledger import ResultStore, run_claims
from flbounds.ledger.registry import PROFILES
from flbounds.ledger.runner import SchedulerError, connect

from ._common import DEFAULT_RESULTS, UsageError, non_negative_int, positive_int, select_claims
from ._progress import claims_progress, summary_table

HELP = "run claims and compare verdicts with expectations"


def add_arguments(p) -> None:
    p.add_argument("patterns", nargs="*", metavar="PATTERN",
                   help="claim ids, dotted prefixes (e.g. 'focus') or globs")
    p.add_argument("--profile", choices=PROFILES, default="quick")
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument("--workers", type=positive_int, default=1)
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler, tcp://host:8786")
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS, metavar="DIR")
    p.add_argument("--resume", action="store_true", help="skip tasks already in the store")
    p.add_argument("--json", type=Path, metavar="PATH", help="write this run's results")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def run(args) -> int:
    claims = select_claims(args.patterns)
    if args.json is not None and not args.json.parent.exists():
        raise UsageError(f"--json: directory {str(args.json.parent)!r} does not exist")
    scheduler = None
    if args.scheduler:
        try:
            scheduler = connect(args.scheduler)
        except SchedulerError as exc:
            raise UsageError(str(exc)) from None
    start = time.perf_counter()
    bar = claims_progress(claims, args.results, args.profile, seed=args.seed,
                          resume=args.resume, quiet=args.quiet)
    try:
        results = run_claims(claims, profile=args.profile, seed=args.seed, workers=args.workers,
                             scheduler=scheduler, store=ResultStore(args.results),
                             resume=args.resume, progress=bar.claim_done)
    finally:
        bar.close()
        if scheduler is not None:
            scheduler.close()
    if args.json is not None:
        tmp = args.json.with_name(args.json.name + ".tmp")
        tmp.write_text(json.dumps([r.to_dict() for r in results], indent=1), encoding="utf-8")
        os.replace(tmp, args.json)
    print_summary(results, time.perf_counter() - start)
    return 0 if all(r.as_expected for r in results) else 1


def print_summary(results, elapsed: float) -> None:
    print(summary_table(results, elapsed))
