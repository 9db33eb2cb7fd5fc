"""``flbounds list [PATTERN ...]``: the registered claims, grouped by paper."""

from __future__ import annotations

import csv
import json
import sys

from flbounds.ledger.api.registry import PAPERS
from flbounds.ledger.api.result import to_jsonable

from ._common import select_claims

HELP = ("list claims: id, paper, ref, kind, hypotheses (evaluated / some left on purpose), "
        "expected verdict")
FORMATS = ("table", "json", "csv")
REF_WIDTH = 40
CSV_FIELDS = ("id", "paper", "title", "ref", "kind", "hypotheses_state", "expected",
              "expected_full", "statement")


def add_arguments(p) -> None:
    p.add_argument("patterns", nargs="*", metavar="PATTERN",
                   help="claim ids, dotted prefixes (e.g. 'focus') or globs")
    p.add_argument("--where", action="store_true",
                   help="add file:line of each claim function")
    p.add_argument("--format", choices=FORMATS, default="table")


def claim_record(c, *, where: bool = False) -> dict:
    """One claim as a JSON-ready dict: identity, paper, expectation, parameters, hypotheses."""
    declared = PAPERS.get(c.paper_key)
    record = dict(id=c.id, paper=c.paper_key, title=declared.title if declared else "",
                  source=declared.source if declared else "", ref=c.ref, kind=c.kind,
                  statement=c.statement, expected=c.expected,
                  expected_full=c.expected_for("full"), params=dict(quick=c.quick, full=c.full),
                  hypotheses_state=_declared_state(c),
                  parts=list(c.parts), outside=dict(c.outside),
                  reproducer=c.reproducer("quick", 0))
    if where:
        record["where"] = c.where
    return to_jsonable(record)


def _declared_state(c) -> str:
    """A claim's hypotheses are its results' predicates, which the ledger evaluates on each
    run (``evaluated``); ``some left`` when it is outside some on purpose."""
    return "some left" if c.outside else "evaluated"


def run(args) -> int:
    claims = select_claims(args.patterns)
    records = [claim_record(c, where=args.where) for c in claims]
    if args.format == "json":
        print(json.dumps(records, indent=1))
    elif args.format == "csv":
        fields = CSV_FIELDS + (("where",) if args.where else ())
        writer = csv.DictWriter(sys.stdout, fieldnames=fields, extrasaction="ignore",
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
    else:
        print_table(records)
    return 0


def print_table(records: list[dict]) -> None:
    """One heading per paper (key and title), then one line per claim (long refs cut;
    ``--format json`` or ``csv`` and ``flbounds show`` give them whole). The hypotheses
    column says that the claim's result predicates are ``evaluated`` on each run, or ``some
    left`` when it is outside some on purpose (the run-time table shows in ``show`` and the
    report)."""
    id_width = max(len(r["id"]) for r in records)
    ref_width = min(REF_WIDTH, max(len(r["ref"]) for r in records))
    expected = [r["expected"] + ("" if r["expected_full"] == r["expected"]
                                 else f" (full: {r['expected_full']})") for r in records]
    expected_width = max(len(e) for e in expected)
    paper = None
    for r, verdicts in zip(records, expected, strict=True):
        if r["paper"] != paper:
            paper = r["paper"]
            print(("" if paper == records[0]["paper"] else "\n") + f"{paper}: {r['title']}")
        if "where" in r:
            verdicts = f"{verdicts:<{expected_width}}  {r['where']}"
        ref = r["ref"] if len(r["ref"]) <= ref_width else r["ref"][:ref_width - 3] + "..."
        hyp = r["hypotheses_state"] or "-"
        print(f"  {r['id']:<{id_width}}  {ref:<{ref_width}}  {r['kind']:<10}  {hyp:<9}  "
              f"{verdicts}")
