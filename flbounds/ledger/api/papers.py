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
