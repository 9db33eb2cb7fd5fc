"""Papers: the key every claim id starts with, its title and where its text is.

A claim plugin declares each paper it checks once, at import, before its claims::

    from flbounds.ledger import paper

    paper("mypaper", title="A bound on averaged gradients", source="arXiv:2601.00001",
          reference="A. Author, B. Author", venue="NeurIPS 2026")

:data:`PAPERS` is the read-only table of declared papers (key -> :class:`Paper`). Reading it
loads the claim plugins first, so it is complete wherever it is read.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import NamedTuple

#: a paper key: the first component of every claim id of that paper
KEY_PATTERN = re.compile(r"[a-z][a-z0-9_]*")

_PAPERS: dict[str, Paper] = {}
_DECLARED_BY: dict[str, str] = {}  # paper key -> module that first declared it


class Paper(NamedTuple):
    """A declared paper (made by :func:`paper`).

    The first two fields keep the layout of the earlier ``(source, title)`` pairs, so
    ``PAPERS[key][1]`` is still the title.

    Attributes
    ----------
    source, title, key, reference, venue : str
        As the arguments of :func:`paper`.
    """

    source: str
    title: str
    key: str
    reference: str = ""
    venue: str = ""

    @property
    def label(self) -> str:
        """What results store in their ``paper`` field: the source, else the key."""
        return self.source or self.key

    @property
    def citation(self) -> str:
        """How a reader cites the paper: authors. *Title.* Venue. Source."""
        parts = [self.reference, f"*{self.title}.*", self.venue, self.source]
        return " ".join(p if p.endswith((".", ".*")) else p + "." for p in parts if p)

    @property
    def plain_citation(self) -> str:
        """:attr:`citation` without the Markdown emphasis (terminals, HTML attributes)."""
        return self.citation.replace("*", "")

    @property
    def authors(self) -> list[str]:
        """The authors, as listed in ``reference`` (comma or "and" separated)."""
        names = re.split(r",\s*|\s+and\s+", self.reference)
        return [n.strip() for n in names if n.strip() and not YEAR.fullmatch(n.strip())]

    @property
    def year(self) -> str:
        """The first four-digit year in the venue (else in the reference), or ''."""
        found = YEAR.search(self.venue) or YEAR.search(self.reference)
        return found.group(0) if found else ""

    @property
    def arxiv(self) -> str:
        """The arXiv identifier of ``source`` (``2405.02745``), or ''."""
        found = ARXIV.search(self.source)
        return found.group(1) if found else ""

    @property
    def short(self) -> str:
        """The short form a table cites: ``Yang et al., ICML 2024`` (first author's surname;
        both surnames for two authors; the venue, else the year)."""
        surnames = [_surname(a) for a in self.authors]
        if not surnames:
            who = self.title
        elif len(surnames) == 1:
            who = surnames[0]
        elif len(surnames) == 2:
            who = f"{surnames[0]} and {surnames[1]}"
        else:
            who = f"{surnames[0]} et al."
        venue = self.venue.split(";", 1)[0].strip() or self.year
        return f"{who}, {venue}" if venue else who


#: a four-digit year, and an arXiv identifier (new style, optional version)
YEAR = re.compile(r"\b(19|20)\d{2}\b")
ARXIV = re.compile(r"(?:arxiv:\s*)?(\d{4}\.\d{4,5})(?:v\d+)?", re.IGNORECASE)


def _surname(name: str) -> str:
    """The last word of ``name`` that is not an initial (``Castillo`` in ``Andrés C.
    Castillo J.``)."""
    words = [w for w in name.split() if not re.fullmatch(r"[A-Z]\.(-?[A-Z]\.)*", w)]
    return words[-1] if words else name


def paper(key: str, *, title: str, source: str = "", reference: str = "",
          venue: str = "") -> Paper:
    """Declare a paper; its claims then use ids ``key.<...>``.

    Parameters
    ----------
    key
        Lower-case identifier (``[a-z][a-z0-9_]*``), the first component of the claim ids.
    title
        The paper's title, shown by ``flbounds list``, ``show`` and the reports.
    source
        Where the text is: a file name, an arXiv id or a DOI.
    reference
        The authors, as a reader cites them.
    venue
        Where and when it appeared (``"ICML 2024"``; an arXiv-only paper: its year).

    Returns
    -------
    Paper
        The declared paper. Declaring the same paper again is allowed; declaring a key
        with a different title, source or reference raises ``ValueError``.
    """
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        raise ValueError(f"paper key must match {KEY_PATTERN.pattern!r}, got {key!r}")
    for name, value in (("title", title), ("source", source), ("reference", reference),
                        ("venue", venue)):
        if not isinstance(value, str):
            raise ValueError(f"paper {name} must be a string, got {type(value).__name__}")
    if not title.strip():
        raise ValueError(f"paper title must not be empty (paper {key!r})")
    declared = Paper(source=source, title=title, key=key, reference=reference, venue=venue)
    known = _PAPERS.get(key)
    if known is not None and known != declared:
        raise ValueError(f"paper {key!r} is already declared differently: {known}")
    if known is None:
        caller = inspect.currentframe().f_back
        _DECLARED_BY[key] = caller.f_globals.get("__name__", "") if caller else ""
    _PAPERS[key] = declared
    return declared


def declared(key: str) -> Paper | None:
    """The paper declared under ``key`` so far (no plugin loading), or None."""
    return _PAPERS.get(key)


def declared_keys() -> set[str]:
    """Keys of the papers declared so far."""
    return set(_PAPERS)


def declared_by(key: str) -> str:
    """Name of the module that declared paper ``key`` ('' if unknown)."""
    return _DECLARED_BY.get(key, "")


def forget(keys: Iterable[str]) -> None:
    """Withdraw declarations (those of a plugin that failed to load)."""
    for key in list(keys):
        _PAPERS.pop(key, None)
        _DECLARED_BY.pop(key, None)


class PaperTable(Mapping):
    """Read-only view key -> :class:`Paper` that loads the plugins before it is read."""

    def __init__(self, load: Callable[[], object]):
        self._load = load

    def _table(self) -> dict[str, Paper]:
        self._load()
        return _PAPERS

    def __getitem__(self, key: str) -> Paper:
        return self._table()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(dict(self._table()))

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return f"PaperTable({dict(self._table())!r})"
