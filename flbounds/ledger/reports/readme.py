"""The README's generated tables: what the toolkit finds per paper, and the claim counts per
paper and per expected verdict.

``python -m flbounds.ledger.reports.readme`` rewrites the blocks between the markers below in
``README.md`` from the registry; ``--check`` only reports (exit 1) when a block is stale.
A test runs the check, so a claim added without regenerating the README fails the suite.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..api.registry import EXPECTED, EXPECTED_REPRODUCTION, PAPERS, load_all
from .findings import Findings, collect

BEGIN = "<!-- begin generated: python -m flbounds.ledger.reports.readme -->"
END = "<!-- end generated -->"
FINDINGS_BEGIN = "<!-- begin generated findings: python -m flbounds.ledger.reports.readme -->"
FINDINGS_END = "<!-- end generated findings -->"
#: where a reader of the repository finds each paper's results (the docs site has a page per
#: paper too, generated at build time by docs/_ext/paper_pages.py)
PAPER_PAGE = "verify/{key}/"


def findings_block(found: Findings | None = None) -> str:
    """Markdown table, one row per paper: its citation (short form, title, arXiv id) and, by
    the verdicts the toolkit expects, how many printed statements fail, how many corrected
    statements hold, the authors' code defects reproduced and the synthetic re-runs not
    reproduced; the paper key links to its results in the repository (``verify/<key>/``).

    Parameters
    ----------
    found
        Findings to tabulate (default: :func:`~flbounds.ledger.reports.findings.collect`
        of the registry, every declared paper).

    Returns
    -------
    str
        The table, without the markers.
    """
    found = collect() if found is None else found
    head = ["paper", "citation", "printed statements that fail",
            "corrected statements that hold", "authors' code defects",
            "re-runs not reproduced"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in found.papers:
        where = f", arXiv:{p.arxiv}" if p.arxiv else ""
        cells = [f"[`{p.key}`]({PAPER_PAGE.format(key=p.key)})",
                 f"{p.short}: *{p.title}*{where}", str(len(p.failures)),
                 str(p.corrected_hold), str(len(p.code_defects)), str(p.not_reproduced)]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


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
    """``text`` with the generated blocks (counts, findings) replaced by fresh ones."""
    text = _replace_block(text, BEGIN, END, counts_block)
    return _replace_block(text, FINDINGS_BEGIN, FINDINGS_END, findings_block)


def _replace_block(text: str, begin: str, end: str, block) -> str:
    start = text.find(begin)
    stop = text.find(end, start + len(begin)) if start >= 0 else -1
    if start < 0 or stop < 0:
        raise ValueError(f"README has no generated block ({begin} ... {end})")
    return text[:start] + begin + "\n" + block() + "\n" + text[stop:]


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
