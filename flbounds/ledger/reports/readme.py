"""The README's generated numbers: claim counts per paper and per expected verdict.

``python -m flbounds.ledger.reports.readme`` rewrites the block between the markers below in
``README.md`` from the registry; ``--check`` only reports (exit 1) when the block is stale.
A test runs the check, so a claim added without regenerating the README fails the suite.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..api.registry import EXPECTED, EXPECTED_REPRODUCTION, PAPERS, load_all

BEGIN = "<!-- begin generated: python -m flbounds.ledger.reports.readme -->"
END = "<!-- end generated -->"


def counts_block() -> str:
    """Markdown table: claims per paper, split by the verdict the toolkit expects."""
    claims = list(load_all().values())
    present = {c.expected for c in claims}
    shown = [v for v in dict.fromkeys(EXPECTED + EXPECTED_REPRODUCTION)
             if v in ("holds", "violated", "not-applicable") or v in present]
    head = ["paper", "claims", *(f"expected {v}" for v in shown)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in PAPERS:
        group = [c for c in claims if c.paper_key == key]
        cells = [f"`{key}`", str(len(group)),
                 *(str(sum(c.expected == v for c in group)) for v in shown)]
        lines.append("| " + " | ".join(cells) + " |")
    total = ["**total**", f"**{len(claims)}**",
             *(f"**{sum(c.expected == v for c in claims)}**" for v in shown)]
    lines.append("| " + " | ".join(total) + " |")
    return "\n".join(lines)


def render(text: str) -> str:
    """``text`` with the generated block replaced by a fresh one."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"README has no generated block ({BEGIN} ... {END})")
    return text[:start] + BEGIN + "\n" + counts_block() + "\n" + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=Path("README.md"))
    parser.add_argument("--check", action="store_true", help="exit 1 if the block is stale")
    args = parser.parse_args(argv)
    if not args.path.is_file():
        parser.error(f"path: {str(args.path)!r} is not a file")
    text = args.path.read_text(encoding="utf-8")
    try:
        fresh = render(text)
    except ValueError as exc:
        parser.error(str(exc))
    if fresh == text:
        return 0
    if args.check:
        print(f"{args.path}: generated block is stale; run "
              "python -m flbounds.ledger.reports.readme", file=sys.stderr)
        return 1
    args.path.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
