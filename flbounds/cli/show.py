"""``flbounds show ID``: one claim in full with its latest stored result, or one numbered
result: its parts, hypotheses, printed bounds and the claims of each part with their verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path

from flbounds.ledger.api import results as _results
from flbounds.ledger.api.registry import PAPERS, PROFILES, load_all, matches
from flbounds.ledger.api.result import to_jsonable
from flbounds.ledger.reports.report import fmt

from ._common import DEFAULT_RESULTS, UsageError, non_negative_int, results_store
from ._margin import traceback_lines
from .list import citation, claim_record

HELP = ("a claim (statement, paper, tolerance, hypotheses, file:line, latest result) or a "
        "result (parts, hypotheses, printed bound, claims per part with verdicts)")
EXAMPLES = """examples:
  flbounds show focus.lemma4                             a result: parts, hypotheses, claims
  flbounds show focus.lemma4.rare_participation          a claim, its latest stored result
  flbounds show focus.lemma4.rare_participation --run    run it now (nothing is stored)
  flbounds show focus.lemma4.rare_participation -v       with the traceback if it raised
  flbounds show kvib.thm4_1 --format json"""
FORMATS = ("text", "json")


def add_arguments(p) -> None:
    p.add_argument("claim_id", metavar="ID",
                   help="a claim id (see 'flbounds list') or a result id (focus.lemma4)")
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS, metavar="DIR",
                   help="results store to read the latest results from")
    p.add_argument("--run", action="store_true",
                   help="run the claim(s) now (nothing is stored) instead of reading the store")
    p.add_argument("--profile", choices=PROFILES, help="with --run (default: quick)")
    p.add_argument("--seed", type=non_negative_int, help="with --run (default: 0)")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text for reading (default) or json (the record and latest rows)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="the traceback of a claim that raised")


def find_claim(claim_id: str):
    """The claim with exactly this id; a usage error naming close matches otherwise."""
    table = load_all()
    if claim_id in table:
        return table[claim_id]
    close = [cid for cid in table if matches(cid, claim_id)]
    hint = f"; {len(close)} claims match it, e.g. {close[0]}" if close else ""
    raise UsageError(f"unknown claim or result id {claim_id!r}{hint} (see 'flbounds list')")


def run(args) -> int:
    if not args.run and (args.profile is not None or args.seed is not None):
        raise UsageError("--profile and --seed choose the run of --run; without it, "
                         "show reads the latest stored result")
    declared = _results.load_all()
    if args.claim_id not in load_all() and args.claim_id in declared:
        return show_result(declared[args.claim_id], args)
    c = find_claim(args.claim_id)
    attack = None
    if args.run:
        latest = c.check(seed=args.seed or 0, profile=args.profile or "quick")
        origin = "this run (not stored)"
    else:
        stored = results_store(args.results).latest()
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
        print("\n".join(result_lines(latest, verbose=args.verbose)))
    if attack is not None:
        print(f"attack      {_mapping(getattr(attack, 'attack', None) or {})} "
              f"(row {attack.id}, {attack.verdict})")
    return 0


def claim_lines(record: dict, qualname: str) -> list[str]:
    """The claim's own fields, one per line."""
    expected = record["expected"]
    if record["expected_full"] != expected:
        expected = f"{expected} (quick), {record['expected_full']} (full)"
    params = record["params"]
    return [record["id"],
            f"statement   {record['statement']}",
            f"paper       {record['paper']}: {record['citation']}",
            f"ref         {record['ref']}",
            f"kind        {record['kind']}",
            f"expected    {expected}",
            f"params      quick {_mapping(params['quick'])}; full {_mapping(params['full'])}",
            f"hypotheses  {_declared(record)}",
            f"parts       {', '.join(record['parts']) or '(attached to no result)'}",
            f"function    {record['where']}  ({qualname})",
            f"reproduce   {record['reproducer']}"]


