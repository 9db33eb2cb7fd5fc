"""The findings of a run, per paper: what the papers print that fails, by how much, the
smallest counterexample, the corrected statement and its verdict, how tight what holds is,
the authors' code defects the toolkit reproduces, and the synthetic re-runs.

:func:`collect` builds them as data (:class:`Findings`) from stored rows, or, without rows,
from the registry's expected verdicts (no numbers then). The renderings (terminal text,
Markdown, one HTML page) are in :mod:`.findings_render`; ``flbounds report`` writes
``findings.md`` and ``findings.html`` beside the ledger and ``flbounds findings`` prints them.

What counts as what:

- a *printed statement* is a claim of any kind but ``code`` and ``reproduction`` that corrects
  no other claim; it *fails* when its row is ``violated`` or the toolkit expects ``violated``;
- a *corrected statement* is a claim declared with ``corrects="<printed claim id>"``; the two
  are linked both ways (:attr:`Entry.corrects`, :attr:`Entry.corrected_by`);
- an authors' *code defect* is a claim of kind ``code`` that is (or is expected) ``violated``;
- a *reproduction* is a claim of kind ``reproduction``: a re-run of an empirical table or
  figure on synthetic stand-ins, ``reproduced`` / ``not-reproduced`` / ``inconclusive``,
  never a paper error.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields

from ..api.registry import PAPERS, load_all
from ..api.result import CheckResult, to_jsonable
from .margins import (
    Margin,
    Tightness,
    counterexample,
    margin,
    tightness,
)
from .report_data import paper_key, split_attacks

__all__ = ["Entry", "Failure", "Findings", "Margin", "PaperFindings", "Tightness", "collect",
           "counterexample", "margin", "tightness"]

@dataclass(frozen=True)
class Entry:
    """One claim as the findings show it.

    ``verdict`` is the stored row's verdict, or ``""`` when the findings come from the
    registry (then ``margin``, ``counterexample`` and ``tightness`` are empty too).
    """

    id: str
    ref: str
    kind: str
    statement: str
    expected: str
    verdict: str = ""
    reason: str = ""
    margin: Margin | None = None
    counterexample: dict = field(default_factory=dict)
    tightness: Tightness | None = None
    corrects: str | None = None
    corrected_by: tuple[str, ...] = ()
    reproducer: str = ""

    @property
    def as_expected(self) -> bool | None:
        """Whether the stored verdict is the expected one (None without a stored row)."""
        return self.verdict == self.expected if self.verdict else None


@dataclass(frozen=True)
class Failure:
    """A printed statement that fails, with the corrected statements that replace it."""

    printed: Entry
    corrections: tuple[Entry, ...] = ()


@dataclass(frozen=True)
class PaperFindings:
    """The findings of one paper, with its citation.

    Attributes
    ----------
    key, title, authors, venue, year, arxiv
        The declared paper (:func:`flbounds.ledger.paper`).
    citation, short
        The full citation (authors, title, venue, arXiv id) and its short form.
    failures
        Printed statements that fail (or are expected to), each with its corrections.
    holds
        Printed statements that hold (expected to, without rows), tightest first.
    corrections
        Corrected statements whose printed statement is not among ``failures`` (it holds, or
        is not in the rows shown).
    code_defects
        The authors' code defects the toolkit reproduces (kind ``code``, violated).
    reproductions
        Synthetic re-runs of the paper's empirical tables and figures.
    counts
        Verdict -> number of the paper's claims shown (expected verdicts without rows).
    unexpected
        Ids of claims whose stored verdict differs from the expected one.
    """

    key: str
    title: str
    authors: tuple[str, ...]
    venue: str
    year: str
    arxiv: str
    citation: str
    short: str
    failures: tuple[Failure, ...] = ()
    holds: tuple[Entry, ...] = ()
    corrections: tuple[Entry, ...] = ()
    code_defects: tuple[Entry, ...] = ()
    reproductions: tuple[Entry, ...] = ()
    counts: dict = field(default_factory=dict)
    unexpected: tuple[str, ...] = ()

    @property
    def corrected_hold(self) -> int:
        """How many corrected statements hold (expected to, without rows)."""
        entries = [c for f in self.failures for c in f.corrections] + list(self.corrections)
        return sum(_verdict(c) == "holds" for c in entries)

    @property
    def not_reproduced(self) -> int:
        return sum(_verdict(r) == "not-reproduced" for r in self.reproductions)


@dataclass(frozen=True)
class Findings:
    """The findings of every paper shown, and where their numbers come from.

    Attributes
    ----------
    papers
        One :class:`PaperFindings` per paper, in declaration order.
    source
        ``"store"`` (verdicts and numbers of stored rows) or ``"registry"`` (the verdicts the
        toolkit expects; no numbers).
    provenance
        Sentences saying which rows are shown (profile, seed, code version), or that they
        are expected verdicts.
    """

    papers: tuple[PaperFindings, ...]
    source: str
    provenance: tuple[str, ...] = ()

    def paper(self, key: str) -> PaperFindings:
        """The findings of paper ``key`` (``KeyError`` if not shown)."""
        for p in self.papers:
            if p.key == key:
                return p
        raise KeyError(key)

    def to_dict(self) -> dict:
        """A JSON-ready dict (:meth:`from_dict` reads it back)."""
        return to_jsonable(asdict(self))

    @classmethod
    def from_dict(cls, data: dict) -> Findings:
        """Findings written by :meth:`to_dict` (for example ``flbounds findings --format
        json``); ``ValueError`` when ``data`` is not such a dict."""
        try:
            papers = tuple(_paper_from_dict(p) for p in data["papers"])
            return cls(papers=papers, source=str(data["source"]),
                       provenance=tuple(data.get("provenance", ())))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"data: not a findings record ({type(exc).__name__}: {exc})") \
                from None


def collect(results: Iterable[CheckResult] | None = None, papers: Sequence[str] = (), *,
            provenance: Sequence[str] = ()) -> Findings:
    """The findings of stored rows, or of the registry's expected verdicts.

    Parameters
    ----------
    results
        Rows of one run (for example :func:`~flbounds.ledger.reports.provenance.select_rows`'s
        choice), attack rows included (``attack:<claim id>``, joined onto their claim). None:
        every registered claim with the verdict the toolkit expects, and no numbers.
    papers
        Paper keys to keep (all papers with a row, or all declared papers, when empty).
    provenance
        Sentences saying where the rows come from, kept in :attr:`Findings.provenance`.

    Returns
    -------
    Findings
        Per paper: failures with margin, counterexample and corrections; what holds with its
        tightness; code defects; reproductions.

    Raises
    ------
    ValueError
        If ``papers`` names a paper that is not declared, or that has no row in ``results``.

    Examples
    --------
    >>> from flbounds.ledger.reports.findings import collect
    >>> found = collect(papers=["focus"])          # expected verdicts, no store needed
    >>> found.source, found.papers[0].short
    ('registry', 'Ying et al., NeurIPS 2025')
    """
    claims = load_all()
    unknown = [k for k in papers if k not in PAPERS]
    if unknown:
        raise ValueError(f"papers: unknown paper {unknown[0]!r} (declared: "
                         f"{', '.join(PAPERS)})")
    if results is None:
        entries = [_registry_entry(c) for c in claims.values()]
        source = "registry"
        provenance = tuple(provenance) or (
            "Expected verdicts from the registry: no claim was run, so no margins, "
            "counterexamples or tightness ratios are shown.",)
    else:
        rows, attacks = split_attacks(list(results))
        entries = [_row_entry(r, attacks.get(r.id), claims.get(r.id)) for r in rows]
        source = "store"
    entries = _link(entries, claims)
    present = list(dict.fromkeys(paper_key(e.id) for e in entries))
    missing = [k for k in papers if k not in present]
    if missing:
        raise ValueError(f"papers: no stored row of paper {missing[0]!r} (run 'flbounds "
                         f"check {missing[0]}')")
    keys = [k for k in PAPERS if k in present] + [k for k in present if k not in PAPERS]
    if papers:
        keys = [k for k in keys if k in papers]
    found = tuple(_paper(k, [e for e in entries if paper_key(e.id) == k]) for k in keys)
    return Findings(papers=found, source=source, provenance=tuple(provenance))


# ----- one claim --------------------------------------------------------------------------

def _registry_entry(c) -> Entry:
    # a statement the full profile finds violated is a failure even where the quick size
    # cannot decide it
    expected = "violated" if c.expected_full == "violated" else c.expected
    return Entry(id=c.id, ref=c.ref, kind=c.kind, statement=c.statement, expected=expected,
                 corrects=c.corrects, reproducer=c.reproducer("quick", 0))


def _row_entry(r: CheckResult, attack: dict | None, c) -> Entry:
    details = dict(r.details or {})
    attack = dict(getattr(r, "attack", None) or attack or {})
    tol = (r.tolerance or {}).get("value", 0.0)
    failed = r.verdict in ("violated", "not-reproduced", "inconclusive")
    found_margin = margin(r.measured, r.theoretical, r.relation, tol) if failed else None
    witness = counterexample(details, attack) if failed or r.expected == "violated" else {}
    tight = tightness(r, attack) if r.verdict == "holds" else None
    return Entry(id=r.id, ref=r.ref, kind=r.kind, statement=r.statement, expected=r.expected,
                 verdict=r.verdict, reason=r.reason.splitlines()[0] if r.reason else "",
                 margin=found_margin, counterexample=witness, tightness=tight,
                 corrects=c.corrects if c is not None else None, reproducer=r.reproducer)


def _link(entries: list[Entry], claims: dict) -> list[Entry]:
    """Fill ``corrected_by`` from every registered claim's ``corrects``."""
    by_target: dict[str, list[str]] = {}
    for c in claims.values():
        if c.corrects is not None:
            by_target.setdefault(c.corrects, []).append(c.id)
    out = []
    for e in entries:
        linked = tuple(by_target.get(e.id, ()))
        out.append(_replace(e, corrected_by=linked) if linked else e)
    return out


