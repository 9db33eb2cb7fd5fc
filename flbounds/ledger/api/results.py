r"""Numbered results: one object per theorem, lemma, corollary, ..., with parts and hypotheses.

A result is declared once, in the module (or folder) of the paper that holds its claims::

    from flbounds.ledger import claim, hypothesis, result

    @hypothesis("A1", "every client participates with q_i > 0")
    def a1(*, q):
        return bool(np.all(np.asarray(q) > 0))

    @hypothesis("step", "eta <= q_min^{3/2} / (8 L sqrt N)")
    def step_condition(*, step, q_min, L, n):
        return step <= q_min**1.5 / (8 * L * np.sqrt(n)) * (1 + 1e-12)

    LEMMA4 = result("focus.lemma4", ref="Lemma 4", title="FOCUS consensus lemma",
                    parts={"rate": "E Xi_{r+1} <= (1 - q_min/3) Xi_r + c eta^2 N^2 G (eq. (97))",
                           "constant": "c = 16/(3 q_min)"},
                    hypotheses=(a1, step_condition))

    @claim("focus.lemma4.consensus", result=LEMMA4, parts=("rate",), ...)
    def consensus(*, rng, ...):
        ...
        return Evidence(..., instance=dict(q=q, step=step, q_min=q_min, L=L, n=n))

A :class:`Hypothesis` is a predicate on an *instance*: a mapping of named values (numbers,
arrays, a problem, a participation process). Its keyword-only parameters name the values it
needs; :meth:`Hypothesis.evaluate` returns ``True`` / ``False``, or ``None`` when the instance
lacks one of them. The ledger evaluates every hypothesis of the parts a claim checks on the
instances the claim's :class:`~flbounds.ledger.Evidence` carries
(:func:`flbounds.ledger.api.judge.judge`):

- a hypothesis that is false on an instance makes the claim ``not-applicable`` (naming it),
  unless the claim declares it ``outside`` on purpose (then it is reported, not enforced);
- ``violated`` needs every hypothesis evaluated and true on every instance, those declared
  ``outside`` included: a verdict that accuses the paper must rest on an instance that meets
  the printed statement's hypotheses.

A result's printed bound is the :func:`~flbounds.ledger.api.bounds.bound` registered under the
result's id (or ``<result id>.<name>``); :attr:`Result.bounds` finds them.
"""

from __future__ import annotations

import inspect
import os
import pathlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache

import numpy as np

#: kinds of numbered results, as the papers name them
RESULT_KINDS = ("theorem", "lemma", "corollary", "proposition", "remark", "example",
                "algorithm", "table", "figure", "assumption", "definition", "equation",
                "section")
_ID = re.compile(r"[a-z][a-z0-9_]*(\.[A-Za-z0-9_]+)+")
_PART = re.compile(r"[A-Za-z0-9_]+")
_RESULTS: dict[str, Result] = {}


@dataclass(frozen=True)
class Hypothesis:
    """A hypothesis of a result: a name, the paper's wording, and a predicate on an instance.

    Parameters
    ----------
    name, wording : str
        Its short, stable name (a claim's ``outside`` names it) and the paper's wording.
    predicate, parts
        Keyword-only arguments (the instance's values it needs) -> a truth value; the parts
        of the result it applies to (a tuple of part ids; None: all).
    """

    name: str
    wording: str
    predicate: Callable[..., object]
    parts: tuple[str, ...] | None = None

    @property
    def needs(self) -> tuple[str, ...]:
        """The instance values the predicate reads (its parameter names)."""
        return _signature(self.predicate)[0]

    @property
    def label(self) -> str:
        return f"{self.name}: {self.wording}"

    def only(self, *parts: str) -> Hypothesis:
        """The same hypothesis, restricted to ``parts`` of the result it is given to."""
        return replace(self, parts=_part_ids(parts, f"hypothesis {self.name!r}: only"))

    def missing(self, instance: Mapping) -> list[str]:
        return [n for n in self.needs if n not in instance]

    def evaluate(self, instance: Mapping) -> bool | None:
        """True / False on ``instance``; None when the instance lacks a value it needs."""
        if not isinstance(instance, Mapping):
            raise ValueError(f"instance must be a mapping of named values, got "
                             f"{type(instance).__name__}")
        needs, names, takes_all = _signature(self.predicate)
        if any(n not in instance for n in needs):
            return None
        args = dict(instance) if takes_all else {n: instance[n] for n in names if n in instance}
        value = self.predicate(**args)
        if value is None:  # np.all(None) is False: a missing return must not read as "fails"
            raise ValueError(f"hypothesis {self.name!r}: its predicate returned None, not a "
                             "truth value")
        if isinstance(value, bool | np.bool_):
            return bool(value)
        return bool(np.all(value))


