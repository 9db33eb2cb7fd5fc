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

import numpy as np

from ..api.registry import PAPERS, load_all
from ..api.result import CheckResult, to_jsonable
from .format import fmt
from .report_data import paper_key, split_attacks

__all__ = ["Entry", "Failure", "Findings", "Margin", "PaperFindings", "Tightness", "collect",
           "counterexample", "margin", "tightness"]

#: details keys that hold a claim's counterexample, most specific first
WITNESS_KEYS = ("smallest_counterexample", "counterexample", "witness", "instance")
#: the label of an adversarial search's witness
SEARCH_WITNESS = "witness of the adversarial search"
#: how many scalar details stand in for a counterexample when the row names none
MAX_DETAIL_ITEMS = 6


@dataclass(frozen=True)
class Margin:
    """By how much a comparison fails, at its worst component.

    Attributes
    ----------
    kind
        ``"ratio"`` (measured / printed, for an inequality with a positive right side) or
        ``"excess"`` (how far the measured value lies beyond the printed one).
    value
        The ratio or the excess at the worst failing component.
    measured, printed
        The two sides at that component.
    relation
        The row's relation (``<=``, ``>=``, ``==``, ``in``).
    component
        Flat index of the worst failing component (None for a scalar comparison).
    components, failing
        How many components the comparison has, and how many of them fail.
    text
        One sentence saying all that.
    """

    kind: str
    value: float
    measured: float
    printed: float | list
    relation: str
    component: int | None
    components: int
    failing: int
    text: str


@dataclass(frozen=True)
class Tightness:
    """How close what holds comes to its printed bound: worst / printed.

    Attributes
    ----------
    ratio
        The largest measured / printed ratio the source found (1 is tight).
    source
        Where it comes from: a worst case over the function class (PEP), an adversarial
        search, or the instances the claim checked.
    tight
        Whether the source calls the bound attained (None when it does not say).
    text
        One sentence.
    """

    ratio: float
    source: str
    tight: bool | None
    text: str


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


# ----- by how much, counterexample, tightness ---------------------------------------------

def _floats(value) -> np.ndarray | None:
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None


def margin(measured, theoretical, relation: str, tolerance=0.0) -> Margin | None:
    """By how much ``measured <relation> theoretical`` fails beyond ``tolerance``.

    Parameters
    ----------
    measured, theoretical
        Scalars or arrays, as a row stores them (``"inf"`` / ``"nan"`` strings allowed);
        for ``in``, ``theoretical`` holds intervals ``(low, high)`` on its last axis.
    relation
        ``<=``, ``>=``, ``==`` or ``in``.
    tolerance
        The row's tolerance value (a scalar or an array broadcastable against the values).

    Returns
    -------
    Margin or None
        The ratio measured / printed at the worst failing component where the relation is
        ``<=`` or ``>=`` and the printed side is positive there (for ``>=`` with a
        non-negative measured side), else the excess beyond the printed value; None when
        no component fails or the values are not numbers.

    Examples
    --------
    >>> margin(1.5, 1.0, "<=").text
    'measured 1.5 is 1.5x the printed bound 1'
    >>> margin([0.5, 3.0], [1.0, -1.0], "<=").text
    'exceeds the printed bound by 4 (measured 3 vs printed -1; component 2 of 2, 1 fails)'
    """
    m, t, tol = _floats(measured), _floats(theoretical), _floats(tolerance)
    if m is None or t is None:
        return None
    tol = np.zeros(()) if tol is None else np.nan_to_num(tol, nan=0.0)
    try:
        if relation == "in":
            if t.shape[-1:] != (2,):
                return None
            m, low, high, tol = np.broadcast_arrays(m, t[..., 0], t[..., 1], tol)
            beyond = np.maximum(low - m, m - high)
            fail = ~(beyond <= tol)
            printed = np.stack([low, high], axis=-1).reshape(-1, 2)
        else:
            m, t, tol = np.broadcast_arrays(m, t, tol)
            with np.errstate(invalid="ignore"):
                ok = {"<=": m <= t + tol, ">=": m >= t - tol, "==": np.abs(m - t) <= tol}
            if relation not in ok:
                return None
            fail = ~ok[relation]
            beyond = {"<=": m - t, ">=": t - m, "==": np.abs(m - t)}[relation]
            printed = t.ravel()
    except ValueError:  # shapes that do not broadcast
        return None
    flat_fail, flat_m = fail.ravel(), m.ravel()
    idx = np.flatnonzero(flat_fail)
    if idx.size == 0:
        return None
    n, k = int(fail.size), int(idx.size)
    ratio_ok = relation in ("<=", ">=") and bool(np.all(printed[idx] > 0)) \
        and bool(np.all(np.isfinite(flat_m[idx]))) \
        and (relation == "<=" or bool(np.all(flat_m[idx] >= 0)))
    if ratio_ok:
        ratios = flat_m[idx] / printed[idx]
        pick = int(np.argmax(ratios) if relation == "<=" else np.argmin(ratios))
        kind, value = "ratio", float(ratios[pick])
    else:
        excess = beyond.ravel()[idx]
        excess = np.where(np.isnan(excess), math.inf, excess)
        pick = int(np.argmax(excess))
        kind, value = "excess", float(excess[pick])
    i = int(idx[pick])
    at_m = float(flat_m[i])
    at_t = printed[i].tolist() if relation == "in" else float(printed[i])
    where = "" if n == 1 else f"; component {i + 1} of {n}, {k} fail" + ("s" if k == 1 else "")
    text = _margin_text(kind, value, at_m, at_t, relation)
    if where:
        text = text[:-1] + where + ")" if text.endswith(")") else f"{text} ({where[2:]})"
    return Margin(kind=kind, value=value, measured=at_m, printed=at_t, relation=relation,
                  component=None if n == 1 else i, components=n, failing=k, text=text)


