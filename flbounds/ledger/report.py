"""Reports: a Markdown ledger and one self-contained HTML page with the figures embedded."""

from __future__ import annotations

import base64
import html
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from .registry import PAPERS
from .result import VERDICTS, CheckResult


def fmt(value, digits: int = 4) -> str:
    """Short human form of a measured/theoretical value (scalar, interval or array)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return f"{value:.{digits}g}"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        flat = _flatten(value)
        if len(flat) <= 4:
            return "[" + ", ".join(fmt(v, digits) for v in flat) + "]"
        nums = [v for v in flat if isinstance(v, int | float)]
        if nums:
            return f"{len(flat)} values in [{min(nums):.{digits}g}, {max(nums):.{digits}g}]"
    return str(value)


def _flatten(values) -> list:
    out = []
    for v in values:
        out.extend(_flatten(v) if isinstance(v, list) else [v])
    return out


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
    lines = ["# flbounds ledger", ""]
    lines += _summary_markdown(results)
    for key, rows in by_paper(results).items():
        lines += ["", f"## {key}: {PAPERS.get(key, ('', key))[1]}", "",
                  "| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
        for r in rows:
            cells = [c.replace("|", "\\|").replace("\n", " ") for c in _row(r)]
            lines.append("| " + " | ".join(cells) + " |")
        notes = [r for r in rows if r.reason]
        if notes:
            lines += [""] + [f"- `{r.id}` ({r.verdict}): {r.reason}" for r in notes]
    return "\n".join(lines) + "\n"


def _summary_markdown(results) -> list[str]:
    counts = summary_counts(results)
    head = "| paper | " + " | ".join(VERDICTS) + " | as expected |"
    lines = [head, "|" + "---|" * (len(VERDICTS) + 2)]
    for key, c in counts.items():
        ok = sum(r.as_expected for r in results if r.id.split(".", 1)[0] == key)
        total = sum(c.values())
        lines.append(f"| {key} | " + " | ".join(str(c.get(v, 0)) for v in VERDICTS)
                     + f" | {ok}/{total} |")
    return lines


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:110em}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}
td,th{border:1px solid #ccc;padding:.3em .5em;vertical-align:top}
th{background:#f0f0f0}
.holds{background:#e6f5e6}.violated{background:#fde8d8}
.not-applicable{background:#eef}.error{background:#f8c0c0}
.unexpected{outline:3px solid #c00}
code{font-size:.85em}
figure{display:inline-block;margin:1em;max-width:45%}
figure img{max-width:100%}
"""


def html_page(results: list[CheckResult], figures: list[Path] = ()) -> str:
    """A single self-contained page: summary, one table per paper, figures as data URIs."""
    esc = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>flbounds ledger</title>",
             f"<style>{_CSS}</style></head><body><h1>flbounds ledger</h1>", "<h2>Summary</h2>"]
    parts.append("<table><tr><th>paper</th>" + "".join(f"<th>{v}</th>" for v in VERDICTS)
                 + "<th>as expected</th></tr>")
    for key, c in summary_counts(results).items():
        ok = sum(r.as_expected for r in results if r.id.split(".", 1)[0] == key)
        parts.append(f"<tr><td>{esc(key)}</td>" + "".join(f"<td>{c.get(v, 0)}</td>"
                                                          for v in VERDICTS)
                     + f"<td>{ok}/{sum(c.values())}</td></tr>")
    parts.append("</table>")
    for key, rows in by_paper(results).items():
        parts.append(f"<h2>{esc(key)}: {esc(PAPERS.get(key, ('', key))[1])}</h2><table><tr>"
                     + "".join(f"<th>{c}</th>" for c in _COLUMNS) + "</tr>")
        for r in rows:
            cls = r.verdict + ("" if r.as_expected else " unexpected")
            cells = _row(r)
            cells[-1] = f"<code>{esc(r.reproducer)}</code>"
            tds = "".join(f"<td>{c if i == len(cells) - 1 else esc(c)}</td>"
                          for i, c in enumerate(cells))
            title = esc(r.reason or r.tolerance.get("derivation", "") if r.tolerance else "")
            parts.append(f"<tr class='{cls}' title='{title}'>{tds}</tr>")
        parts.append("</table>")
    if figures:
        parts.append("<h2>Figures</h2>")
        for path in figures:
            data = base64.b64encode(Path(path).read_bytes()).decode()
            parts.append(f"<figure><img alt='{esc(path.stem)}' src='data:image/png;base64,"
                         f"{data}'><figcaption>{esc(path.stem)}</figcaption></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


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
