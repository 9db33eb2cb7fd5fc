r"""Coverage of a paper's numbered results by claims: result -> claim ids, or why none.

A claim plugin declares, per paper, the list of the paper's numbered results (theorems,
lemmas, corollaries, propositions, remarks, definitions, assumptions, examples, algorithms,
tables, figures), written from the paper text, with :func:`declare_results`; a result no
claim checks carries the reason. Claims are mapped to results from their ``ref`` field
(``"Thm 1(a), eq. (23)"`` cites Theorem 1; ``"Tables 1-2"`` cites Tables 1 and 2), or, for
a ref that names no numbered result (``"Sec. 3 text"``), from the paper's ``claim_map``.

``python -m flbounds.ledger.reports.coverage`` prints the table (Markdown) and writes it with
``--out docs/coverage.md``; ``--check`` exits 1 when a claim maps to no listed result or a
listed result has neither claims nor a reason.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ..api.registry import PAPERS, load_all

KINDS = {"thm": "Theorem", "theorem": "Theorem", "lemma": "Lemma", "cor": "Corollary",
         "corollary": "Corollary", "corollaries": "Corollary", "prop": "Proposition",
         "proposition": "Proposition",
         "remark": "Remark", "def": "Definition", "definition": "Definition",
         "assumption": "Assumption", "example": "Example", "alg": "Algorithm",
         "algorithm": "Algorithm", "table": "Table", "fig": "Figure", "figure": "Figure"}
_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X")
_NUM = r"(?:[A-Z]\.\d+|\d+(?:\.\d+)?|[IVX]+\b)(?![-–]?(?![IVX]+\b)[A-Za-z](?!\.))"  # not "1-D"
_CITE = re.compile(r"\b(" + "|".join(sorted(KINDS, key=len, reverse=True)) + r")s?\.?\s*("
                   + _NUM + r"(?:\([a-z]\))?(?:\s*(?:,|/|-|–|and)\s*" + _NUM
                   + r"(?:\([a-z]\))?)*)", re.IGNORECASE)


@dataclass(frozen=True)
class Result:
    """One numbered result of a paper: ``name`` as the paper numbers it ("Theorem 1",
    "Table III"), what it says in a few words, and why no claim checks it (if none does)."""

    name: str
    what: str
    not_covered: str = ""


@dataclass(frozen=True)
class CoverageRow:
    """A result, the claims that check it, and the reason where there are none."""

    result: Result
    claims: tuple[str, ...]

    @property
    def covered(self) -> bool:
        return bool(self.claims)


_RESULTS: dict[str, tuple[Result, ...]] = {}
_CLAIM_MAPS: dict[str, dict[str, tuple[str, ...]]] = {}


def declare_results(paper_key: str, results, *, claim_map: dict | None = None) -> None:
    """Declare ``paper_key``'s numbered results.

    Parameters
    ----------
    paper_key : str
        A declared paper (``flbounds.ledger.paper``).
    results : sequence of (name, what) or (name, what, not_covered)
        Every numbered result of the paper, in the paper's order; ``not_covered`` says why
        no claim checks it (leave it out when claims do).
    claim_map : dict, optional
        claim id -> result names, for claims whose ``ref`` names no numbered result.
    """
    rows = []
    for entry in results:
        if not isinstance(entry, tuple | list) or len(entry) not in (2, 3) \
                or not all(isinstance(x, str) for x in entry):
            raise ValueError(f"results: {entry!r} must be (name, what[, not_covered]) texts")
        rows.append(Result(*entry))
    names = [r.name for r in rows]
    if len(set(names)) != len(names):
        raise ValueError(f"results of {paper_key!r} list a name twice")
    _RESULTS[paper_key] = tuple(rows)
    _CLAIM_MAPS[paper_key] = {cid: tuple(v) for cid, v in (claim_map or {}).items()}


def _expand(kind: str, numbers: str) -> list[str]:
    """``("Table", "1-2, 5")`` -> ``["Table 1", "Table 2", "Table 5"]``."""
    out = []
    parts = re.split(r"\s*(,|/|and)\s*", re.sub(r"\([a-z]\)", "", numbers))
    for part in parts[::2]:
        ends = re.split(r"\s*[-–]\s*", part)
        if len(ends) == 2 and all(e in _ROMAN for e in ends):
            out += [f"{kind} {r}" for r in _ROMAN[_ROMAN.index(ends[0]):
                                                  _ROMAN.index(ends[1]) + 1]]
            continue
        pair = [re.fullmatch(r"([A-Z]\.)?(\d+)", e) for e in ends]
        if len(ends) == 2 and all(pair) and pair[0].group(1) == pair[1].group(1):
            prefix = pair[0].group(1) or ""
            out += [f"{kind} {prefix}{n}"
                    for n in range(int(pair[0].group(2)), int(pair[1].group(2)) + 1)]
        else:
            out += [f"{kind} {e}" for e in ends if e]
    return out


def cited_results(ref: str) -> list[str]:
    """The numbered results a claim's ``ref`` cites, normalised ("Thm 1(a)" -> "Theorem 1")."""
    found = []
    for match in _CITE.finditer(ref):
        for name in _expand(KINDS[match.group(1).lower()], match.group(2)):
            if name not in found:
                found.append(name)
    return found


