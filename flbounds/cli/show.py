"""``flbounds show ID``: one claim in full, with its latest stored result."""

from __future__ import annotations

import json
from pathlib import Path

from flbounds.ledger import ResultStore
from flbounds.ledger.api.registry import PROFILES, load_all, matches
from flbounds.ledger.reports.report import fmt

from ._common import DEFAULT_RESULTS, UsageError, non_negative_int
from .list import claim_record

HELP = "one claim: statement, paper, tolerance, hypotheses, file:line, latest result"
FORMATS = ("text", "json")


def add_arguments(p) -> None:
    p.add_argument("claim_id", metavar="ID", help="a claim id (see 'flbounds list')")
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS, metavar="DIR",
                   help="results store to read the latest result from")
    p.add_argument("--run", action="store_true",
                   help="run the claim now (nothing is stored) instead of reading the store")
    p.add_argument("--profile", choices=PROFILES, help="with --run (default: quick)")
    p.add_argument("--seed", type=non_negative_int, help="with --run (default: 0)")
    p.add_argument("--format", choices=FORMATS, default="text")


def find_claim(claim_id: str):
    """The claim with exactly this id; a usage error naming close matches otherwise."""
    table = load_all()
    if claim_id in table:
        return table[claim_id]
    close = [cid for cid in table if matches(cid, claim_id)]
    hint = f"; {len(close)} claims match it, e.g. {close[0]}" if close else ""
    raise UsageError(f"unknown claim id {claim_id!r}{hint} (see 'flbounds list')")


def run(args) -> int:
    if not args.run and (args.profile is not None or args.seed is not None):
        raise UsageError("--profile and --seed choose the run of --run; without it, "
                         "show reads the latest stored result")
    c = find_claim(args.claim_id)
    attack = None
    if args.run:
        latest = c.check(seed=args.seed or 0, profile=args.profile or "quick")
        origin = "this run (not stored)"
    else:
        stored = ResultStore(args.results).latest()
        latest, origin = stored.get(c.id), f"latest in {args.results}"
        attack = stored.get(f"attack:{c.id}")
    record = claim_record(c, where=True)
    if args.format == "json":
        record["latest"] = latest.to_dict() if latest is not None else None
        record["attack"] = attack.to_dict() if attack is not None else None
        print(json.dumps(record, indent=1))
        return 0
    print("\n".join(claim_lines(record, f"{c.module}.{c.func.__qualname__}")))
    print()
    if latest is None:
        print(f"result      none stored in {args.results}; relation and tolerance come "
              f"from a run:\n            {record['reproducer']}\n"
              f"            or: flbounds show {c.id} --run")
    else:
        print(f"result      {origin}, profile {latest.profile}, seed {latest.seed}")
        print("\n".join(result_lines(latest)))
    if attack is not None:
        print(f"attack      {_mapping(getattr(attack, 'attack', None) or {})} "
              f"(row {attack.id}, {attack.verdict})")
    return 0


def claim_lines(record: dict, qualname: str) -> list[str]:
    """The claim's own fields, one per line."""
    expected = record["expected"]
    if record["expected_full"] != expected:
        expected = f"{expected} (quick), {record['expected_full']} (full)"
    source = f" [{record['source']}]" if record["source"] else ""
    params = record["params"]
    return [record["id"],
            f"statement   {record['statement']}",
            f"paper       {record['paper']}: {record['title']}{source}",
            f"ref         {record['ref']}",
            f"kind        {record['kind']}",
            f"expected    {expected}",
            f"params      quick {_mapping(params['quick'])}; full {_mapping(params['full'])}",
            f"hypotheses  {_hypotheses(record['hypotheses'])}",
            f"function    {record['where']}  ({qualname})",
            f"reproduce   {record['reproducer']}"]


def result_lines(r) -> list[str]:
    """A result's verdict, numbers, relation, tolerance and provenance, one per line."""
    mark = "as expected" if r.as_expected else f"UNEXPECTED, expected {r.expected}"
    tol = r.tolerance or {}
    lines = [f"verdict     {r.verdict} ({mark})",
             f"compared    measured {fmt(r.measured)} {r.relation or '?'} "
             f"theoretical {fmt(r.theoretical)}",
             f"tolerance   {tol.get('name', '-')} = {fmt(tol.get('value'))}: "
             f"{tol.get('derivation', '-')}"]
    if getattr(r, "hypotheses", None):
        lines.append(f"hypotheses  {_hypotheses(r.hypotheses)}")
    for name in ("attack", "worst_case"):  # fields other branches of the ledger may fill
        value = getattr(r, name, None)
        if value:
            lines.append(f"{name.replace('_', ' '):<11} {_mapping(value)}")
    if r.reason:
        lines.append(f"reason      {r.reason.splitlines()[0]}")
    lines.append(f"elapsed     {r.elapsed_s:.2f}s; reproduce: {r.reproducer}")
    return lines


def _hypotheses(table: dict) -> str:
    if not table:
        return "(none recorded)"
    words = {True: "met", False: "NOT met"}
    return "; ".join(f"{k}: {words.get(v, v)}" for k, v in table.items())


def _mapping(table: dict) -> str:
    return "{" + ", ".join(f"{k}={fmt(v)}" for k, v in table.items()) + "}"
