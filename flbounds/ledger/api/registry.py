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

A claim whose work is a grid (a bound checked in many cells, Monte Carlo cells, a sweep)
may declare its cells, so that the engine runs them as separate tasks, side by side::

    def cells_of(*, rng, n_draws, lam):              # the profile's parameters
        base = rng.standard_normal(5).tolist()       # draws shared by every cell: here
        return [dict(n_draws=n_draws, lam=x, base=base) for x in lam]

    def one_cell(*, rng, n_draws, lam, base):        # one cell's parameters
        ...
        return dict(lam=lam, gap=gap, bound=bound)   # JSON values (arrays become lists)

    @claim("mypaper.thm2.bound", ..., quick=dict(n_draws=300, lam=[0.1, 1.0]),
           cells=dict(grid=cells_of, run=one_cell))
    def bound(*, rng, cells, n_draws, lam):          # the combine step
        ...                                          # cells: the outputs, in grid order
        return Evidence(...)

``grid`` receives the claim's generator and the profile's parameters and returns the cells,
each a dict of JSON values (str keys, no two alike); it runs again in every cell's task and
in the run's own process, so it must be cheap. A cell is everything it computes from, so
that the cell is keyed by the claim's task key plus its parameters
(:func:`~flbounds.ledger.api.taskkey.cell_key`). ``run`` receives one cell's parameters and
a generator of its own, keyed by (root seed, claim id, cell parameters)
(:func:`cell_seed_sequence`): a cell's numbers depend on nothing else, neither the other
cells nor the order or place they ran. It returns a dict of JSON values. The decorated
function combines: it receives the claim's generator after ``grid`` drew from it, the
profile's parameters and ``cells``, the outputs in grid order, each as it reads back from
JSON (floats exactly, non-finite ones as the strings ``'nan'``, ``'inf'``; tuples as
lists). ``Claim.check`` runs the cells one after another in this process; the engine runs
each as a task (same store, leases, ``--resume``, Dask) and combines once all are stored;
the two give the same row, bit for bit (timings aside). A cell that fails makes the
claim's row ``error``; ``--resume`` then recomputes only the cells not stored.

Claim modules are plugins: :func:`load_all` imports every module registered under the
entry-point group ``flbounds.claims`` (see :mod:`flbounds.ledger.api.plugins`); the library
itself names none of them.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import inspect
import json
import os
import pathlib
import platform
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple

import numpy as np

from . import papers as _papers
from . import results as _results
from .judge import claim_hypotheses, judge, verdict_under
from .plugins import (
    CLAIMS_GROUP,
    entry_point_module,
    entry_points,
    import_tree,
    provide,
    warn_failed,
)
from .result import (
    KINDS,
    CheckResult,
    Evidence,
    reproduction_verdict,
    to_jsonable,
)
from .taskkey import task_key

PROFILES = ("quick", "full")
EXPECTED = ("holds", "violated", "not-applicable", "inconclusive")
#: what a claim of kind ``reproduction`` may expect (a re-run never expects a paper error)
EXPECTED_REPRODUCTION = ("reproduced", "not-reproduced", "not-applicable", "inconclusive")

_REGISTRY: dict[str, Claim] = {}
_FAILED: list[str] = []  # claim plugins whose import failed
_LOADED = False


class Cells(NamedTuple):
    """A claim's cells (see the module docstring): ``grid(rng=, **params)`` lists them,
    ``run(rng=, **cell)`` computes one."""

    grid: Callable[..., list[dict]]
    run: Callable[..., dict]


