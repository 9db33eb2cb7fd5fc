"""The findings (:mod:`.findings`) as terminal text, Markdown and one self-contained HTML page.

Every claim id links to its row in the ledger page beside it (``ledger.html#<claim id>``); a
printed statement and its corrected statement link to each other.
"""

from __future__ import annotations

import json
import re
import textwrap
from functools import cache

from markupsafe import Markup

from .findings import Entry, Findings, PaperFindings
from .format import fmt
from .margins import SEARCH_WITNESS, WITNESS_KEYS

__all__ = ["compact", "html", "markdown", "paper_markdown", "text"]

#: longest counterexample shown inline (characters); the ledger's panel has the rest
MAX_WITNESS = 320
INTRO = ("Per paper: each printed statement that fails and by how much (measured / printed "
         "for an inequality with a positive printed side, else the excess, at the worst "
         "component), its smallest counterexample, the corrected statement and its verdict; "
         "the tightness of what holds; the authors' code defects the toolkit reproduces; and "
         "the re-runs of empirical tables and figures on synthetic stand-ins, which are never "
         "paper errors.")
RERUN_NOTE = ("Re-runs of the paper's empirical tables and figures on synthetic stand-ins "
              "(not the paper's data): not reproducing an effect here is not a paper error.")


def compact(value, limit: int = MAX_WITNESS) -> str:
    """A short one-line form of a counterexample value (floats to 6 digits, cut at
    ``limit`` characters)."""
    text = json.dumps(_rounded(value), separators=(", ", ": "), default=str)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _rounded(value):
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


def witness_items(e: Entry) -> tuple[str, list[tuple[str, str]]]:
    """``("counterexample", ...)`` when the row names its witness, else ``("details",
    ...)`` (its scalar details stand in), with each value in :func:`compact` form."""
    named = set(e.counterexample) <= {*WITNESS_KEYS, SEARCH_WITNESS}
    items = [(k, compact(v)) for k, v in e.counterexample.items()]
    return ("counterexample" if named else "details"), items


def verdict_words(e: Entry) -> str:
    """``violated (as expected)``, ``holds (UNEXPECTED: expected violated)`` or, without a
    stored row, ``expected violated``."""
    if not e.verdict:
        return f"expected {e.expected}"
    if e.as_expected:
        return f"{e.verdict} (as expected)"
    return f"{e.verdict} (UNEXPECTED: expected {e.expected})"


def summary_line(p: PaperFindings) -> str:
    """One sentence of counts for a paper."""
    n_corr = sum(len(f.corrections) for f in p.failures) + len(p.corrections)
    n_fail = len(p.failures)
    parts = [f"{n_fail} printed statement{_s(n_fail)} fail{_verb_s(n_fail)}",
             f"{p.corrected_hold} of {n_corr} corrected statement{_s(n_corr)} "
             f"hold{_verb_s(p.corrected_hold)}",
             f"{len(p.code_defects)} code defect{_s(len(p.code_defects))} reproduced",
             f"{p.not_reproduced} of {len(p.reproductions)} synthetic re-run"
             f"{_s(len(p.reproductions))} not reproduced"]
    line = "; ".join(parts) + "."
    if p.unexpected:
        line += f" Unexpected verdicts: {', '.join(p.unexpected)}."
    return line


def holds_line(p: PaperFindings) -> str:
    """How many printed statements hold, and how many of them record no tightness ratio."""
    n = len(p.holds)
    if p.holds and not any(e.verdict for e in p.holds):
        return f"{n} printed statement{_s(n)} expected to hold (ratios need a run)."
    rest = sum(e.tightness is None for e in p.holds)
    tail = f"; {rest} of them record no ratio to a printed bound" if 0 < rest < n else ""
    return f"{n} printed statement{_s(n)} hold{_verb_s(n)}{tail}."


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _verb_s(n: int) -> str:
    return "s" if n == 1 else ""


# ----- text and Markdown ------------------------------------------------------------------

class _Style:
    def __init__(self, md: bool, ledger: str, shift: int = 0):
        self.md, self.ledger, self.shift = md, ledger, shift

    def heading(self, level: int, title: str) -> list[str]:
        level += self.shift
        if self.md:
            return ["#" * level + " " + title, ""]
        rule = "=" if level <= 2 else "-"
        return [title, rule * min(len(title), 88), ""]

    def code(self, value: str) -> str:
        return f"`{value}`" if self.md else value

    def claim(self, claim_id: str) -> str:
        if self.md and self.ledger:
            return f"[`{claim_id}`]({self.ledger}#{claim_id})"
        return self.code(claim_id)

    def bullet(self, depth: int = 0) -> str:
        return "  " * depth + ("- " if self.md else "* " if depth == 0 else "- ")


def text(findings: Findings, width: int = 100) -> str:
    """The findings as plain terminal text, lines wrapped at ``width`` columns (bullets keep
    their indentation)."""
    out = []
    for line in _render(findings, _Style(md=False, ledger="")).splitlines():
        bullet = re.match(r"\s*[*-] ", line)
        indent = " " * (bullet.end() if bullet else 0)
        out += textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False,
                             break_on_hyphens=False) or [""]
    return "\n".join(out) + "\n"


def markdown(findings: Findings, ledger: str = "ledger.html") -> str:
    """The findings as Markdown; claim ids link to ``ledger#<id>`` ('' for no links)."""
    return _render(findings, _Style(md=True, ledger=ledger))


