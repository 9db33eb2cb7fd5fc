"""``flbounds findings [PAPER ...]``: per paper, what fails and by how much, the corrected
statements, how tight what holds is, the authors' code defects and the synthetic re-runs,
from the stored rows of the latest complete run (``--profile`` / ``--seed`` choose another).

Exit codes follow the command line's: 0 when every row shown has its expected verdict, 1
when one does not (the findings are printed all the same), 2 without a store, with an
unknown paper, or with a paper that has no stored row.
"""

from __future__ import annotations

import json
from pathlib import Path

from flbounds.ledger import ResultStore
from flbounds.ledger.api.registry import PAPERS, PROFILES
from flbounds.ledger.reports.findings import collect
from flbounds.ledger.reports.findings_render import markdown, text
from flbounds.ledger.reports.provenance import select_rows

from ._common import DEFAULT_RESULTS, RESULTS_HELP, UsageError, non_negative_int

HELP = ("per paper: printed statements that fail and by how much, corrected statements, "
        "tightness of what holds, code defects, synthetic re-runs")
FORMATS = ("text", "markdown", "json")
EXAMPLES = """examples:
  flbounds findings                           every paper of the latest complete run
  flbounds findings focus kvib                two papers
  flbounds findings --format markdown         the page as Markdown (report writes it too)
  flbounds findings --format json             the findings as data"""


def add_arguments(p) -> None:
    p.add_argument("papers", nargs="*", metavar="PAPER",
                   help="paper keys (default: every paper with stored rows; see "
                        "'flbounds list')")
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS, metavar="DIR",
                   help=RESULTS_HELP)
    p.add_argument("--profile", choices=PROFILES, help="default: the latest complete run's")
    p.add_argument("--seed", type=non_negative_int, help="default: the latest complete run's")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (terminal, default), markdown, or json (the findings as data)")


def run(args) -> int:
    unknown = [k for k in args.papers if k not in PAPERS]
    if unknown:
        raise UsageError(f"unknown paper {unknown[0]!r} (papers: {', '.join(PAPERS)})")
    store = ResultStore(args.results)
    if not (store.path.exists() or store.legacy_path.exists()):
        raise UsageError(f"no results in {str(args.results)!r}: run 'flbounds check' first")
    try:
        chosen = select_rows(store.records(), store.runs(), profile=args.profile,
                             seed=args.seed)
        found = collect(chosen.results, args.papers, provenance=chosen.lines)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        print(json.dumps(found.to_dict(), indent=1))
    elif args.format == "markdown":
        print(markdown(found, ledger=""), end="")
    else:
        print(text(found), end="")
    return 1 if any(p.unexpected for p in found.papers) else 0