@dataclass(frozen=True)
class Claim:
    """A registered claim: identity, expected verdict and the quick/full parameter sets.

    Attributes
    ----------
    id, ref, kind, statement, expected, expected_full, quick, full, parts, outside, corrects, func
        As :func:`claim`'s arguments (``parts`` qualified), ``func`` the decorated function.
    """

    id: str
    ref: str
    kind: str
    statement: str
    expected: str
    func: Callable[..., Evidence]
    quick: dict = field(default_factory=dict)
    full: dict = field(default_factory=dict)
    expected_full: str | None = None
    parts: tuple[str, ...] = ()
    outside: dict = field(default_factory=dict)
    corrects: str | None = None
    cells: Cells | None = None

    @property
    def results(self) -> list[str]:
        """Ids of the results whose parts this claim checks (declaration order)."""
        return list(dict.fromkeys(q.split(":", 1)[0] for q in self.parts))

    @property
    def result_modules(self) -> tuple[str, ...]:
        """Modules declaring the results this claim is attached to: their predicates judge
        its verdict, so they belong to its code version (:func:`task_key`)."""
        table = _results.declared_results()
        return tuple(dict.fromkeys(table[r].module for r in self.results if r in table))

    @property
    def paper_key(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def paper(self) -> str:
        """The stored ``paper`` field: the declared paper's source (else its key)."""
        declared = PAPERS.get(self.paper_key)
        return declared.label if declared is not None else self.paper_key

    @property
    def module(self) -> str:
        return self.func.__module__

    @property
    def where(self) -> str:
        """``file:line`` of the claim function (relative to the working directory if inside)."""
        func = inspect.unwrap(self.func)
        try:
            path = pathlib.Path(inspect.getsourcefile(func) or "?").resolve()
            line = inspect.getsourcelines(func)[1]
        except (OSError, TypeError):
            return f"{self.module}:?"
        try:
            path = path.relative_to(pathlib.Path.cwd().resolve())
        except ValueError:
            pass
        return f"{os.fspath(path)}:{line}"

    def expected_for(self, profile: str) -> str:
        """The expected verdict on ``profile`` (``expected_full`` where the full-size data
        decide what the quick size cannot, e.g. an underpowered quick run)."""
        if profile == "full" and self.expected_full is not None:
            return self.expected_full
        return self.expected

    def params(self, profile: str) -> dict:
        if profile not in PROFILES:
            raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
        return dict(self.full if profile == "full" else self.quick)

    def reproducer(self, profile: str, seed: int) -> str:
        return f"flbounds check {self.id} --profile {profile} --seed {seed}"

    def rng(self, seed: int) -> np.random.Generator:
        """The claim's generator: keyed by (root seed, claim id), independent of run order."""
        return np.random.default_rng(claim_seed_sequence(seed, self.id))

    def check(self, *, seed: int = 0, profile: str = "quick", **overrides) -> CheckResult:
        """Run the claim once and return its :class:`CheckResult` (exceptions -> ``error``).

        A bad ``seed``, ``profile`` or override raises ``ValueError`` before any work."""
        check_seed(seed)
        params = self.params(profile)
        unknown = set(overrides) - set(params)
        if unknown:
            raise ValueError(f"unknown parameters for {self.id}: {sorted(unknown)}")
        params.update(overrides)

        def evidence():
            rng = self.rng(seed)
            if self.cells is None:
                return self.func(rng=rng, **params)
            cells = self._grid(rng, params)
            return self.func(rng=rng, cells=[self.run_cell(seed, c) for c in cells], **params)

        return self._judged(seed, profile, params, evidence)

    def cell_plan(self, seed: int, profile: str) -> list[dict]:
        """The cells of this claim on ``profile`` with root seed ``seed``, in grid order
        (``ValueError`` naming ``cells`` when the claim has none or its grid is malformed)."""
        if self.cells is None:
            raise ValueError(f"cells: claim {self.id} declares no cells")
        check_seed(seed)
        return self._grid(self.rng(seed), self.params(profile))

    def run_cell(self, seed: int, cell: dict) -> dict:
        """One cell's output, as it reads back from JSON (its generator keyed by the cell)."""
        out = self.cells.run(rng=np.random.default_rng(cell_seed_sequence(seed, self.id, cell)),
                             **cell)
        if not isinstance(out, dict):
            raise ValueError(f"cells: the run function of {self.id} returned "
                             f"{type(out).__name__}, not a dict")
        try:
            return json.loads(json.dumps(to_jsonable(out)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"cells: the output of a cell of {self.id} is not JSON: "
                             f"{exc}") from None

    def combine(self, *, seed: int, profile: str, outputs: list[dict],
                elapsed_s: float = 0.0) -> CheckResult:
        """The claim's row from its cells' ``outputs`` (grid order), computed elsewhere;
        ``elapsed_s``, the cells' summed time, is added to the combine's own."""
        check_seed(seed)
        params = self.params(profile)

        def evidence():
            rng = self.rng(seed)
            cells = self._grid(rng, params)
            if len(outputs) != len(cells):
                raise ValueError(f"cells: {len(outputs)} outputs for {len(cells)} cells")
            return self.func(rng=rng, cells=list(outputs), **params)

        result = self._judged(seed, profile, params, evidence)
        return dataclasses.replace(result, elapsed_s=result.elapsed_s + float(elapsed_s))

    def _grid(self, rng: np.random.Generator, params: dict) -> list[dict]:
        cells = self.cells.grid(rng=rng, **params)
        if not isinstance(cells, list | tuple) or not cells:
            raise ValueError(f"cells: the grid of {self.id} must be a non-empty list of "
                             f"dicts, got {type(cells).__name__}")
        seen = set()
        out = []
        for cell in cells:
            if not isinstance(cell, dict) or not all(isinstance(k, str) for k in cell):
                raise ValueError(f"cells: a cell of {self.id} must be a dict with str keys, "
                                 f"got {cell!r:.80}")
            try:
                plain = json.loads(json.dumps(to_jsonable(cell)))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"cells: a cell of {self.id} is not JSON: {exc}") from None
            canonical = json.dumps(plain, sort_keys=True)
            if canonical in seen:
                raise ValueError(f"cells: the grid of {self.id} lists the cell "
                                 f"{canonical:.80} twice")
            seen.add(canonical)
            out.append(plain)
        return out

    def _judged(self, seed: int, profile: str, params: dict, evidence) -> CheckResult:
        start = time.perf_counter()
        try:
            ev = evidence()
            if not isinstance(ev, Evidence):
                raise TypeError(f"claim {self.id} returned {type(ev).__name__}, not Evidence")
            judgement = judge(self.parts, ev.instance, self.outside)
            verdict, why = verdict_under(ev.verdict(), judgement)
            reason = f"{why}. {ev.reason}" if why and ev.reason else why or ev.reason
            if ev.undecided and verdict == "inconclusive":
                reason = f"{reason}. {ev.undecided}" if reason else ev.undecided
            if self.kind == "reproduction":
                verdict = reproduction_verdict(verdict)
            fields = dict(measured=ev.measured, theoretical=ev.theoretical,
                          relation=ev.relation, tolerance=ev.tolerance, verdict=verdict,
                          details=ev.details, reason=reason, traceback="",
                          hypotheses=judgement.table, attack=ev.attack,
                          worst_case=ev.worst_case)
        except Exception as exc:  # a failing claim is a result, not a crash of the run
            fields = dict(measured=None, theoretical=None, relation="", tolerance={},
                          verdict="error", details={}, reason=f"{type(exc).__name__}: {exc}",
                          traceback=traceback.format_exc(), hypotheses={})
        elapsed = time.perf_counter() - start
        row = dict(id=self.id, paper=self.paper, ref=self.ref, kind=self.kind,
                   statement=self.statement, expected=self.expected_for(profile),
                   reproducer=self.reproducer(profile, seed), params=params, seed=seed,
                   elapsed_s=elapsed, versions=versions(), profile=profile,
                   task_key=task_key(self, profile, seed), **fields)
        return CheckResult.from_dict(to_jsonable(row))


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

    split = _cells(id, cells)

    def register(func):
        if split is not None and not _accepts(func, "cells"):
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


def _cells(claim_id: str, cells) -> Cells | None:
    """``cells=`` of :func:`claim` checked: None, or a mapping of exactly ``grid`` and
    ``run`` to callables taking keyword arguments (``rng`` among them)."""
    if cells is None:
        return None
    if not isinstance(cells, Mapping) or set(cells) != {"grid", "run"}:
        raise ValueError(f"claim {claim_id!r}: cells must be dict(grid=..., run=...), got "
                         f"{cells!r:.80}")
    for name in ("grid", "run"):
        if not callable(cells[name]) or not _accepts(cells[name], "rng"):
            raise ValueError(f"claim {claim_id!r}: cells[{name!r}] must be a function taking "
                             f"the keyword argument 'rng', got {cells[name]!r:.80}")
    return Cells(cells["grid"], cells["run"])


def _accepts(func, name: str) -> bool:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return name in params and params[name].kind in (
        inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


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

    Raises ``ValueError`` naming the first pattern that matches no claim.
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


def check_seed(seed) -> int:
    """``seed`` as an int, else ``ValueError`` naming it (a non-negative integer)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def claim_seed_sequence(seed: int, claim_id: str) -> np.random.SeedSequence:
    """SeedSequence keyed by (root seed, claim id); replicates use ``.spawn`` on the result."""
    check_seed(seed)
    digest = hashlib.sha256(claim_id.encode()).digest()
    words = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))
    return np.random.SeedSequence(entropy=int(seed), spawn_key=words)


def cell_seed_sequence(seed: int, claim_id: str, cell: dict) -> np.random.SeedSequence:
    """SeedSequence of one cell: keyed by (root seed, claim id, the cell's parameters as
    canonical JSON), so a cell draws the same numbers wherever and whenever it runs."""
    base = claim_seed_sequence(seed, claim_id)
    digest = hashlib.sha256(json.dumps(cell, sort_keys=True).encode()).digest()
    words = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))
    return np.random.SeedSequence(entropy=base.entropy, spawn_key=base.spawn_key + words)


@cache
def versions() -> dict:
    import numba
    import scipy

    from flbounds import __version__
    return {"flbounds": __version__, "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "numba": numba.__version__}