def paper_markdown(p: PaperFindings, ledger: str = "", level: int = 2) -> str:
    """One paper's findings as Markdown sections (what fails, corrections, what holds, code,
    re-runs) headed at ``level``, without the paper's own heading and citation: what a
    paper's documentation page includes."""
    lines = _paper_lines(p, _Style(md=True, ledger=ledger, shift=level - 3))
    body = lines[lines.index(f"Paper key `{p.key}`. {summary_line(p)}") + 1:]
    return "\n".join([summary_line(p), *body]).rstrip() + "\n"


def _render(findings: Findings, st: _Style) -> str:
    lines = st.heading(1, "flbounds findings") + list(findings.provenance) + ["", INTRO, ""]
    for p in findings.papers:
        lines += _paper_lines(p, st)
    return "\n".join(lines).rstrip() + "\n"


def _paper_lines(p: PaperFindings, st: _Style) -> list[str]:
    lines = st.heading(2, f"{p.short}: {p.title}")
    lines += [p.citation if not st.md else _md_citation(p), "",
              f"Paper key {st.code(p.key)}. {summary_line(p)}", ""]
    if p.failures:
        lines += st.heading(3, "Printed statements that fail")
        for f in p.failures:
            lines += _entry_lines(f.printed, st, 0)
            for c in f.corrections:
                lines.append(st.bullet(1) + f"corrected by {st.claim(c.id)} ({c.ref}): "
                             f"{verdict_words(c)}: {c.statement}")
                if c.tightness is not None:
                    lines.append(st.bullet(2) + f"tightness: {c.tightness.text}")
        lines.append("")
    if p.corrections:
        lines += st.heading(3, "Corrected statements")
        for c in p.corrections:
            lines += _entry_lines(c, st, 0)
        lines.append("")
    lines += st.heading(3, "What holds, and how tight")
    rated = [e for e in p.holds if e.tightness is not None]
    for e in rated:
        link = f"; corrected by {', '.join(st.claim(i) for i in e.corrected_by)}" \
            if e.corrected_by else ""
        lines.append(st.bullet() + f"{st.claim(e.id)} ({e.ref}): {e.tightness.text}{link}")
    lines += ([""] if rated else []) + [holds_line(p), ""]
    if p.code_defects:
        lines += st.heading(3, "The authors' code: defects reproduced")
        for e in p.code_defects:
            lines += _entry_lines(e, st, 0)
        lines.append("")
    if p.reproductions:
        lines += st.heading(3, "Synthetic re-runs of empirical results")
        lines += [RERUN_NOTE, ""]
        for e in p.reproductions:
            lines.append(st.bullet() + f"{st.claim(e.id)} ({e.ref}): {verdict_words(e)}: "
                         f"{e.statement}")
            if e.reason and e.verdict != "reproduced":
                lines.append(st.bullet(1) + f"why: {e.reason}")
        lines.append("")
    return lines


def _md_citation(p: PaperFindings) -> str:
    return p.citation.replace(p.title, f"*{p.title}*", 1) if p.title else p.citation


def _entry_lines(e: Entry, st: _Style, depth: int) -> list[str]:
    lines = [st.bullet(depth) + f"{st.claim(e.id)} ({e.ref}; {e.kind}): {e.statement}",
             st.bullet(depth + 1) + f"verdict: {verdict_words(e)}"]
    if e.corrects:
        lines.append(st.bullet(depth + 1) + f"corrects the printed statement "
                                            f"{st.claim(e.corrects)}")
    if e.margin is not None:
        lines.append(st.bullet(depth + 1) + f"by how much: {e.margin.text}")
    elif e.verdict in ("violated",) and e.reason:
        lines.append(st.bullet(depth + 1) + f"why: {e.reason}")
    if e.counterexample:
        label, items = witness_items(e)
        shown = "; ".join(f"{name} = " + (st.code(v) if st.md and "`" not in v else v)
                          for name, v in items)
        lines.append(st.bullet(depth + 1) + f"{label}: {shown}")
    if e.tightness is not None:
        lines.append(st.bullet(depth + 1) + f"tightness: {e.tightness.text}")
    if e.verdict and e.reproducer:
        lines.append(st.bullet(depth + 1) + f"reproduce: {st.code(e.reproducer)}")
    return lines


# ----- HTML -------------------------------------------------------------------------------

def html(findings: Findings, ledger: str = "ledger.html") -> str:
    """The findings as one self-contained HTML page (inline CSS, no script)."""
    return _environment().get_template("findings.html.j2").render(
        findings=findings, intro=INTRO, rerun_note=RERUN_NOTE, ledger=ledger,
        summary_line=summary_line, holds_line=holds_line, verdict_words=verdict_words,
        witness_items=witness_items, compact=compact, fmt=fmt,
        css=Markup(_css()))


@cache
def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    return Environment(loader=PackageLoader("flbounds.ledger.reports", "templates"),
                       autoescape=select_autoescape(["html", "j2"]), undefined=StrictUndefined,
                       trim_blocks=True, lstrip_blocks=True)


@cache
def _css() -> str:
    from importlib.resources import files

    return (files("flbounds.ledger.reports") / "templates" / "findings.css").read_text(
        encoding="utf-8")
