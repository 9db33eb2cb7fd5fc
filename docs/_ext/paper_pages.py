"""Generate one page per paper from the declared results and claims (``docs/papers/``).

At ``builder-inited`` the claim plugins are loaded and, for every declared paper, a Markdown
page is written: the citation, then every numbered result in the order it was declared, with
its parts (and the claims attached to each, or why none is), its hypotheses and its printed
bounds. The pages are generated, never edited by hand (``docs/papers/`` is ignored by git).
"""

from __future__ import annotations

from pathlib import Path

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


def paper_page(key: str, paper, results: list, claims: list) -> str:
    lines = [f"# {paper.title}", "", f"{paper.citation}", "",
             f"Paper key `{key}`: {len(results)} numbered results, "
             f"{sum(len(r.parts) for r in results)} parts, {len(claims)} claims. "
             f"Re-run them with `flbounds check {key}`; see one result with "
             f"`flbounds show <result id>`.", ""]
    violated = [c for c in claims if "violated" in (c.expected, c.expected_full)]
    if violated:
        lines += ["## What the ledger finds wrong", "",
                  "Claims the toolkit expects to come out `violated`: each rests on a "
                  "deterministic counterexample or a rejection at a level fixed in advance, "
                  "on an instance where every hypothesis of the result is evaluated and "
                  "true.", ""]
        lines += [f"- {_claim_line(c)}, {c.ref}: {c.statement}" for c in violated]
        lines.append("")
    reruns = [c for c in claims if c.kind == "reproduction"]
    if reruns:
        lines += ["## Synthetic re-runs of empirical results", "",
                  "Tables and figures the paper measured on its own data, re-run on synthetic "
                  "stand-ins: not reproducing an effect here is not a paper error.", ""]
        lines += [f"- {_claim_line(c)}, {c.ref}: {c.statement}" for c in reruns]
        lines.append("")
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


def generate(out: Path) -> list[str]:
    from flbounds.ledger import PAPERS, load_all

    results_mod = _results_module()
    claims = load_all()
    results = results_mod.load_all()
    out.mkdir(parents=True, exist_ok=True)
    keys = list(PAPERS)
    for key in keys:
        mine = [r for r in results.values() if r.paper_key == key]
        theirs = [c for c in claims.values() if c.paper_key == key]
        (out / f"{key}.md").write_text(paper_page(key, PAPERS[key], mine, theirs),
                                       encoding="utf-8")
    index = ["# The papers", "",
             "One page per paper: its citation, what the ledger finds wrong, and every "
             "numbered result with its parts, hypotheses, printed bounds and the claims that "
             "check each part.", "", "```{toctree}", ":maxdepth: 1", ""]
    index += keys + ["```", ""]
    (out / "index.md").write_text("\n".join(index), encoding="utf-8")
    return keys


def _on_init(app):
    generate(Path(app.srcdir) / "papers")


def setup(app):
    app.connect("builder-inited", _on_init)
    return {"parallel_read_safe": True, "version": "1"}
