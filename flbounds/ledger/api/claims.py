"""The registered claim: what :func:`~flbounds.ledger.claim` makes of a decorated function.

A :class:`Claim` runs its function with a generator keyed by (root seed, claim id), judges the
:class:`~flbounds.ledger.api.result.Evidence` under the hypotheses of the result parts it
checks, and returns a :class:`~flbounds.ledger.api.result.CheckResult`; a claim split into
cells (:mod:`flbounds.ledger.api.cells`) runs them one after another, or is combined from
cells the engine ran elsewhere.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import pathlib
import platform
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from . import cells as _cells
from . import papers as _papers
from . import results as _results
from .judge import judge, verdict_under
from .result import CheckResult, Evidence, reproduction_verdict, to_jsonable
from .seeds import check_seed, claim_seed_sequence
from .taskkey import task_key

PROFILES = ("quick", "full")


@dataclass(frozen=True)
class Claim:
    """A registered claim: identity, expected verdict and the quick/full parameter sets.

    Attributes
    ----------
    id, ref, kind, statement, expected, expected_full, quick, full, parts, outside, corrects, func
        As :func:`claim`'s arguments (``parts`` qualified), ``func`` the decorated function.
    cells : Cells, optional
        The claim's grid of cells (:mod:`flbounds.ledger.api.cells`); None: one task.
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
    cells: _cells.Cells | None = None

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
        declared = _papers.declared(self.paper_key)
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
        return _cells.run(self.id, self.cells, seed, cell)

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
        return _cells.grid(self.id, self.cells, rng, params)

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


@cache
def versions() -> dict:
    import numba
    import scipy

    from flbounds import __version__
    return {"flbounds": __version__, "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "numba": numba.__version__}