def result_lines(r, *, verbose: bool = False) -> list[str]:
    """A result's verdict, numbers, relation, tolerance and provenance, one per line; the
    traceback of a claim that raised with ``verbose`` (else a pointer to ``-v``)."""
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
    if getattr(r, "traceback", "") and verbose:
        lines += ["traceback", *traceback_lines(r, "  ")]
    elif getattr(r, "traceback", ""):
        lines.append("traceback   the claim raised: -v prints the traceback")
    return lines


def _declared(record: dict) -> str:
    """A claim's hypotheses: its results' predicates (evaluated on each run's instance) and
    those it is outside of on purpose."""
    results = ", ".join(dict.fromkeys(q.split(":", 1)[0] for q in record["parts"]))
    outside = "".join(f"; outside {k} on purpose: {v}" for k, v in record["outside"].items())
    return (f"the predicates of {results} (flbounds show {results.split(', ')[0]}), "
            f"evaluated on each run's instance{outside}")


def _hypotheses(table: dict) -> str:
    if not table:
        return "(none recorded)"
    words = {True: "met", False: "NOT met"}
    return "; ".join(f"{k}: {words.get(v, v)}" for k, v in table.items())


def _mapping(table: dict) -> str:
    return "{" + ", ".join(f"{k}={fmt(v)}" for k, v in table.items()) + "}"


def show_result(res, args) -> int:
    """Print (or ``--format json``) one result: :func:`result_record`."""
    claims = res.claims()
    if args.run:
        profile, seed = args.profile or "quick", args.seed or 0
        latest = {c.id: c.check(seed=seed, profile=profile) for c in claims}
        origin, attacks = "this run (not stored)", {}
    else:
        stored = results_store(args.results).latest()
        latest = {c.id: stored[c.id] for c in claims if c.id in stored}
        attacks = {c.id: stored[f"attack:{c.id}"] for c in claims
                   if f"attack:{c.id}" in stored}
        origin = f"latest in {args.results}"
    record = result_record(res, claims, latest, attacks)
    if args.format == "json":
        print(json.dumps(record, indent=1))
    else:
        print("\n".join(result_text(record, origin, verbose=args.verbose)))
    return 0


def result_record(res, claims, latest: dict, attacks: dict) -> dict:
    """A result as a JSON-ready dict: identity, paper, parts (each with its claims and their
    latest rows), hypotheses (wording, parts, the values read) and printed bounds."""
    declared = PAPERS.get(res.paper_key)
    paper = dict(key=res.paper_key, title=declared.title if declared else "",
                 source=declared.source if declared else "",
                 reference=declared.reference if declared else "",
                 citation=citation(declared) if declared else res.paper_key)
    parts = []
    for pid, part in res.parts.items():
        qualified = res.part(pid)
        attached = [_claim_entry(c, latest.get(c.id), attacks.get(c.id))
                    for c in claims if qualified in c.parts]
        parts.append(dict(id=pid, text=part.text, unchecked=part.unchecked, claims=attached))
    hypotheses = [dict(name=h.name, wording=h.wording,
                       parts=list(h.parts) if h.parts is not None else list(res.parts),
                       reads=list(h.needs)) for h in res.hypotheses]
    bounds = [dict(id=b.id, ref=b.ref, quantity=b.quantity,
                   constants=[c.name for c in b.constants], step=b.uses_step)
              for b in res.bounds]
    return to_jsonable(dict(id=res.id, ref=res.ref, title=res.title, kind=res.kind,
                            paper=paper, where=res.where, module=res.module,
                            statement=res.statement, not_checked=res.not_checked,
                            parts=parts, hypotheses=hypotheses, bounds=bounds))