def claim_results(claim) -> list[str]:
    """The listed results ``claim`` checks: its paper's ``claim_map`` entry, else its ref."""
    mapped = _CLAIM_MAPS.get(claim.paper_key, {}).get(claim.id)
    return list(mapped) if mapped is not None else cited_results(claim.ref)


def coverage(paper_key: str) -> list[CoverageRow]:
    """Every declared result of ``paper_key`` with the ids of the claims that cite it."""
    load_all()
    if paper_key not in _RESULTS:
        raise ValueError(f"paper_key: no results declared for {paper_key!r}")
    cited: dict[str, list[str]] = {}
    for claim in load_all().values():
        if claim.paper_key == paper_key:
            for name in claim_results(claim):
                cited.setdefault(name, []).append(claim.id)
    return [CoverageRow(r, tuple(sorted(cited.get(r.name, ())))) for r in _RESULTS[paper_key]]


def problems() -> list[str]:
    """What keeps the table from being complete: claims that map to no listed result (or to
    an unlisted one), results with neither claims nor a reason, reasons on covered results."""
    out = []
    claims = load_all()
    for key in PAPERS:
        if key not in _RESULTS:
            out.append(f"{key}: no results declared")
            continue
        listed = {r.name for r in _RESULTS[key]}
        for claim in (c for c in claims.values() if c.paper_key == key):
            names = claim_results(claim)
            if not names:
                out.append(f"{claim.id}: ref {claim.ref!r} cites no numbered result")
            out += [f"{claim.id}: cites {n!r}, not in {key}'s results" for n in names
                    if n not in listed]
        for row in coverage(key):
            if not row.covered and not row.result.not_covered:
                out.append(f"{key}: {row.result.name} has no claim and no reason")
            if row.covered and row.result.not_covered:
                out.append(f"{key}: {row.result.name} has claims but a 'not covered' reason")
    out += [f"claim_map names unknown claim {cid!r}" for m in _CLAIM_MAPS.values()
            for cid in m if cid not in claims]
    return out


def markdown() -> str:
    """The coverage table of every paper with declared results, as Markdown."""
    load_all()
    keys = [key for key in PAPERS if key in _RESULTS]
    lines = ["# Coverage: every numbered result of the papers -> the claims that check it", "",
             "Generated by `python -m flbounds.ledger.reports.coverage --out docs/coverage.md` "
             "from each paper's declared results (`verify/<paper>/results.py`, written from the "
             "paper text) and the claims' `ref` fields. A result without claims says why.", "",
             "| paper | results listed | with claims | without (reason given) | claims |",
             "|---|---|---|---|---|"]
    for key in keys:
        rows = coverage(key)
        n_cov = sum(r.covered for r in rows)
        n_claims = len({c for r in rows for c in r.claims})
        lines.append(f"| `{key}` | {len(rows)} | {n_cov} | {len(rows) - n_cov} | {n_claims} |")
    lines.append("")
    for key in keys:
        rows = coverage(key)
        lines += [f"## {key}: {PAPERS[key].title}", "",
                  "| result | what | claims |", "|---|---|---|"]
        for row in rows:
            cell = ("<br>".join(f"`{c}`" for c in row.claims) if row.covered
                    else f"not covered: {row.result.not_covered}")
            lines.append(f"| {row.result.name} | {row.result.what} | {cell} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the Markdown table to this file")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if a claim or a result is unaccounted for")
    args = parser.parse_args(argv)
    if args.out is not None and not args.out.parent.is_dir():
        parser.error(f"--out: directory {str(args.out.parent)!r} does not exist")
    issues = problems()
    if args.check:
        for issue in issues:
            print(issue, file=sys.stderr)
        return 1 if issues else 0
    text = markdown()
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    # the declared tables live in the imported module, not in this __main__ copy
    from flbounds.ledger.reports.coverage import main as _main

    sys.exit(_main())
