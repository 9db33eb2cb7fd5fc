"""Kill rates, survivors and the Markdown tables of a mutation run."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

from .catalogue import MUTANTS
from .harness import PAPERS, Outcome

_BY_ID = {m.id: m for m in MUTANTS}
README_BEGIN = "<!-- mutation:begin -->"
README_END = "<!-- mutation:end -->"


def load(paths) -> list[Outcome]:
    """Outcomes from one or more ``--json`` files (later files win for the same pair)."""
    merged: dict[tuple[str, str], Outcome] = {}
    for path in paths:
        for row in json.loads(Path(path).read_text())["outcomes"]:
            row = {**row, "killers": tuple(row["killers"]), "crashes": tuple(row["crashes"]),
                   "reasons": tuple(row.get("reasons", ()))}
            mutant = _BY_ID.get(row["mutant"])
            if mutant is None or row["paper"] not in mutant.papers:
                continue  # no longer in the catalogue, or no longer mapped to that paper
            merged[(row["mutant"], row["paper"])] = Outcome(**row)
    return list(merged.values())


def dump(outcomes: list[Outcome], path, *, date: str | None = None) -> None:
    """Write the outcomes and the per-paper table as JSON."""
    payload = {"date": date or _today(), "outcomes": [o._asdict() for o in outcomes],
               "per_paper": per_paper(outcomes)}
    Path(path).write_text(json.dumps(payload, indent=1))


def _today() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")


def per_mutant(outcomes: list[Outcome]) -> dict[str, str]:
    """Status per mutant over its papers: killed if any paper kills it (by verdict), else
    crashed if any run crashed, else survived."""
    status: dict[str, str] = {}
    rank = {"survived": 0, "crashed": 1, "killed": 2}
    for o in outcomes:
        if rank[o.status] >= rank.get(status.get(o.mutant, "survived"), 0):
            status[o.mutant] = o.status
    return status


def per_paper(outcomes: list[Outcome]) -> dict[str, dict[str, int]]:
    """Per paper (and ``overall``, per mutant): counts killed / crashed / survived / total,
    and ``equivalent``: the survivors the catalogue explains as equivalent mutants."""
    table: dict[str, dict[str, int]] = {}
    for paper in PAPERS:
        rows = [o for o in outcomes if o.paper == paper]
        if rows:
            table[paper] = _counts([(o.mutant, o.status) for o in rows])
    table["overall"] = _counts(list(per_mutant(outcomes).items()))
    return table


def _counts(rows: list[tuple[str, str]]) -> dict[str, int]:
    statuses = [s for _, s in rows]
    equivalent = sum(1 for m, s in rows if s == "survived" and _BY_ID[m].equivalent)
    return {"killed": statuses.count("killed"), "crashed": statuses.count("crashed"),
            "survived": statuses.count("survived"), "equivalent": equivalent,
            "total": len(statuses)}


def _rate(c: dict[str, int]) -> str:
    """Caught over the mutants run that are not explained as equivalent."""
    caught, base = c["killed"] + c["crashed"], c["total"] - c.get("equivalent", 0)
    return f"{caught}/{base} ({100.0 * caught / base:.0f}%)" if base else "-"


def rate_table(outcomes: list[Outcome]) -> str:
    """Markdown: per paper, mutants caught (killed by a verdict + crashed) of those run,
    equivalent mutants left out of the rate."""
    lines = ["| paper | caught | killed by a verdict | crashed only | survived "
             "| of which equivalent |", "|---|---|---|---|---|---|"]
    for paper, c in per_paper(outcomes).items():
        lines.append(f"| {paper} | {_rate(c)} | {c['killed']} | {c['crashed']} "
                     f"| {c['survived']} | {c['equivalent']} |")
    return "\n".join(lines)


def detail_table(outcomes: list[Outcome]) -> str:
    """Markdown: one row per (mutant, paper) with its killing claims."""
    lines = ["| mutant | paper | status | claims off their expected verdict |",
             "|---|---|---|---|"]
    for o in sorted(outcomes, key=lambda o: (o.mutant, o.paper)):
        shown = ", ".join(f"`{c}`" for c in o.killers[:6])
        more = f" (+{len(o.killers) - 6})" if len(o.killers) > 6 else ""
        errs = f"; errors: {', '.join(f'`{c}`' for c in o.crashes[:3])}" if o.crashes else ""
        lines.append(f"| `{o.mutant}` | {o.paper} | {o.status} | {shown}{more}{errs} |")
    return "\n".join(lines)


def survivors(outcomes: list[Outcome]) -> str:
    """Markdown list of the surviving mutants with their snippet and explanation."""
    status = per_mutant(outcomes)
    out = []
    for mid in sorted(m for m, s in status.items() if s == "survived"):
        m = _BY_ID.get(mid)
        if m is None:
            out.append(f"- `{mid}` (no longer in the catalogue)")
            continue
        note = f" Equivalent: {m.equivalent}" if m.equivalent else ""
        out.append(f"- `{mid}` ({m.path}): `{m.old}` -> `{m.new}`. {m.models}.{note}")
    return "\n".join(out) or "(none)"


def not_run(outcomes: list[Outcome]) -> str:
    """Markdown list of the (mutant, paper) pairs of the catalogue with no outcome."""
    done = {(o.mutant, o.paper) for o in outcomes}
    missing = [f"`{m.id}` ({p})" for m in MUTANTS for p in m.papers if (m.id, p) not in done]
    return ", ".join(missing) or "(none)"


def markdown(outcomes: list[Outcome], *, date: str | None = None) -> str:
    """The full report (``tests/mutation/RESULTS.md``)."""
    return "\n\n".join([
        f"# Mutation run, {date or _today()}",
        "Command: `python -m tests.mutation --paper P --workers 1 --json P.json` per paper "
        "(`--resume` to add missing pairs, `--retry-survivors` after adding claims), merged "
        "with `python -m tests.mutation --merge *.json --markdown RESULTS.md`. A mutant "
        "counts for a paper when it is killed by that paper's quick claims; overall, a "
        "mutant is caught when any of its papers catches it. Survivors the catalogue "
        "explains as equivalent are listed but left out of the rate.",
        "## Kill rate", rate_table(outcomes),
        "## Survivors", survivors(outcomes),
        "## Not run", not_run(outcomes),
        "## Per mutant", detail_table(outcomes)]) + "\n"


def readme_section(outcomes: list[Outcome], *, date: str | None = None) -> str:
    """The README's short section (between the mutation markers)."""
    done = {(o.mutant, o.paper) for o in outcomes}
    pending = sum(1 for m in MUTANTS for p in m.papers if (m.id, p) not in done)
    scope = (f"all {len(MUTANTS)} planted bugs run against every paper they affect"
             if not pending else f"{len(per_mutant(outcomes))} of the {len(MUTANTS)} planted "
             f"bugs run so far ({pending} (mutant, paper) pairs pending)")
    return "\n".join([
        README_BEGIN,
        f"Mutation testing ({date or _today()}, quick profile): {scope}; caught = killed by a "
        "verdict or crashed, over the mutants not explained as equivalent. Survivors, "
        "equivalent mutants and the claims that kill each mutant: `tests/mutation/RESULTS.md`.",
        "", rate_table(outcomes), README_END])


def update_readme(readme: Path, section: str) -> None:
    """Replace the marked section of ``readme`` (or append it under its own heading)."""
    text = readme.read_text()
    if README_BEGIN in text and README_END in text:
        head, rest = text.split(README_BEGIN, 1)
        text = head + section + rest.split(README_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## Checking the checks\n\n" + section + "\n"
    readme.write_text(text)