def _margin_text(kind: str, value: float, m: float, t, relation: str) -> str:
    if kind == "ratio":
        bound = "bound" if relation == "<=" else "lower bound"
        return f"measured {fmt(m, 5)} is {fmt(value, 5)}x the printed {bound} {fmt(t, 5)}"
    if relation == "in":
        return (f"lies {fmt(value)} outside the printed interval (measured {fmt(m)} vs "
                f"printed [{fmt(t[0])}, {fmt(t[1])}])")
    what = {"<=": "exceeds the printed bound by", ">=": "falls short of the printed bound by",
            "==": "differs from the printed value by"}[relation]
    return f"{what} {fmt(value)} (measured {fmt(m)} vs printed {fmt(t)})"


def counterexample(details: dict, attack: dict | None = None) -> dict:
    """The smallest counterexample a row records: its ``smallest_counterexample``,
    ``counterexample``, ``witness`` or ``instance`` detail, else the adversarial search's
    witness, else its scalar details (at most :data:`MAX_DETAIL_ITEMS`).

    Parameters
    ----------
    details
        The row's ``details``.
    attack
        The row's (or its ``attack:`` row's) search summary.

    Returns
    -------
    dict
        ``{name: value}``, empty when the row records nothing.
    """
    for key in WITNESS_KEYS:
        value = details.get(key)
        if value not in (None, {}, [], ""):
            return {key: value}
    witness = (attack or {}).get("witness")
    if witness:
        return {SEARCH_WITNESS: witness}
    scalars = {k: v for k, v in details.items()
               if isinstance(v, int | float | str | bool) and len(str(v)) < 80}
    return dict(list(scalars.items())[:MAX_DETAIL_ITEMS])


def tightness(r: CheckResult, attack: dict | None = None) -> Tightness | None:
    """How close a holding row comes to its printed bound.

    Parameters
    ----------
    r
        A stored row that holds.
    attack
        The search summary joined onto it (``attack:<id>`` row), if any.

    Returns
    -------
    Tightness or None
        From, in this order: the row's PEP worst case (``worst_case["ratio"]``, worst /
        printed over the function class), an adversarial search (``best_ratio``), the
        largest measured / printed over the checked instances of a ``<=`` comparison with a
        positive printed side; None when none applies.
    """
    wc = dict(getattr(r, "worst_case", None) or {})
    if _number(wc.get("ratio")):
        tight = wc.get("tight") if isinstance(wc.get("tight"), bool) else None
        return _tightness(float(wc["ratio"]), "worst case over the function class (PEP)",
                          tight)
    attack = dict(attack or getattr(r, "attack", None) or {})
    if _number(attack.get("best_ratio")):
        tight = attack.get("tight") if isinstance(attack.get("tight"), bool) else None
        return _tightness(float(attack["best_ratio"]), "adversarial search over the "
                          "hypothesis domain", tight)
    m, t = _floats(r.measured), _floats(r.theoretical)
    if r.relation != "<=" or m is None or t is None:
        return None
    try:
        m, t = np.broadcast_arrays(m, t)
    except ValueError:
        return None
    if m.size == 0 or not np.all(t > 0) or not np.all(np.isfinite(m)):
        return None
    return _tightness(float(np.max(m / t)), "largest measured / printed on the checked "
                      "instances", None)


def _tightness(ratio: float, source: str, tight: bool | None) -> Tightness:
    word = "" if tight is None else ("; tight" if tight else "; not tight")
    return Tightness(ratio=ratio, source=source, tight=tight,
                     text=f"reaches {fmt(ratio, 5)} of the printed bound ({source}{word})")


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) \
        and math.isfinite(value)


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
