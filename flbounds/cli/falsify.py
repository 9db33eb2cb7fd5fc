"""``flbounds falsify``: adversarial search for the worst instance of bound claims.

Each attacked claim X runs as the ledger task ``attack:X`` through the same runner, process
pool, Dask path and results store as ``flbounds check`` (so ``--resume`` works). The table
printed at the end gives, per claim, the ratio measured/bound on the claim's own fixed
instances, the attacked ratio, the evaluations and the time; ``--json`` writes one object per
claim that ``flbounds replay`` re-evaluates.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from flbounds.ledger import ResultStore, run_claims
from flbounds.ledger.api.registry import PROFILES, matches
from flbounds.ledger.engine.outputs import OutputError, output_file, output_folder, write_text

from ._common import (
    DEFAULT_RESULTS,
    RESULTS_HELP,
    SEED_HELP,
    WORKERS_HELP,
    UsageError,
    aligned,
    non_negative_int,
    positive_int,
    results_store,
    scheduler_client,
)

HELP = "adversarial search (CMA-ES) for instances that break bound claims"
EXAMPLES = """examples:
  flbounds falsify --list                      the attackable claims
  flbounds falsify focus.lemma4.rare_participation --budget 300
  flbounds falsify kvib --json attacks.json    a paper's attacks, witnesses as JSON
  flbounds replay attacks.json                 re-evaluate those witnesses"""
#: seconds between two live progress lines of one attack
PROGRESS_EVERY = 2.0


def add_arguments(p) -> None:
    p.add_argument("patterns", nargs="*", metavar="PATTERN",
                   help="claim ids, dotted prefixes (e.g. 'kvib') or globs; none: every "
                        "attacked claim")
    p.add_argument("--budget", type=positive_int, metavar="N",
                   help="evaluations per attack (default: each surface's --profile budget)")
    p.add_argument("--profile", choices=PROFILES, default="quick",
                   help="budget profile when --budget is not given")
    p.add_argument("--seed", type=non_negative_int, default=0, help=SEED_HELP)
    p.add_argument("--workers", type=positive_int, default=1, help=WORKERS_HELP)
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler, tcp://host:8786")
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS, metavar="DIR",
                   help=RESULTS_HELP)
    p.add_argument("--resume", action="store_true", help="skip attacks already in the store")
    p.add_argument("--json", type=Path, metavar="PATH",
                   help="write one object per claim (id, ratios, evaluations, witness)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--list", action="store_true",
                   help="list the attackable claims (matching PATTERN) and exit")


def select_surfaces(patterns) -> list[str]:
    """Claim ids with an attack surface matching ``patterns`` (usage error if one matches
    none)."""
    from flbounds.falsify import surfaces

    try:
        ids = list(surfaces())
    except ValueError as exc:    # a plugin's attack on an unknown claim id
        raise UsageError(str(exc)) from None
    for pattern in patterns:
        if not any(matches(cid, pattern) for cid in ids):
            raise UsageError(f"no attacked claim matches pattern {pattern!r} "
                             "(see 'flbounds falsify --list'; 'flbounds falsify' runs all)")
    return [cid for cid in ids if not patterns or any(matches(cid, p) for p in patterns)]


def run(args) -> int:
    from flbounds.falsify.task import PROGRESS, attack_task, budget_profile

    if args.list:
        return list_surfaces(*select_listed(args.patterns))
    ids = select_surfaces(args.patterns)
    try:    # every output path checked before any work (as for 'check')
        output_folder(args.results, "--results")
        results_store(args.results, write=True)
        json_target = output_file(args.json, "--json") if args.json is not None else None
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    tasks = [attack_task("attack:" + cid) for cid in ids]
    profile = budget_profile(args.budget) if args.budget else args.profile
    scheduler = scheduler_client(args.scheduler)
    live = not args.quiet and scheduler is None and args.workers == 1
    if live:
        PROGRESS.append(_LiveProgress())
    start = time.perf_counter()
    try:
        results = run_claims(tasks, profile=profile, seed=args.seed, workers=args.workers,
                             scheduler=scheduler, store=ResultStore(args.results),
                             resume=args.resume, progress=None if args.quiet else _progress)
    finally:
        if live:
            PROGRESS.pop()
        if scheduler is not None:
            scheduler.close()
    rows = [attack_row(r) for r in results]
    if json_target is not None:
        try:
            write_text(json_target, json.dumps(rows, indent=1))
        except OutputError as exc:
            raise UsageError(str(exc)) from None
    print_table(rows, time.perf_counter() - start)
    return 0 if all(r["verdict"] == r["expected"] for r in rows) else 1


def select_listed(patterns) -> tuple[list[str], dict[str, str]]:
    """For ``--list``: the attacked claims and the claims declared without an attack (id ->
    reason) matching ``patterns`` (usage error if a pattern matches neither)."""
    from flbounds.falsify import unattacked

    try:
        reasons = unattacked()
    except ValueError as exc:    # a no_attack declaration on an unknown or attacked claim
        raise UsageError(str(exc)) from None
    ids = select_surfaces([p for p in patterns
                           if not any(matches(cid, p) for cid in reasons)])
    if patterns:
        ids = [cid for cid in ids if any(matches(cid, p) for p in patterns)]
        reasons = {cid: why for cid, why in reasons.items()
                   if any(matches(cid, p) for p in patterns)}
    return ids, reasons


def list_surfaces(ids: list[str], reasons: dict[str, str] | None = None) -> int:
    """The attackable claims (id, expected verdict of the attack, budgets, search method),
    then the bound claims declared without an attack, each with its reason."""
    from flbounds.falsify import get_surface
    from flbounds.ledger import get

    rows = []
    for cid in ids:
        surface = get_surface(cid)
        rows.append((cid, surface.expected or get(cid).expected, surface.budget["quick"],
                     surface.budget["full"], surface.method))
    print("\n".join(aligned(("attackable claim", "expected", "budget quick", "budget full",
                             "method"), rows, right=(2, 3))))
    without = ""
    if reasons:
        print("\nno attack: reason")
        for cid, why in reasons.items():
            print(f"  {cid}: {why}")
        without = f"{len(reasons)} bound claims without an attack (reasons above); "
    print(f"{without}{len(rows)} attackable claims; 'flbounds falsify ID' attacks one")
    return 0


class _LiveProgress:
    """Prints 'attack: evaluations, best ratio so far' at most every PROGRESS_EVERY s."""

    def __init__(self):
        self.last = 0.0

    def __call__(self, task_id: str, evaluations: int, best: float) -> None:
        now = time.perf_counter()
        if now - self.last >= PROGRESS_EVERY:
            self.last = now
            print(f"  {task_id}: {evaluations} evaluations, best ratio {best:.6g}",
                  file=sys.stderr, flush=True)


def _progress(done: int, total: int, result, elapsed: float) -> None:
    a = result.attack or {}
    flag = "" if result.as_expected else f"  UNEXPECTED (expected {result.expected})"
    print(f"[{done:>{len(str(total))}}/{total}] {result.verdict:<9} {result.id} "
          f"best {a.get('best_ratio', float('nan')):.6g} after {a.get('evaluations', 0)} "
          f"evaluations ({result.elapsed_s:.1f}s){flag}", file=sys.stderr, flush=True)


def attack_row(result) -> dict:
    """The ``--json`` object of one attack result (``id`` is the attacked claim's id)."""
    a = result.attack or {}
    row = {"id": result.id.removeprefix("attack:"), "task": result.id,
           "verdict": result.verdict, "expected": result.expected,
           "best_ratio": a.get("best_ratio"), "fixed_ratio": a.get("fixed_ratio"),
           "evaluations": a.get("evaluations"), "rejected": a.get("rejected"),
           "witness": a.get("witness"), "threshold": a.get("threshold"),
           "tight": a.get("tight"), "pep_ratio": a.get("pep_ratio"), "seed": result.seed,
           "profile": result.profile, "elapsed_s": result.elapsed_s,
           "reproducer": result.reproducer, "reason": result.reason}
    for key in ("minimal_witness", "minimal_ratio"):
        if key in a:
            row[key] = a[key]
    return row


def _num(x) -> str:
    return "-" if x is None or isinstance(x, str) else f"{x:.6g}"


def print_table(rows: list[dict], elapsed: float) -> None:
    """Claim, verdict, fixed ratio, attacked ratio, evaluations, seconds (Markdown)."""
    print("| claim | verdict (expected) | fixed ratio | attacked ratio | evaluations | s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        mark = "" if r["verdict"] == r["expected"] else " UNEXPECTED"
        print(f"| {r['id']} | {r['verdict']} ({r['expected']}){mark} | "
              f"{_num(r['fixed_ratio'])} | {_num(r['best_ratio'])} | "
              f"{r['evaluations'] or '-'} | {r['elapsed_s']:.1f} |")
    bad = sum(r["verdict"] != r["expected"] for r in rows)
    print(f"{len(rows)} attacks in {elapsed:.1f}s; {len(rows) - bad} as expected, "
          f"{bad} unexpected")