def _replace(e: Entry, **changes) -> Entry:
    return Entry(**{**{f.name: getattr(e, f.name) for f in fields(Entry)}, **changes})


def _verdict(e: Entry) -> str:
    """The stored verdict, else the expected one."""
    return e.verdict or e.expected


def _fails(e: Entry) -> bool:
    return "violated" in (e.verdict, e.expected)


def _paper(key: str, entries: list[Entry]) -> PaperFindings:
    declared = PAPERS.get(key)
    printed = [e for e in entries if e.kind not in ("code", "reproduction") and not e.corrects]
    corrections = [e for e in entries if e.corrects]
    failures = []
    for e in printed:
        if _fails(e):
            mine = tuple(c for c in corrections if c.corrects == e.id)
            failures.append(Failure(printed=e, corrections=mine))
    attached = {c.id for f in failures for c in f.corrections}
    holds = sorted((e for e in printed if _verdict(e) == "holds"),
                   key=lambda e: (-(e.tightness.ratio if e.tightness else -math.inf), e.id))
    code = [e for e in entries if e.kind == "code" and _fails(e)]
    reruns = [e for e in entries if e.kind == "reproduction"]
    counts: dict[str, int] = {}
    for e in entries:
        counts[_verdict(e)] = counts.get(_verdict(e), 0) + 1
    unexpected = tuple(e.id for e in entries if e.as_expected is False)
    if declared is None:
        return PaperFindings(key=key, title=key, authors=(), venue="", year="", arxiv="",
                             citation=key, short=key)
    return PaperFindings(
        key=key, title=declared.title, authors=tuple(declared.authors), venue=declared.venue,
        year=declared.year, arxiv=declared.arxiv, citation=declared.plain_citation,
        short=declared.short, failures=tuple(failures), holds=tuple(holds),
        corrections=tuple(c for c in corrections if c.id not in attached),
        code_defects=tuple(code), reproductions=tuple(reruns), counts=counts,
        unexpected=unexpected)


