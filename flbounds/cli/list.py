"""``flbounds list [PATTERN ...]``: claims with id, paper, reference and expected verdict."""

from __future__ import annotations

from ._common import select_claims

HELP = "list claims: id, paper, ref, expected verdict"


def add_arguments(p) -> None:
    p.add_argument("patterns", nargs="*", metavar="PATTERN")


def run(args) -> int:
    claims = select_claims(args.patterns)
    width = max(len(c.id) for c in claims)
    for c in claims:
        full = "" if c.expected_full in (None, c.expected) else f" (full: {c.expected_full})"
        print(f"{c.id:<{width}}  {c.paper}  {c.ref:<36}  {c.expected}{full}")
    return 0
