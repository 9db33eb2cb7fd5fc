r"""The claim registry: one numbered statement of a paper, one registered computation.

A claim module (``verify``, ``paper_checks`` or any package registered as a plugin) declares::

    @claim("focus.matrices.row_stochastic", ref="Appendix C, eq. (4)", kind="statement",
           statement="R(S) is row stochastic for every participation set S.",
           expected="holds", quick=dict(n_clients=6), full=dict(n_clients=12))
    def row_stochastic(*, rng, n_clients):
        ...
        return Evidence(...)

The function receives a ``np.random.Generator`` seeded from ``(root seed, claim id)`` and the
profile's parameters; it returns :class:`~flbounds.ledger.api.result.Evidence`. The registry
turns that into a :class:`~flbounds.ledger.api.result.CheckResult` (``Claim.check(seed=...,
profile=...)``).
The paper is the id's first component, a key declared with :func:`~flbounds.ledger.paper`.

A claim whose work is a grid may declare its cells, ``claim(..., cells=dict(grid=...,
run=...))``; the engine then runs them as separate tasks (:mod:`flbounds.ledger.api.cells`).
The :class:`~flbounds.ledger.api.claims.Claim` type is in :mod:`flbounds.ledger.api.claims`,
the seeds in :mod:`flbounds.ledger.api.seeds`.

Claim modules are plugins: :func:`load_all` imports every module registered under the
entry-point group ``flbounds.claims`` (see :mod:`flbounds.ledger.api.plugins`); the library
itself names none of them.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

from . import cells as _cells
from . import papers as _papers
from . import results as _results
from .claims import PROFILES, Claim, versions  # noqa: F401 - re-exported (older imports)
from .judge import claim_hypotheses
from .plugins import (
    CLAIMS_GROUP,
    entry_point_module,
    entry_points,
    import_tree,
    provide,
    warn_failed,
)
from .result import KINDS
from .seeds import cell_seed_sequence, check_seed, claim_seed_sequence  # noqa: F401

EXPECTED = ("holds", "violated", "not-applicable", "inconclusive")
#: what a claim of kind ``reproduction`` may expect (a re-run never expects a paper error)
EXPECTED_REPRODUCTION = ("reproduced", "not-reproduced", "not-applicable", "inconclusive")

_REGISTRY: dict[str, Claim] = {}
_FAILED: list[str] = []  # claim plugins whose import failed
_LOADED = False


def claim(id: str, *, ref: str, kind: str, statement: str, expected: str,
          quick: dict | None = None, full: dict | None = None,
          expected_full: str | None = None,
          result: _results.Result | None = None, parts=(), outside: dict | None = None,
          corrects: str | None = None, cells: Mapping | None = None):
    """Register the decorated function as claim ``id`` (see the module docstring).

    Parameters
    ----------
    id
        Dotted and stable; the first component is a paper key declared with
        :func:`~flbounds.ledger.paper` before the claim.
    ref, kind, statement
        The paper's own numbering, one of ``result.KINDS``, and one sentence saying what
        the paper states.
    expected, expected_full
        The verdict the toolkit asserts on every profile, unless ``expected_full`` gives a
        different one for the full profile (for a claim the quick size is too small to
        decide, which then reports ``not-applicable`` at quick size).
    quick, full
        Keyword parameters of the function per profile (``full`` defaults to ``quick``).
    result, parts
        The result (:func:`~flbounds.ledger.result`) and the ids of its parts this claim
        checks (every part when ``parts`` is empty); qualified ids ``"<result id>:<part>"``
        attach a claim to parts of several results. The ledger evaluates those parts'
        hypotheses on the instances of the claim's ``Evidence.instance``.
    outside
        Hypothesis name -> why the claim tests outside it on purpose. Such a hypothesis is
        reported, not enforced; the claim can then not come out ``violated``.
    corrects
        Id of the claim that checks the printed statement this claim's corrected statement
        replaces (for example a counterexample claim expected ``violated``). The findings
        page links the two; an id that names no registered claim fails when the plugins
        are loaded.
    cells
        ``dict(grid=..., run=...)`` for a claim whose work is a grid of cells the engine
        may run as separate tasks; the decorated function is then the combine step and
        takes the keyword ``cells`` (see the module docstring).

    Returns
    -------
    callable
    """
    key = id.split(".", 1)[0] if isinstance(id, str) else None
    if key is None or "." not in id:
        raise ValueError(f"claim id must be dotted, '<paper key>.<name>', got {id!r}")
    if _papers.declared(key) is None:
        raise ValueError(f"claim {id!r}: paper {key!r} is not declared; call "
                         f"flbounds.ledger.paper({key!r}, title=...) before its claims")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    allowed = EXPECTED_REPRODUCTION if kind == "reproduction" else EXPECTED
    if expected not in allowed:
        raise ValueError(f"expected must be one of {allowed} for a claim of kind {kind!r}, "
                         f"got {expected!r}")
    if expected_full is not None and expected_full not in allowed:
        raise ValueError(f"expected_full must be one of {allowed} for a claim of kind "
                         f"{kind!r}, got {expected_full!r}")
    qualified = _results.resolve_parts(id, result, parts)
    outside = dict(outside or {})
    if not qualified:
        raise ValueError(f"claim {id!r}: attach it to the parts it checks: result= (a "
                         "flbounds.ledger.result) and parts=, or qualified parts "
                         "'<result id>:<part>'")
    known = {h.name for _, h in claim_hypotheses(qualified)}
    unknown = sorted(set(outside) - known)
    if unknown:
        raise ValueError(f"claim {id!r}: outside names unknown hypotheses {unknown} "
                         f"(hypotheses of its parts: {sorted(known)})")
    if not all(isinstance(v, str) and v.strip() for v in outside.values()):
        raise ValueError(f"claim {id!r}: outside maps hypothesis names to a reason (text)")
    if corrects is not None and (not isinstance(corrects, str) or "." not in corrects
                                 or corrects == id):
        raise ValueError(f"claim {id!r}: corrects must be the id of another claim, "
                         f"got {corrects!r}")

    split = _cells.declared(id, cells)

    def register(func):
        if split is not None and not _cells.accepts(func, "cells"):
            raise ValueError(f"claim {id!r}: cells= is given, so {func.__qualname__} is the "
                             "combine step and must take the keyword argument 'cells'")
        if id in _REGISTRY and _REGISTRY[id].func.__qualname__ != func.__qualname__:
            raise ValueError(f"claim id {id!r} registered twice")
        q = dict(quick or {})
        _REGISTRY[id] = Claim(id=id, ref=ref, kind=kind, statement=statement,
                              expected=expected, expected_full=expected_full, func=func,
                              quick=q, full=dict(full) if full is not None else q,
                              parts=qualified, outside=outside, corrects=corrects,
                              cells=split)
        return func

    return register


def load_all() -> dict[str, Claim]:
    """Import every claim plugin once (registering its claims); return the claim table.

    A plugin that fails to import is left out as a whole (its claims and papers are
    removed again) with a :class:`~flbounds.ledger.api.plugins.PluginLoadWarning`.

    Returns
    -------
    dict of str to Claim
    """
    global _LOADED
    if not _LOADED:
        _LOADED = True  # before importing: a plugin that reads the registry must not recurse
        for ep in entry_points(CLAIMS_GROUP):
            _load_plugin(ep)
        _check_corrects()
    return dict(sorted(_REGISTRY.items()))


def _check_corrects() -> None:
    """Every ``corrects=`` names a registered claim (checked once all plugins are in)."""
    dangling = sorted(f"{c.id} -> {c.corrects}" for c in _REGISTRY.values()
                      if c.corrects is not None and c.corrects not in _REGISTRY)
    if dangling:
        raise ValueError("claims correct unknown claims (corrects= must name a registered "
                         "claim): " + ", ".join(dangling))


provide("claims", lambda: load_all())   # looked up at call time (tests replace it)


def claims_loaded() -> bool:
    """True once :func:`load_all` has imported the claim plugins in this process."""
    return _LOADED


def failed_plugins() -> list[str]:
    """Entry points of ``flbounds.claims`` that failed to import (their claims are absent)."""
    load_all()
    return list(_FAILED)


def _load_plugin(ep) -> None:
    """Import one plugin; if it fails, withdraw what its own modules registered.

    Modules outside the plugin's tree that it imported (another plugin it builds on) keep
    their papers and claims: they stay imported, so they could not register them again.
    """
    root = entry_point_module(ep)
    claims_before, papers_before = set(_REGISTRY), _papers.declared_keys()
    try:
        for _ in import_tree(root):
            pass
    except Exception as exc:  # a broken plugin must not take the others down
        for cid in set(_REGISTRY) - claims_before:
            if _in_tree(_REGISTRY[cid].module, root):
                del _REGISTRY[cid]
        _papers.forget(key for key in _papers.declared_keys() - papers_before
                       if _in_tree(_papers.declared_by(key), root))
        _results.forget(root)
        _FAILED.append(ep.name)
        warn_failed(ep, exc, "claims")


def _in_tree(module: str, root: str) -> bool:
    return module == root or module.startswith(root + ".")


#: declared papers, key -> :class:`~flbounds.ledger.api.papers.Paper` (reading it loads plugins)
PAPERS = _papers.PaperTable(load_all)


def matches(claim_id: str, pattern: str) -> bool:
    """Exact id, a dotted prefix (``focus`` matches ``focus.thm1a.rate``) or a glob."""
    return (claim_id == pattern or claim_id.startswith(pattern.rstrip(".") + ".")
            or fnmatch.fnmatchcase(claim_id, pattern))


def select(patterns: list[str] | tuple[str, ...] = ()) -> list[Claim]:
    """The registered claims matching any of ``patterns`` (all claims when none is given).

    Parameters
    ----------
    patterns : list or tuple of str, default ()
        Exact claim ids, dotted prefixes (``focus``) or globs (:func:`matches`).

    Returns
    -------
    list of Claim
        In the registry's order.

    Raises
    ------
    ValueError
        Naming the first pattern that matches no claim.
    """
    table = load_all()
    if not patterns:
        return list(table.values())
    for pattern in patterns:
        if not any(matches(cid, pattern) for cid in table):
            raise ValueError(f"no claim matches pattern {pattern!r} (see 'flbounds list')")
    return [c for cid, c in table.items() if any(matches(cid, p) for p in patterns)]


def get(claim_id: str) -> Claim:
    """The registered claim ``claim_id`` (``ValueError`` if unknown). Other tasks, such as
    the attack ``attack:<claim id>``, are the engine's: :func:`flbounds.ledger.get`."""
    table = load_all()
    if claim_id not in table:
        raise ValueError(f"unknown claim id {claim_id!r}")
    return table[claim_id]
