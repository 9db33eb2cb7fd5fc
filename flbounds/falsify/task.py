r"""An attack as a ledger task: ``attack:<claim id>``, run and stored like a claim.

:func:`attack_task` builds the object the runner uses (``id``, ``check(seed=, profile=)``,
``params``, ``module``, ``expected_for``, ``reproducer``), so an attack goes through the same
runner, process pool, Dask path, results store and ``--resume`` as a claim. The result row's
``attack`` field carries the fixed ratio, the attacked ratio, the evaluations, the witness,
the verdict and, where a performance-estimation worst case exists, whether the attack is
tight (within :data:`TIGHT` of it).

The attack's budget travels in the profile: ``quick`` and ``full`` use the surface's
budgets, ``budget=N`` uses N evaluations (see :func:`budget_profile`).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from flbounds.ledger.api.registry import claim_seed_sequence, get, versions
from flbounds.ledger.api.result import CheckResult, Evidence, Tolerance, to_jsonable
from flbounds.ledger.api.taskkey import task_key

from .search import search
from .shrink import shrink
from .surfaces import Surface, get_surface

PREFIX = "attack:"
#: an attack within this distance of the PEP worst-case ratio is marked tight
TIGHT = 1e-3
#: improvements kept in a stored history (the first and the last ones)
HISTORY_KEPT = 40

#: optional live progress, ``callback(task id, evaluations, best ratio)``; set by the CLI
#: when attacks run in this process (pool and Dask workers report per finished task)
PROGRESS: list[Callable[[str, int, float], None]] = []


def budget_profile(budget: int) -> str:
    """The profile string that runs an attack with ``budget`` evaluations."""
    if isinstance(budget, bool) or not isinstance(budget, int | np.integer) or budget < 1:
        raise ValueError(f"budget must be a positive integer, got {budget!r}")
    return f"budget={int(budget)}"


@dataclass(frozen=True)
class AttackTask:
    """The ledger task ``attack:<claim id>`` (same interface as a registered claim)."""

    surface: Surface
    claim: object

    @property
    def id(self) -> str:
        return PREFIX + self.surface.claim_id

    # identity of the attacked claim
    paper = property(lambda self: self.claim.paper)
    paper_key = property(lambda self: self.claim.paper_key)
    ref = property(lambda self: self.claim.ref)
    kind = property(lambda self: self.claim.kind)
    statement = property(lambda self: self.claim.statement)
    # its validator reads the attacked claim's result predicates (task_key's code version)
    result_modules = property(lambda self: getattr(self.claim, "result_modules", ()))

    @property
    def module(self) -> str:
        return self.surface.module

    def budget(self, profile: str) -> int:
        if profile in self.surface.budget:
            return int(self.surface.budget[profile])
        if profile.startswith("budget="):
            value = profile.split("=", 1)[1]
            if value.isdigit() and int(value) >= 1:
                return int(value)
        raise ValueError(f"profile must be one of {sorted(self.surface.budget)} or "
                         f"'budget=N', got {profile!r}")

    def params(self, profile: str) -> dict:
        return {"budget": self.budget(profile), "method": self.surface.method}

    def expected_for(self, profile: str) -> str:
        if self.surface.expected is not None:
            return self.surface.expected
        return self.claim.expected_for("full" if profile == "full" else "quick")

    def reproducer(self, profile: str, seed: int) -> str:
        return (f"flbounds falsify {self.surface.claim_id} --budget {self.budget(profile)} "
                f"--seed {seed}")

    def check(self, *, seed: int = 0, profile: str = "quick") -> CheckResult:
        """Run the attack once; an exception becomes an ``error`` row, as for a claim."""
        params = self.params(profile)
        start = time.perf_counter()
        try:
            ev = self._evidence(seed, params["budget"])
            fields = dict(measured=ev.measured, theoretical=ev.theoretical,
                          relation=ev.relation, tolerance=ev.tolerance, verdict=ev.verdict(),
                          details=ev.details, reason=ev.reason, attack=ev.attack,
                          traceback="")
        except Exception as exc:  # a failing attack is a result, not a crash of the run
            fields = dict(measured=None, theoretical=None, relation="", tolerance={},
                          verdict="error", details={}, reason=f"{type(exc).__name__}: {exc}",
                          traceback=traceback.format_exc())
        elapsed = time.perf_counter() - start
        if fields.get("attack"):
            fields["attack"] = {**fields["attack"], "elapsed_s": elapsed}
        row = dict(id=self.id, paper=self.paper, ref=self.ref, kind=self.kind,
                   statement=self.statement, expected=self.expected_for(profile),
                   reproducer=self.reproducer(profile, seed), params=params, seed=seed,
                   elapsed_s=elapsed, versions=versions(), profile=profile,
                   task_key=task_key(self, profile, seed), **fields)
        return CheckResult.from_dict(to_jsonable(row))

    def _evidence(self, seed: int, budget: int) -> Evidence:
        s = self.surface
        # the search starts from the claim's own instances, the worst first (so the attacked
        # ratio is at least the fixed ratio for any budget)
        fixed_ratio, starts = s.fixed_ratio()
        progress = None
        if PROGRESS:
            callback = PROGRESS[-1]
            progress = lambda n, best: callback(self.id, n, best)  # noqa: E731
        attack = search(s.ratio, s.space, budget=budget, method=s.method,
                        seed=claim_seed_sequence(seed, self.id),
                        validator=s.effective_validator(),
                        starts=starts, progress=progress)
        tol = Tolerance.rounding(s.tolerance, s.tolerance_why or "exact comparison")
        ev = Evidence(measured=attack.best_ratio, theoretical=1.0, relation="<=", tolerance=tol)
        summary = _summary(s, attack, fixed_ratio, ev.verdict())
        reason = "" if ev.verdict() == "violated" else (
            f"attacked: best ratio {attack.best_ratio:.6g} after {attack.evaluations} "
            f"evaluations")
        return Evidence(measured=attack.best_ratio, theoretical=1.0, relation="<=",
                        tolerance=tol, reason=reason, attack=summary,
                        details={"history": _short_history(attack.history),
                                 "note": s.note})


def _summary(s: Surface, attack, fixed_ratio: float, verdict: str) -> dict:
    pep_ratio, pep_error = None, ""
    if s.pep is not None:
        try:
            pep_ratio = s.pep()
        except Exception as exc:  # an SDP that fails its gap check leaves "tight" unknown
            pep_error = f"{type(exc).__name__}: {exc}"
    tight = None if pep_ratio is None else bool(abs(attack.best_ratio - pep_ratio) <= TIGHT)
    out = {"fixed_ratio": fixed_ratio, "best_ratio": attack.best_ratio,
           "evaluations": attack.evaluations, "rejected": attack.rejected,
           "witness": attack.witness, "verdict": verdict, "tight": tight,
           "pep_ratio": pep_ratio, "method": attack.method, "restarts": attack.restarts,
           "budget": attack.budget, "threshold": s.threshold}
    if pep_error:
        out["pep_error"] = pep_error
    if verdict == "violated" and s.shrink and attack.witness:
        small = shrink(s.ratio, s.space, attack.witness, threshold=s.threshold,
                       validator=s.effective_validator())
        out["minimal_witness"], out["minimal_ratio"] = small.witness, small.ratio
    return out


def _short_history(history) -> list:
    history = list(history)
    if len(history) > HISTORY_KEPT:
        history = history[:HISTORY_KEPT // 2] + history[-HISTORY_KEPT // 2:]
    return history


def attack_task(task_id: str) -> AttackTask:
    """The task ``attack:<claim id>``; ``ValueError`` for an unknown claim or surface."""
    if not task_id.startswith(PREFIX):
        raise ValueError(f"attack task ids start with {PREFIX!r}, got {task_id!r}")
    claim_id = task_id[len(PREFIX):]
    surface = get_surface(claim_id)
    return AttackTask(surface=surface, claim=get(claim_id))
