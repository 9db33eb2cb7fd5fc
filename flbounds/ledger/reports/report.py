"""Reports: a Markdown ledger and one self-contained HTML page with the figures embedded."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from markupsafe import Markup

from ..api.registry import PAPERS
from ..api.result import VERDICTS, CheckResult, shown_verdicts
from .format import fmt
from .report_data import load_figure, payload, script_json, split_attacks


def by_paper(results: Iterable[CheckResult]) -> dict[str, list[CheckResult]]:
    groups: dict[str, list[CheckResult]] = {key: [] for key in PAPERS}
    for r in results:
        groups.setdefault(r.id.split(".", 1)[0], []).append(r)
    return {k: sorted(v, key=lambda r: r.id) for k, v in groups.items() if v}


def summary_counts(results: Iterable[CheckResult]) -> dict[str, Counter]:
    return {k: Counter(r.verdict for r in rs) for k, rs in by_paper(results).items()}


_COLUMNS = ("id", "ref", "kind", "statement", "measured", "relation", "theoretical", "verdict",
            "expected", "reproducer")


def _row(r: CheckResult) -> list[str]:
    mark = "" if r.as_expected else " (UNEXPECTED)"
    return [r.id, r.ref, r.kind, r.statement, fmt(r.measured), r.relation or "—",
            fmt(r.theoretical), r.verdict + mark, r.expected, f"`{r.reproducer}`"]


def markdown(results: list[CheckResult]) -> str:
    """One table per paper plus a summary of verdicts."""
    results, attacks = split_attacks(results)
    lines = ["# flbounds ledger", ""]
    lines += _summary_markdown(results)
    for key, rows in by_paper(results).items():
        declared = PAPERS.get(key)
        cite = [declared.citation, ""] if declared is not None else []
        lines += ["", f"## {key}: {PAPERS.get(key, ('', key))[1]}", "", *cite,
                  "| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
        for r in rows:
            cells = [c.replace("|", "\\|").replace("\n", " ") for c in _row(r)]
            lines.append("| " + " | ".join(cells) + " |")
        notes = [note for r in rows for note in _notes(r, attacks.get(r.id))]
        if notes:
            lines += [""] + notes
    return "\n".join(lines) + "\n"


def _notes(r: CheckResult, attack: dict | None) -> list[str]:
    """Markdown bullets for a row's reason and its optional hypotheses / attack / worst case."""
    notes = [f"- `{r.id}` ({r.verdict}): {r.reason}"] if r.reason else []
    extra = {"hypotheses": getattr(r, "hypotheses", None),
             "attack": getattr(r, "attack", None) or attack,
             "worst case": getattr(r, "worst_case", None)}
    for label, value in extra.items():
        if value:
            text = "; ".join(f"{k}: {fmt(v) if not isinstance(v, dict) else v}"
                             for k, v in value.items())
            notes.append(f"- `{r.id}` {label}: {text}")
    return notes


def _summary_markdown(results) -> list[str]:
    counts = summary_counts(results)
    shown = shown_verdicts(results)
    head = "| paper | " + " | ".join(shown) + " | as expected |"
    lines = [head, "|" + "---|" * (len(shown) + 2)]
    for key, c in counts.items():
        ok = sum(r.as_expected for r in results if r.id.split(".", 1)[0] == key)
        total = sum(c.values())
        lines.append(f"| {key} | " + " | ".join(str(c.get(v, 0)) for v in shown)
                     + f" | {ok}/{total} |")
    return lines


def html_page(results: list[CheckResult], figures: list[Path] = (),
              findings: str = "") -> str:
    """The ledger as one self-contained page (inline CSS and JavaScript, figures as data URIs);
    ``findings``: the address of the findings page beside it, linked from the header ('' for
    none).

    The template ``templates/ledger.html.j2`` renders the summary and the gallery; the table
    and the per-claim panels are drawn in the browser from an embedded JSON blob
    (:func:`~flbounds.ledger.reports.report_data.payload`), so the page stays responsive with
    thousands of rows.
    """
    loaded = [load_figure(Path(p)) for p in figures]
    data = payload(results, loaded)
    claims, _ = split_attacks(results)
    return _environment().get_template("ledger.html.j2").render(
        summary=_summary_rows(claims), verdicts=shown_verdicts(claims), figures=loaded,
        data_json=Markup(script_json(data)), n_claims=len(claims),
        n_unexpected=sum(not r.as_expected for r in claims), findings=findings)


@cache
def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    return Environment(loader=PackageLoader("flbounds.ledger.reports", "templates"),
                       autoescape=select_autoescape(["html", "j2"]), undefined=StrictUndefined,
                       trim_blocks=True, lstrip_blocks=True)


def _summary_rows(claims) -> list[dict]:
    rows = []
    for key, group in by_paper(claims).items():
        declared = PAPERS.get(key)
        rows.append({"paper": key, "title": PAPERS.get(key, ("", key))[1],
                     "citation": declared.plain_citation if declared is not None else "",
                     "counts": {v: sum(r.verdict == v for r in group) for v in VERDICTS},
                     "total": len(group), "ok": sum(r.as_expected for r in group)})
    return rows


def write_reports(results: list[CheckResult], out_dir: Path,
                  figures: list[Path] = ()) -> tuple[Path, Path]:
    """Write ``ledger.md`` and ``ledger.html`` into ``out_dir``; return their paths."""
    out_dir = Path(out_dir)
    md_text = markdown(results)
    html_text = html_page(results, list(figures))
    out_dir.mkdir(parents=True, exist_ok=True)
    md_path, html_path = out_dir / "ledger.md", out_dir / "ledger.html"
    md_path.write_text(md_text, encoding="utf-8")
    html_path.write_text(html_text, encoding="utf-8")
    return md_path, html_path
