"""``flbounds report``: the Markdown and HTML ledger from stored results."""

from __future__ import annotations

from pathlib import Path

from flbounds.ledger import ResultStore
from flbounds.ledger.report import write_reports

from ._common import DEFAULT_RESULTS, UsageError

HELP = "Markdown + HTML ledger from stored results"


def add_arguments(p) -> None:
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS, metavar="DIR")
    p.add_argument("--out", type=Path, metavar="DIR", help="default: the results directory")


def run(args) -> int:
    store = ResultStore(args.results)
    results = list(store.latest().values())
    if not results:
        raise UsageError(f"no results in {str(args.results)!r}: run 'flbounds check' first")
    figure_dir = args.results / "figures"
    pngs = sorted(figure_dir.glob("*.png")) if figure_dir.is_dir() else []
    md, page = write_reports(results, args.out or args.results, pngs)
    print(f"wrote {md} and {page} ({len(results)} claims, {len(pngs)} figures)")
    return 0