def _claim_entry(c, row, attack_row) -> dict:
    entry = dict(id=c.id, ref=c.ref, kind=c.kind, expected=c.expected,
                 expected_full=c.expected_for("full"), outside=dict(c.outside), latest=None,
                 attack=None)
    if row is not None:
        entry["latest"] = dict(verdict=row.verdict, expected=row.expected,
                               as_expected=row.as_expected, profile=row.profile, seed=row.seed,
                               hypotheses=row.hypotheses, attack=row.attack,
                               worst_case=row.worst_case, reason=row.reason,
                               traceback=getattr(row, "traceback", "") or "")
    if attack_row is not None:
        entry["attack"] = dict(attack_row.attack, verdict=attack_row.verdict)
    return entry


def result_text(record: dict, origin: str, *, verbose: bool = False) -> list[str]:
    """The lines ``flbounds show <result id>`` prints (``verbose``: with the traceback of
    each claim that raised)."""
    paper = record["paper"]
    lines = [f"{record['id']}  {record['ref']}: {record['title']}  ({record['kind']})",
             f"paper       {paper['key']}: {paper['citation']}",
             f"declared    {record['where']}  ({record['module']})"]
    if record["statement"]:
        lines.append(f"statement   {record['statement']}")
    if record["not_checked"]:
        lines.append(f"not checked {record['not_checked']}")
    lines += ["", "parts"]
    width = max(len(p["id"]) for p in record["parts"])
    for p in record["parts"]:
        lines.append(f"  {p['id']:<{width}}  {p['text']}")
    lines += ["", "hypotheses" + ("" if record["hypotheses"] else "  (none)")]
    for h in record["hypotheses"]:
        lines.append(f"  {h['name']}: {h['wording']}")
        lines.append(f"      parts {', '.join(h['parts'])}; reads {', '.join(h['reads'])}")
    lines += ["", "printed bound" + ("" if record["bounds"] else "  (none registered)")]
    for b in record["bounds"]:
        names = " ".join(b["constants"]) + (" [step]" if b["step"] else "")
        lines.append(f"  {b['id']}  ({b['ref']}): {b['quantity']}")
        lines.append(f"      constants {names}; flbounds bound {b['id']} ...")
    lines += ["", f"claims per part (verdicts: {origin})"]
    for p in record["parts"]:
        lines.append(f"  {p['id']}")
        if not p["claims"]:
            why = p["unchecked"] or record["not_checked"] or "no claim and no reason given"
            lines.append(f"    not checked: {why}")
        for c in p["claims"]:
            lines += _claim_lines(c, verbose)
    return lines


def _claim_lines(c: dict, verbose: bool = False) -> list[str]:
    expected = c["expected"]
    if c["expected_full"] != expected:
        expected = f"{expected} (quick), {c['expected_full']} (full)"
    row = c["latest"]
    if row is None:
        verdict = "no result stored"
    else:
        mark = "as expected" if row["as_expected"] else f"UNEXPECTED, expected {row['expected']}"
        verdict = f"{row['verdict']} ({mark}; {row['profile']}, seed {row['seed']})"
    lines = [f"    {c['id']}  [{c['ref']}]", f"      expected {expected}; latest {verdict}"]
    for name, why in c["outside"].items():
        lines.append(f"      outside {name} on purpose: {why}")
    if row is not None:
        if row["hypotheses"]:  # by name: the wording is listed under "hypotheses" above
            lines.append("      hypotheses " + _hypotheses(
                {k.split(": ", 1)[0]: v for k, v in row["hypotheses"].items()}))
        if row["attack"]:
            lines.append(f"      attack     {_mapping(row['attack'])}")
        if row["worst_case"]:
            lines.append(f"      worst case {_mapping(row['worst_case'])}")
        if row["verdict"] != "holds" and row["reason"]:
            lines.append(f"      reason     {row['reason'].splitlines()[0]}")
        if row.get("traceback"):
            lines += (["      traceback"] + ["        " + t for t in
                                             row["traceback"].rstrip().splitlines()]
                      if verbose else ["      traceback  the claim raised: -v prints it"])
    if c["attack"]:
        lines.append(f"      attack run {_mapping(c['attack'])}")
    return lines
