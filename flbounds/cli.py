"""The ``flbounds`` command line: ``list``, ``check``, ``figures``, ``report``.

Exit codes: 0 every verdict as expected; 1 an unexpected verdict or an error; 2 usage (unknown
claim or figure, bad option, unreachable scheduler), always with a one-line message.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

from flbounds.ledger import ResultStore, run_claims, select
from flbounds.ledger.registry import PROFILES
from flbounds.ledger.report import fmt, write_reports
from flbounds.ledger.runner import SchedulerError, connect

DEFAULT_RESULTS = Path("flbounds-results")


class UsageError(Exception):
    """Bad command-line input: reported in one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line instead of argparse's usage block
        raise UsageError(message)


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="flbounds", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("list", help="list claims: id, paper, ref, expected verdict")
    p.add_argument("patterns", nargs="*", metavar="PATTERN")

    p = sub.add_parser("check", help="run claims and compare verdicts with expectations")
    p.add_argument("patterns", nargs="*", metavar="PATTERN",
                   help="claim ids, dotted prefixes (e.g. 'focus') or globs")
    p.add_argument("--profile", choices=PROFILES, default="quick")
    p.add_argument("--seed", type=_non_negative_int, default=0)
    p.add_argument("--workers", type=_positive_int, default=1)
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler, tcp://host:8786")
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS, metavar="DIR")
    p.add_argument("--resume", action="store_true", help="skip tasks already in the store")
    p.add_argument("--json", type=Path, metavar="PATH", help="write this run's results")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")

    p = sub.add_parser("figures", help="draw the papers' figures")
    p.add_argument("names", nargs="*", metavar="NAME")
    p.add_argument("--out", type=Path, default=DEFAULT_RESULTS / "figures", metavar="DIR")
    p.add_argument("--profile", choices=PROFILES, default="quick")
    p.add_argument("--seed", type=_non_negative_int, default=0)

    p = sub.add_parser("report", help="Markdown + HTML ledger from stored results")
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS, metavar="DIR")
    p.add_argument("--out", type=Path, metavar="DIR", help="default: the results directory")
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except UsageError as exc:
        print(f"flbounds: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("flbounds: interrupted (finished results are stored; rerun with --resume)",
              file=sys.stderr)
        return 130


def _select(patterns):
    try:
        return select(patterns)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def cmd_list(args) -> int:
    claims = _select(args.patterns)
    width = max(len(c.id) for c in claims)
    for c in claims:
        full = "" if c.expected_full in (None, c.expected) else f" (full: {c.expected_full})"
        print(f"{c.id:<{width}}  {c.paper}  {c.ref:<36}  {c.expected}{full}")
    return 0


def _progress(done: int, total: int, result, elapsed: float) -> None:
    flag = "" if result.as_expected else f"  UNEXPECTED (expected {result.expected})"
    minutes, seconds = divmod(int(elapsed), 60)
    print(f"[{done:>{len(str(total))}}/{total}] {minutes:02d}:{seconds:02d} "
          f"{result.verdict:<14} {result.id} ({result.elapsed_s:.1f}s){flag}",
          file=sys.stderr, flush=True)


def cmd_check(args) -> int:
    claims = _select(args.patterns)
    if args.json is not None and not args.json.parent.exists():
        raise UsageError(f"--json: directory {str(args.json.parent)!r} does not exist")
    scheduler = None
    if args.scheduler:
        try:
            scheduler = connect(args.scheduler)
        except SchedulerError as exc:
            raise UsageError(str(exc)) from None
    start = time.perf_counter()
    try:
        results = run_claims(claims, profile=args.profile, seed=args.seed, workers=args.workers,
                             scheduler=scheduler, store=ResultStore(args.results),
                             resume=args.resume, progress=None if args.quiet else _progress)
    finally:
        if scheduler is not None:
            scheduler.close()
    if args.json is not None:
        tmp = args.json.with_name(args.json.name + ".tmp")
        tmp.write_text(json.dumps([r.to_dict() for r in results], indent=1), encoding="utf-8")
        os.replace(tmp, args.json)
    _print_summary(results, time.perf_counter() - start)
    return 0 if all(r.as_expected for r in results) else 1


def _print_summary(results, elapsed: float) -> None:
    counts = Counter(r.verdict for r in results)
    unexpected = [r for r in results if not r.as_expected]
    print(f"{len(results)} claims in {elapsed:.1f}s: "
          + ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
          + f"; {len(results) - len(unexpected)} as expected, {len(unexpected)} unexpected")
    for r in unexpected:
        print(f"  UNEXPECTED {r.id}: {r.verdict} (expected {r.expected}); measured "
              f"{fmt(r.measured)} {r.relation} {fmt(r.theoretical)}"
              + (f"; {r.reason.splitlines()[0]}" if r.reason else ""))
        print(f"    reproduce: {r.reproducer}")


def cmd_figures(args) -> int:
    import figures

    try:
        chosen = figures.select(args.names)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for name, module in chosen.items():
        start = time.perf_counter()
        paths = module.main(["--out", str(args.out), "--profile", args.profile,
                             "--seed", str(args.seed)])
        print(f"{name}: {', '.join(str(p) for p in paths)} "
              f"({time.perf_counter() - start:.1f}s)")
    return 0


def cmd_report(args) -> int:
    store = ResultStore(args.results)
    results = list(store.latest().values())
    if not results:
        raise UsageError(f"no results in {str(args.results)!r}: run 'flbounds check' first")
    figure_dir = args.results / "figures"
    pngs = sorted(figure_dir.glob("*.png")) if figure_dir.is_dir() else []
    md, page = write_reports(results, args.out or args.results, pngs)
    print(f"wrote {md} and {page} ({len(results)} claims, {len(pngs)} figures)")
    return 0


COMMANDS = {"list": cmd_list, "check": cmd_check, "figures": cmd_figures, "report": cmd_report}
