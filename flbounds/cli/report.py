"""``flbounds report``: the Markdown and HTML ledger from stored results, and the findings
page beside it (``findings.md``, ``findings.html``: :mod:`flbounds.ledger.reports.findings`).

The report shows one (profile, seed): the latest complete run's unless ``--profile`` /
``--seed`` choose another, and says which, with the code versions its rows come from.
"""

from __future__ import annotations

import html
from pathlib import Path

from flbounds.ledger.api.registry import PROFILES
from flbounds.ledger.engine.outputs import OutputError, output_file, output_folder, write_text
from flbounds.ledger.reports import findings_render
from flbounds.ledger.reports.findings import collect
from flbounds.ledger.reports.provenance import select_rows
from flbounds.ledger.reports.report import html_page, markdown

from ._common import DEFAULT_RESULTS, RESULTS_HELP, UsageError, non_negative_int, results_store

HELP = "Markdown + HTML ledger and findings page from stored results"
EXAMPLES = """examples:
  flbounds report                             ledger and findings pages in flbounds-results
  flbounds report --out site/ledger           elsewhere (missing folders are made)
  flbounds report --profile full --seed 0     the rows of another run"""


def add_arguments(p) -> None:
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS, metavar="DIR",
                   help=RESULTS_HELP)
    p.add_argument("--out", type=Path, metavar="DIR", help="default: the results directory")
    p.add_argument("--profile", choices=PROFILES, help="default: the latest complete run's")
    p.add_argument("--seed", type=non_negative_int, help="default: the latest complete run's")


def run(args) -> int:
    out_dir = args.out or args.results
    try:
        output_folder(out_dir, "--out")
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    store = results_store(args.results)
    if not (store.path.exists() or store.legacy_path.exists()):
        raise UsageError(f"no results in {str(args.results)!r}: run 'flbounds check' first")
    try:
        chosen = select_rows(store.records(), store.runs(), profile=args.profile,
                             seed=args.seed)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    figure_dir = args.results / "figures"
    pngs = sorted(figure_dir.glob("*.png")) if figure_dir.is_dir() else []
    md_path, html_path = _write(chosen, Path(out_dir), pngs)
    found_md, found_html = _write_findings(chosen, Path(out_dir))
    for line in chosen.lines:
        print(line)
    n_attacks = sum(r.id.startswith("attack:") for r in chosen.results)
    attacks = f", {n_attacks} attacks" if n_attacks else ""
    print(f"wrote {md_path} and {html_path} ({len(chosen.results) - n_attacks} claims"
          f"{attacks}, {len(pngs)} figures)")
    print(f"wrote {found_md} and {found_html} (what fails and by how much, per paper)")
    return 0


def _write_findings(chosen, out_dir: Path) -> tuple[Path, Path]:
    """``findings.md`` and ``findings.html`` beside the ledger (claim ids link into it)."""
    found = collect(chosen.results, provenance=chosen.lines)
    md_path, html_path = out_dir / "findings.md", out_dir / "findings.html"
    try:
        write_text(output_file(md_path, "--out"), findings_render.markdown(found))
        write_text(output_file(html_path, "--out"), findings_render.html(found))
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    return md_path, html_path


def _write(chosen, out_dir: Path, pngs) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    md_path, html_path = out_dir / "ledger.md", out_dir / "ledger.html"
    md = _after_first(markdown(chosen.results), "\n",
                      "\n" + "".join(f"{line}\n" for line in chosen.lines))
    block = "<p class='provenance'>" + "<br>".join(html.escape(x) for x in chosen.lines) \
        + "</p>"
    page = html_page(chosen.results, pngs, findings="findings.html")
    page = _after_first(page, "</h1>", block) if "</h1>" in page \
        else _after_first(page, "<body>", block)
    try:
        write_text(output_file(md_path, "--out"), md)
        write_text(output_file(html_path, "--out"), page)
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    return md_path, html_path


def _after_first(text: str, marker: str, insert: str) -> str:
    """``text`` with ``insert`` placed after the first ``marker`` (at the start if none)."""
    head, found, tail = text.partition(marker)
    return head + found + insert + tail if found else insert + text
