"""``flbounds check``: run claims and compare each verdict with its expectation."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import time
from pathlib import Path

from flbounds.ledger import ResultStore, run_claims
from flbounds.ledger.api.registry import PROFILES, failed_plugins
from flbounds.ledger.engine.outputs import OutputError, output_file, output_folder, write_text
from flbounds.ledger.engine.pep_solves import share_pep_solves
from flbounds.ledger.engine.rows import public_row
from flbounds.ledger.engine.runner import DEFAULT_TIMEOUT_S, start_pool
from flbounds.ledger.engine.runs import share_runs
from flbounds.ledger.engine.tasks import freeze_plugin_roots

from ._common import (
    DEFAULT_RESULTS,
    PROFILE_HELP,
    RESULTS_HELP,
    SEED_HELP,
    WORKERS_HELP,
    UsageError,
    non_negative_int,
    positive_int,
    results_store,
    scheduler_client,
    select_claims,
)
from ._progress import claims_progress, summary_table

HELP = "run claims and compare verdicts with expectations"
EXAMPLES = """examples:
  flbounds check --profile quick --workers 2     every claim; a summary per paper
  flbounds check focus.lemma4                    one result's claims
  flbounds check kvib --json kvib.json           one paper, its rows as JSON
  flbounds check --resume                        finish an interrupted run
  flbounds check focus.thm1a -v                  with the traceback of a claim that raised

exit codes: 0 every verdict as expected, 1 an unexpected verdict or an error, 2 usage"""


def add_arguments(p) -> None:
    p.add_argument("patterns", nargs="*", metavar="PATTERN",
                   help="claim ids, dotted prefixes (e.g. 'focus'), globs or a plugin's name")
    p.add_argument("--profile", choices=PROFILES, default="quick", help=PROFILE_HELP)
    p.add_argument("--seed", type=non_negative_int, default=0, help=SEED_HELP)
    p.add_argument("--workers", type=positive_int, default=1, help=WORKERS_HELP)
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler, tcp://host:8786")
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS, metavar="DIR",
                   help=RESULTS_HELP)
    p.add_argument("--resume", action="store_true", help="skip tasks already in the store")
    p.add_argument("--json", metavar="PATH", help="write this run's results ('-': stdout)")
    p.add_argument("--timeout", type=_seconds, metavar="SECONDS",
                   help="time limit per task (0: none; default: "
                        + ", ".join(f"{k} {v:g}" for k, v in DEFAULT_TIMEOUT_S.items()) + ")")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="the summary prints the traceback of each claim that raised")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return value


def _check_outputs(args):
    """Every path the run will write, checked before any work; returns the ``--json`` target."""
    try:
        output_folder(args.results, "--results")
        results_store(args.results, write=True)
        return output_file(args.json, "--json") if args.json is not None else None
    except OutputError as exc:
        raise UsageError(str(exc)) from None


def run(args) -> int:
    json_target = _check_outputs(args)
    timeout = DEFAULT_TIMEOUT_S[args.profile] if args.timeout is None else args.timeout
    # the pool starts before the claims are loaded: spawned workers import them meanwhile; a
    # pool that forks its workers (claims already imported) waits for them (see _check); the
    # workers inherit where the PEP solves and the shared runs are kept
    with share_pep_solves(args.results), share_runs(args.results):
        pool = None if args.scheduler else start_pool(args.workers, timeout)
        try:
            results, start = _check(args, timeout, pool)
        finally:
            if pool is not None:
                pool.close(kill=True)  # a no-op after a run; stops the workers after an error
    summary_to, unwritten = sys.stdout, None
    if json_target is not None:
        try:
            write_text(json_target, json.dumps([public_row(r) for r in results], indent=1))
        except OutputError as exc:   # the results are stored: the summary still comes
            unwritten = exc
        if json_target.kind == "stdout":
            summary_to = sys.stderr     # keep standard output pure JSON
    failed = failed_plugins()
    with contextlib.redirect_stdout(summary_to):
        print_summary(results, time.perf_counter() - start, verbose=args.verbose)
        if failed:  # a run that silently skipped a broken plugin's claims is not a success
            print(f"{len(failed)} claim plugin(s) failed to load, their claims were not "
                  f"checked: {', '.join(failed)}")
    if unwritten is not None:
        raise UsageError(f"{unwritten} (the results are stored in {str(args.results)!r}; "
                         "'flbounds show' and 'flbounds report' read them)")
    return 0 if all(r.as_expected for r in results) and not failed else 1


def _check(args, timeout, pool):
    claims = select_claims(args.patterns)
    if pool is not None:
        pool.start(len(claims))     # forks now, before the progress bar starts its thread
    freeze_plugin_roots()   # this process serves one run too (it combines cells, fills rows)
    scheduler = scheduler_client(args.scheduler)
    start = time.perf_counter()
    bar = claims_progress(claims, args.results, args.profile, seed=args.seed,
                          resume=args.resume, quiet=args.quiet)
    try:
        results = run_claims(claims, profile=args.profile, seed=args.seed, workers=args.workers,
                             scheduler=scheduler, store=ResultStore(args.results),
                             resume=args.resume, progress=bar.claim_done, timeout=timeout,
                             pool=pool)
    finally:
        bar.close()
        if scheduler is not None:
            scheduler.close()
    return results, start


def print_summary(results, elapsed: float, *, verbose: bool = False) -> None:
    print(summary_table(results, elapsed, verbose=verbose))
