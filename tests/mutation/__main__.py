"""``python -m tests.mutation``: run the planted bugs against the claims, print kill rates."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from . import report
from .harness import PAPERS, ROOT, run_mutant, select


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tests.mutation", description=__doc__)
    p.add_argument("--paper", choices=PAPERS, help="only mutants affecting this paper, "
                   "run against this paper's claims only")
    p.add_argument("--only", metavar="ID",
                   help="mutant ids, dotted prefixes or globs, comma-separated")
    p.add_argument("--workers", type=int, default=1, help="workers of each claim run")
    p.add_argument("--list", action="store_true", help="list the mutants and exit")
    p.add_argument("--json", metavar="PATH", help="write the outcomes as JSON")
    p.add_argument("--markdown", metavar="PATH", help="write the full Markdown report")
    p.add_argument("--merge", nargs="+", metavar="JSON",
                   help="no run: merge earlier --json outputs and report them")
    p.add_argument("--readme", action="store_true",
                   help="with --merge: update the README's mutation section")
    p.add_argument("--resume", action="store_true",
                   help="with --json: keep its outcomes and run only the missing ones")
    p.add_argument("--retry-survivors", action="store_true",
                   help="with --resume: run the surviving mutants again")
    p.add_argument("--all-claims", action="store_true", help="run every claim of the paper "
                   "even when the cheap first stage already killed the mutant")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per claim run")
    return p


def _list(mutants) -> int:
    for m in mutants:
        print(f"{m.id:40s} {','.join(m.papers):22s} {m.path}")
        print(f"    {m.models}")
    return 0


def _run(args, mutants) -> list:
    outcomes = report.load([args.json]) if args.resume and Path(args.json).exists() else []
    if args.retry_survivors:  # e.g. after adding a claim: run the survivors again
        outcomes = [o for o in outcomes if o.status != "survived"]
    done = {(o.mutant, o.paper) for o in outcomes}
    with tempfile.TemporaryDirectory(prefix="flbounds-mutation-") as tmp:
        for m in mutants:
            for paper in ([args.paper] if args.paper else m.papers):
                if (m.id, paper) in done:
                    continue
                o = run_mutant(m, paper, Path(tmp), workers=args.workers, timeout=args.timeout,
                               staged=not args.all_claims)
                outcomes.append(o)
                if args.json:
                    report.dump(outcomes, args.json)  # after every mutant: nothing is lost
                shown = ", ".join(o.killers[:4] or o.crashes[:4])
                print(f"{o.status:9s} {m.id:40s} {paper:9s} {shown}", flush=True)
    return outcomes


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.workers < 1:
        print("error: --workers must be >= 1", file=sys.stderr)
        return 2
    if args.resume and not args.json:
        print("error: --resume needs --json", file=sys.stderr)
        return 2
    if args.readme and not args.merge:
        print("error: --readme needs --merge", file=sys.stderr)
        return 2
    try:
        mutants = select(args.paper, args.only)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.list:
        return _list(mutants)
    outcomes = report.load(args.merge) if args.merge else _run(args, mutants)
    print(report.rate_table(outcomes))
    print("\nSurvivors:\n" + report.survivors(outcomes))
    if args.json:
        report.dump(outcomes, args.json)
    if args.markdown:
        Path(args.markdown).write_text(report.markdown(outcomes))
    if args.readme:
        report.update_readme(ROOT / "README.md", report.readme_section(outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
