"""``flbounds list [PATTERN ...]``: the registered claims, grouped by paper."""

from __future__ import annotations

import csv
import json
import sys

from flbounds.ledger.api.registry import PAPERS
from flbounds.ledger.api.result import to_jsonable

from ._common import aligned, select_claims

HELP = ("list claims: id, paper, ref, kind, hypotheses (evaluated / some left on purpose), "
        "expected verdict")
EXAMPLES = """examples:
  flbounds list                          every claim, a table per paper
  flbounds list focus.lemma4             one result's claims
  flbounds list 'kvib.thm4_1.*' --where  with the file:line of each claim function
  flbounds list mypaper                  a plugin's claims (entry point or package name)
  flbounds list --format csv > claims.csv"""
FORMATS = ("table", "json", "csv")
REF_WIDTH = 40
CSV_FIELDS = ("id", "paper", "citation", "title", "ref", "kind", "hypotheses_state", "expected",
              "expected_full", "statement")


def add_arguments(p) -> None:
    p.add_argument("patterns", nargs="*", metavar="PATTERN",
                   help="claim ids, dotted prefixes (e.g. 'focus'), globs or a plugin's name")
    p.add_argument("--where", action="store_true",
                   help="add file:line of each claim function")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="table for reading (default), json (every field) or csv")


def claim_record(c, *, where: bool = False) -> dict:
    """One claim as a JSON-ready dict: identity, paper, expectation, parameters, hypotheses."""
    declared = PAPERS.get(c.paper_key)
    record = dict(id=c.id, paper=c.paper_key, title=declared.title if declared else "",
                  source=declared.source if declared else "",
                  citation=citation(declared) if declared else c.paper_key,
                  ref=c.ref, kind=c.kind,
                  statement=c.statement, expected=c.expected,
                  expected_full=c.expected_for("full"), params=dict(quick=c.quick, full=c.full),
                  hypotheses_state=_declared_state(c),
                  parts=list(c.parts), outside=dict(c.outside),
                  reproducer=c.reproducer("quick", 0))
    if where:
        record["where"] = c.where
    return to_jsonable(record)


def citation(declared) -> str:
    """A paper as a reader cites it (authors, title, venue, arXiv id), without the Markdown
    emphasis of :attr:`~flbounds.ledger.api.papers.Paper.citation`."""
    return declared.citation.replace("*", "")


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
    """Per paper its key and citation, a header row, then one line per claim in columns
    aligned across papers (long refs cut; ``--format json`` or ``csv`` and ``flbounds show``
    give them whole). The hypotheses column says that the claim's result predicates are
    ``evaluated`` on each run, or ``some left`` when it is outside some on purpose (the
    run-time table shows in ``show`` and the report)."""
    where = any("where" in r for r in records)
    head = ("claim", "ref", "kind", "hypotheses", "expected") + (("where",) if where else ())
    rows = []
    for r in records:
        ref = r["ref"] if len(r["ref"]) <= REF_WIDTH else r["ref"][:REF_WIDTH - 3] + "..."
        expected = r["expected"] + ("" if r["expected_full"] == r["expected"]
                                    else f" (full: {r['expected_full']})")
        rows.append((r["id"], ref, r["kind"], r["hypotheses_state"] or "-", expected)
                    + ((r.get("where", ""),) if where else ()))
    header, rule, *lines = aligned(head, rows)
    paper = None
    for r, text in zip(records, lines, strict=True):
        if r["paper"] != paper:
            if paper is not None:
                print()
            paper = r["paper"]
            print(f"{paper}: {r['citation']}")
            print(f"  {header}\n  {rule}")
        print(f"  {text}")