# ----- reading a findings record back ---------------------------------------------------

def _entry_from_dict(d: dict) -> Entry:
    d = dict(d)
    if d.get("margin") is not None:  # non-finite floats come back from JSON as strings
        m = dict(d["margin"])
        for name in ("value", "measured", "printed"):
            if isinstance(m[name], str):
                m[name] = float(m[name])
        d["margin"] = Margin(**m)
    if d.get("tightness") is not None:
        d["tightness"] = Tightness(**{**d["tightness"],
                                      "ratio": float(d["tightness"]["ratio"])})
    d["corrected_by"] = tuple(d.get("corrected_by", ()))
    return Entry(**d)


def _paper_from_dict(d: dict) -> PaperFindings:
    d = dict(d)
    d["failures"] = tuple(Failure(printed=_entry_from_dict(f["printed"]),
                                  corrections=tuple(_entry_from_dict(c)
                                                    for c in f.get("corrections", ())))
                          for f in d.get("failures", ()))
    for name in ("holds", "corrections", "code_defects", "reproductions"):
        d[name] = tuple(_entry_from_dict(e) for e in d.get(name, ()))
    d["authors"] = tuple(d.get("authors", ()))
    d["unexpected"] = tuple(d.get("unexpected", ()))
    return PaperFindings(**d)
