"""Generate one page per paper from the declared results and claims (``docs/papers/``).

At ``builder-inited`` the claim plugins are loaded and, for every declared paper, a Markdown
page is written: the citation, the paper's findings (what fails and by how much, the
corrected statements, what holds and how tight, the authors' code defects, the synthetic
re-runs: :mod:`flbounds.ledger.reports.findings`), then every numbered result in the order
it was declared, with its parts (and the claims attached to each, or why none is), its
hypotheses and its printed bounds. The pages are generated, never edited by hand
(``docs/papers/`` is ignored by git).

The build runs no claim. The findings come from a stored findings record when one is given
(the environment variable ``FLBOUNDS_FINDINGS``, or ``flbounds_findings`` in ``conf.py``: a
file written by ``flbounds findings --format json``), with its margins, counterexamples and
tightness ratios; otherwise from the verdicts the registry expects, without numbers. Each
page says which.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

#: environment variable naming a stored findings record (``flbounds findings --format json``)
FINDINGS_ENV = "FLBOUNDS_FINDINGS"

VERDICT_WORD = {"holds": "holds", "violated": "**violated** (a paper error)",
                "not-applicable": "not applicable", "inconclusive": "inconclusive",
                "reproduced": "reproduced", "not-reproduced": "not reproduced"}


def _results_module():
    try:
        from flbounds.ledger.api import results
    except ImportError:
        from flbounds.ledger.api import results
    return results


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _claim_line(c) -> str:
    expected = VERDICT_WORD.get(c.expected, c.expected)
    full = ""
    if c.expected_full and c.expected_full != c.expected:
        full = f"; full profile: {VERDICT_WORD.get(c.expected_full, c.expected_full)}"
    return f"`{c.id}` ({c.kind}, expected {expected}{full})"


def paper_page(key: str, paper, results: list, claims: list, found=None,
               origin: str = "") -> str:
    """The Markdown page of paper ``key``; ``found``: its
    :class:`~flbounds.ledger.reports.findings.PaperFindings`, ``origin``: where they come
    from (one sentence)."""
    lines = [f"# {paper.title}", "", f"{paper.citation}", "",
             f"Paper key `{key}`: {len(results)} numbered results, "
             f"{sum(len(r.parts) for r in results)} parts, {len(claims)} claims. "
             f"Re-run them with `flbounds check {key}`, then `flbounds findings {key}`; see "
             f"one result with `flbounds show <result id>`.", ""]
    if found is not None:
        from flbounds.ledger.reports.findings_render import paper_markdown

        lines += ["## Findings", "", origin, "",
                  "A printed statement *fails* when its claim is `violated`: a deterministic "
                  "counterexample beyond its tolerance, or a rejection at a level fixed in "
                  "advance, on an instance where every hypothesis of the result is evaluated "
                  "and true ([verdicts](../concepts/verdicts.md), "
                  "[the findings page](../concepts/findings.md)).", "",
                  paper_markdown(found, level=3)]
    lines += ["## Results", ""]
    by_part: dict[str, list] = {}
    for c in claims:
        for q in c.parts:
            by_part.setdefault(q, []).append(c)
    for r in results:
        lines += [f"### {r.ref}: {r.title}", "", f"Result id `{r.id}` ({r.kind}).", ""]
        if r.not_checked:
            lines += [f"Not checked: {r.not_checked}", ""]
        lines += ["| part | assertion | checked by |", "|---|---|---|"]
        for part in r.parts.values():
            attached = by_part.get(f"{r.id}:{part.id}", [])
            cell = ("<br>".join(_claim_line(c) for c in attached) if attached
                    else f"not checked: {part.unchecked or r.not_checked or 'no reason given'}")
            lines.append(f"| `{part.id}` | {_cell(part.text)} | {_cell(cell)} |")
        lines.append("")
        if r.hypotheses:
            lines += ["Hypotheses, evaluated on every claim's instance:", ""]
            for h in r.hypotheses:
                scope = "" if h.parts is None else f" (parts {', '.join(h.parts)})"
                lines.append(f"- **{h.name}**: {h.wording}{scope}")
            lines.append("")
        for b in r.bounds:
            lines += [f"Printed bound `{b.id}` ({b.ref}): {b.quantity}; constants "
                      f"{', '.join(c.name for c in b.constants)}. Evaluate it with "
                      f"`flbounds bound {b.id} ...`.", ""]
    return "\n".join(lines) + "\n"


def stored_findings(path: Path | None):
    """The findings record at ``path`` (None when no path is given); a record that does not
    exist or cannot be read is an error naming it, not a silent fall-back."""
    if path is None:
        return None
    from flbounds.ledger.reports.findings import Findings

    path = Path(path)
    try:
        return Findings.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{FINDINGS_ENV}: cannot read the findings record {str(path)!r} "
                         f"({exc}); write it with 'flbounds findings --format json'") from None


def findings_by_paper(stored) -> dict[str, tuple]:
    """Paper key -> (its findings, the sentence saying where they come from): the stored
    record's where it has the paper, else the registry's expected verdicts."""
    from flbounds.ledger.reports.findings import collect

    out = {}
    if stored is not None:
        rows = " ".join(stored.provenance)
        for p in stored.papers:
            out[p.key] = (p, "Verdicts and numbers from a stored run, not from this build "
                             f"(which runs no claim): {rows}")
    expected = collect()
    for p in expected.papers:
        out.setdefault(p.key, (p, "Verdicts the toolkit expects, from the registry: this "
                                  "build runs no claim, so no margins, counterexamples or "
                                  "tightness ratios are shown. `flbounds findings "
                                  f"{p.key}` prints them after `flbounds check {p.key}`."))
    return out


def generate(out: Path, findings_path: Path | None = None) -> list[str]:
    from flbounds.ledger import PAPERS, load_all

    results_mod = _results_module()
    claims = load_all()
    results = results_mod.load_all()
    found = findings_by_paper(stored_findings(findings_path))
    out.mkdir(parents=True, exist_ok=True)
    keys = list(PAPERS)
    for key in keys:
        mine = [r for r in results.values() if r.paper_key == key]
        theirs = [c for c in claims.values() if c.paper_key == key]
        paper_found, origin = found.get(key, (None, ""))
        (out / f"{key}.md").write_text(
            paper_page(key, PAPERS[key], mine, theirs, paper_found, origin), encoding="utf-8")
    index = ["# The papers", "",
             "One page per paper: its citation, its findings (what fails and by how much, "
             "the corrected statements, what holds and how tight), and every "
             "numbered result with its parts, hypotheses, printed bounds and the claims that "
             "check each part.", "", "```{toctree}", ":maxdepth: 1", ""]
    index += keys + ["```", ""]
    (out / "index.md").write_text("\n".join(index), encoding="utf-8")
    return keys


def _on_init(app):
    # the environment's path is read from the working directory, conf.py's from docs/
    path = None
    if os.environ.get(FINDINGS_ENV):
        path = Path(os.environ[FINDINGS_ENV])
    elif app.config.flbounds_findings:
        path = Path(app.confdir) / app.config.flbounds_findings
    generate(Path(app.srcdir) / "papers", path)


def setup(app):
    app.add_config_value("flbounds_findings", "", "env")
    app.connect("builder-inited", _on_init)
    return {"parallel_read_safe": True, "version": "1"}