def _signature(predicate) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """(values the predicate needs, every keyword it takes, whether it takes ``**kw``), read
    once per predicate (``inspect.signature`` costs ~50 us; an attack evaluates thousands)."""
    try:
        return _cached_signature(predicate)
    except TypeError:  # an unhashable callable object
        return _cached_signature.__wrapped__(predicate)


@cache
def _cached_signature(predicate) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    params = inspect.signature(predicate).parameters.values()
    keywords = [p for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return (tuple(p.name for p in keywords if p.default is inspect.Parameter.empty),
            tuple(p.name for p in keywords), any(p.kind is p.VAR_KEYWORD for p in params))


def hypothesis(name: str, wording: str, *, parts: Iterable[str] | None = None):
    """Decorator: turn a predicate into a :class:`Hypothesis` called ``name``.

    Parameters
    ----------
    name, wording, parts
        As :class:`Hypothesis`'s (``parts``: an iterable of part ids).

    Returns
    -------
    callable
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"hypothesis name must be a non-empty text, got {name!r}")
    if not isinstance(wording, str) or not wording.strip():
        raise ValueError(f"hypothesis {name!r}: wording must be a non-empty text")

    def make(predicate):
        if not callable(predicate):
            raise ValueError(f"hypothesis {name!r}: predicate must be callable")
        return Hypothesis(name, wording, predicate, None if parts is None else _part_ids(
            parts, f"hypothesis {name!r}: parts"))
    return make


def _part_ids(parts, what: str) -> tuple[str, ...]:
    """``parts`` as a tuple of part ids (one id may be given as a text)."""
    parts = (parts,) if isinstance(parts, str) else tuple(parts)
    if not all(isinstance(p, str) and _PART.fullmatch(p) for p in parts):
        raise ValueError(f"{what} must be part ids (words), got {parts!r}")
    return parts


@dataclass(frozen=True)
class Part:
    """One separate assertion of a result (the coverage table lists them).

    Attributes
    ----------
    id, text, unchecked : str
        Its short id, its text and, when no claim can check it, the reason ("": checkable).
    """

    id: str
    text: str
    unchecked: str = ""


@dataclass(frozen=True)
class Result:
    """A numbered result of a paper (see the module docstring), made by :func:`result`.

    Attributes
    ----------
    id, ref, title, kind, parts, hypotheses, not_checked, statement
        As the arguments of :func:`result` (``parts``: :class:`Part` objects by id).
    module, file, line, extra
        Where it is declared, and anything the declaring module attaches.
    """

    id: str
    ref: str
    title: str
    kind: str
    parts: dict[str, Part]
    hypotheses: tuple[Hypothesis, ...] = ()
    not_checked: str = ""
    module: str = ""
    statement: str = ""
    extra: dict = field(default_factory=dict)
    file: str = ""  # where the result(...) declaration is
    line: int = 0

    @property
    def where(self) -> str:
        """``file:line`` of the declaration (relative to the working directory if inside)."""
        if not self.file:
            return f"{self.module}:?"
        path = pathlib.Path(self.file).resolve()
        try:
            path = path.relative_to(pathlib.Path.cwd().resolve())
        except ValueError:
            pass
        return f"{os.fspath(path)}:{self.line}"

    @property
    def paper_key(self) -> str:
        return self.id.split(".", 1)[0]

    def part(self, part_id: str) -> str:
        """The qualified id ``<result id>:<part>`` (``ValueError`` for an unknown part)."""
        if part_id not in self.parts:
            raise ValueError(f"result {self.id!r} has no part {part_id!r} "
                             f"(parts: {', '.join(self.parts)})")
        return f"{self.id}:{part_id}"

    def hypotheses_for(self, parts: Iterable[str] | None = None) -> list[Hypothesis]:
        """The hypotheses that apply to ``parts`` (every part when None)."""
        wanted = set(self.parts if parts is None else parts)
        return [h for h in self.hypotheses if h.parts is None or wanted & set(h.parts)]

    def evaluate(self, instance: Mapping, parts: Iterable[str] | None = None) -> dict:
        """``{hypothesis label: True | False | None}`` on one instance."""
        return {h.label: h.evaluate(instance) for h in self.hypotheses_for(parts)}

    @property
    def bounds(self) -> list:
        """The printed bounds registered under this result's id or ``<id>.<name>``
        (``flbounds bound``), unless a result with a longer id claims them."""
        from .plugins import table

        return [b for b in table("bounds").values()
                if getattr(b.result(), "id", None) == self.id]

    def claims(self) -> list:
        """The registered claims attached to a part of this result."""
        from .plugins import load_claims

        return [c for c in load_claims().values()
                if any(q.split(":", 1)[0] == self.id for q in c.parts)]


def result(id: str, *, ref: str, title: str, kind: str | None = None,
           parts: Mapping[str, str | tuple[str, str]] | None = None,
           hypotheses: Iterable[Hypothesis] = (), not_checked: str = "",
           statement: str = "") -> Result:
    """Declare a numbered result and return it.

    Parameters
    ----------
    id
        ``<paper key>.<name>`` (``focus.lemma4``, ``kvib.thm5_2``); the paper must be declared.
    ref, title
        The paper's own numbering (``"Lemma 4"``, ``"Theorem 1(a)"``, ``"Table 2"``); what
        the result is about, in a few words.
    kind
        One of :data:`RESULT_KINDS`; by default read from ``ref``'s first word.
    parts
        Part id -> the assertion's text, or -> ``(text, reason no claim checks it)``. Every
        separate assertion of the statement is a part. A result without parts gets one part
        ``"statement"``.
    hypotheses
        :class:`Hypothesis` predicates; each applies to every part unless restricted.
    not_checked, statement
        Why no claim checks this result at all (a drawing, a notation table); the statement
        as printed, in the project's notation (optional).

    Returns
    -------
    Result
    """
    from . import papers as _papers

    if not isinstance(id, str) or not _ID.fullmatch(id):
        raise ValueError(f"result id must be '<paper key>.<name>', got {id!r}")
    if _papers.declared(id.split(".", 1)[0]) is None:
        raise ValueError(f"result {id!r}: paper {id.split('.', 1)[0]!r} is not declared")
    for name, value in (("ref", ref), ("title", title)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"result {id!r}: {name} must be a non-empty text")
    for name, value in (("not_checked", not_checked), ("statement", statement)):
        if not isinstance(value, str):
            raise ValueError(f"result {id!r}: {name} must be a text, got {value!r}")
    kind = kind or _kind_of(ref)
    if kind not in RESULT_KINDS:
        raise ValueError(f"result {id!r}: kind must be one of {RESULT_KINDS}, got {kind!r}")
    table = {}
    for pid, text in (parts or {"statement": title}).items():
        if not isinstance(pid, str) or not _PART.fullmatch(pid):
            raise ValueError(f"result {id!r}: part id must be a word, got {pid!r}")
        entry = (text, "") if isinstance(text, str) else text
        if not (isinstance(entry, tuple | list) and len(entry) == 2
                and all(isinstance(x, str) for x in entry) and entry[0].strip()):
            raise ValueError(f"result {id!r}: parts[{pid!r}] must be a text or (text, reason "
                             f"no claim checks it), got {text!r}")
        table[pid] = Part(pid, *entry)
    hyps = (hypotheses,) if isinstance(hypotheses, Hypothesis) else tuple(hypotheses)
    for h in hyps:
        if not isinstance(h, Hypothesis):
            raise ValueError(f"result {id!r}: hypotheses must be Hypothesis objects "
                             f"(@hypothesis), got {h!r}")
        unknown = set(h.parts or ()) - set(table)
        if unknown:
            raise ValueError(f"result {id!r}: hypothesis {h.name!r} names unknown parts "
                             f"{sorted(unknown)}")
    names = [h.name for h in hyps]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"result {id!r}: hypotheses must have distinct names; "
                         f"{', '.join(map(repr, twice))} given twice")
    caller = inspect.currentframe().f_back
    module = caller.f_globals.get("__name__", "") if caller else ""
    declared = Result(id=id, ref=ref, title=title, kind=kind, parts=table, hypotheses=hyps,
                      not_checked=not_checked, module=module, statement=statement,
                      file=caller.f_code.co_filename if caller else "",
                      line=caller.f_lineno if caller else 0)
    known = _RESULTS.get(id)
    if known is not None and known.module != module:
        raise ValueError(f"result {id!r} declared twice ({known.module} and {module})")
    _RESULTS[id] = declared
    return declared


def _kind_of(ref: str) -> str:
    word = ref.strip().split()[0].lower().rstrip(".s") if ref.strip() else ""
    aliases = {"thm": "theorem", "cor": "corollary", "prop": "proposition", "alg": "algorithm",
               "fig": "figure", "eq": "equation", "eqs": "equation", "sec": "section",
               "def": "definition", "app": "section", "appendix": "section",
               "corollarie": "corollary"}
    return aliases.get(word, word)


def declared_results() -> dict[str, Result]:
    """The results declared so far (no plugin loading)."""
    return dict(_RESULTS)


def load_all() -> dict[str, Result]:
    """Load the claim plugins (which declare results); return every result by id."""
    from .plugins import load_claims

    load_claims()
    return dict(sorted(_RESULTS.items()))


def get(result_id: str) -> Result:
    """The declared result ``result_id`` (``ValueError`` if unknown)."""
    table = load_all()
    if result_id not in table:
        raise ValueError(f"unknown result {result_id!r} (the declared results are listed "
                         "in docs/coverage.md)")
    return table[result_id]


def forget(module_root: str) -> None:
    """Withdraw the results declared by modules under ``module_root`` (a failed plugin)."""
    for rid in [r for r, res in _RESULTS.items()
                if res.module == module_root or res.module.startswith(module_root + ".")]:
        del _RESULTS[rid]


def resolve_parts(claim_id: str, result: Result | None, parts) -> tuple[str, ...]:
    """Qualified part ids ``<result>:<part>`` of a claim declaration: ``parts`` are short ids
    of ``result`` or qualified ids (``"focus.cor1:bound"``); with a result and no parts, the
    claim checks every part of it."""
    if result is not None and not isinstance(result, Result):
        raise ValueError(f"claim {claim_id!r}: result must be a Result (flbounds.ledger."
                         f"result), got {type(result).__name__}")
    if isinstance(parts, str):
        parts = (parts,)
    parts = tuple(parts or ())
    if result is not None and not parts:
        parts = tuple(result.parts)
    out = []
    for p in parts:
        if not isinstance(p, str):
            raise ValueError(f"claim {claim_id!r}: parts must be texts, got {p!r}")
        if ":" in p:
            rid, pid = p.split(":", 1)
            res = _RESULTS.get(rid)
            if res is None:
                raise ValueError(f"claim {claim_id!r}: part {p!r} names an undeclared result")
            out.append(res.part(pid))
        elif result is None:
            raise ValueError(f"claim {claim_id!r}: part {p!r} needs result= or a qualified "
                             "id '<result>:<part>'")
        else:
            out.append(result.part(p))
    return tuple(dict.fromkeys(out))
