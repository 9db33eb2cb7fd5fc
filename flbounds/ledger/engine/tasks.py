"""One task of the engine: what its id names, running it in this process, its failure row.

A task id is a registered claim's id or ``attack:<claim id>``, an adversarial search on that
claim (:mod:`flbounds.falsify.task`); both have the same interface (``check(seed=,
profile=)``, ``params``, ``expected_for``, ``reproducer``, ``module``), so the runner, the
worker pool, Dask and the store treat them alike. The engine resolves attack ids here: the
claim registry, below it, knows claims only. A claim split into cells (its ``cells=``) also
runs as one task per cell, ``cell:<index>:<claim id>``, whose row goes to the store's cells
table; once all are in, :func:`combine_cells` makes the claim's row.
"""

from __future__ import annotations

import contextlib
import dataclasses
import subprocess
import time
import traceback
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from threadpoolctl import threadpool_limits

from flbounds.falsify.task import PREFIX as ATTACK_PREFIX
from flbounds.falsify.task import attack_task

from ..api import registry
from ..api.result import CheckResult
from ..api.taskkey import cell_key, task_key

__all__ = ["ATTACK_PREFIX", "CELL_PREFIX", "cell_task", "combine_cells", "execute",
           "execute_cell", "failure_row", "freeze_plugin_roots", "get",
           "limit_blas_for_process", "parse_cell_task", "source_commit",
           "unseen_by_fresh_workers"]


def get(task_id: str):
    """The task ``task_id`` names: a registered claim, or the attack ``attack:<claim id>``.

    Parameters
    ----------
    task_id : str
        A claim id (``focus.lemma4.consensus``) or ``attack:<claim id>``.

    Returns
    -------
    Claim or attack task
        Either has ``check(seed=..., profile=...)`` returning a :class:`CheckResult`.

    Raises
    ------
    ValueError
        For an unknown claim, or an attack on a claim without an attack surface.
    """
    if task_id.startswith(ATTACK_PREFIX):
        return attack_task(task_id)
    return registry.get(task_id)


#: task id of one cell of a claim split into cells: ``cell:<index>:<claim id>``
CELL_PREFIX = "cell:"


def cell_task(claim_id: str, index: int) -> str:
    """The task id of cell ``index`` (grid order) of claim ``claim_id``."""
    return f"{CELL_PREFIX}{index}:{claim_id}"


def parse_cell_task(task_id: str) -> tuple[str, int] | None:
    """``(claim id, index)`` of a cell's task id, None for any other task id."""
    if not task_id.startswith(CELL_PREFIX):
        return None
    index, _, claim_id = task_id.removeprefix(CELL_PREFIX).partition(":")
    return claim_id, int(index)


def execute(task_id: str, profile: str, seed: int) -> dict:
    """Run one task in whatever process this is; the unit sent to pool and Dask workers.

    BLAS runs single-threaded inside a task: a multithreaded BLAS may sum in a different
    order on a machine with another core count (so the numbers would depend on where a task
    ran), and the claims' small solves only lose time to thread start-up. Parallelism comes
    from running tasks side by side. The row gains its provenance: the git commit of the
    sources, the task's wall-clock start and end (ISO-8601, UTC) and its CPU seconds
    (``cpu_s``, of the thread that ran it: BLAS and numba run single-threaded in a task).
    """
    if task_id.startswith(CELL_PREFIX):
        return execute_cell(task_id, profile, seed)
    started, cpu = _utc_now(), time.thread_time()
    task = get(task_id)
    with _single_blas():
        row = task.check(seed=seed, profile=profile).to_dict()
    row.update(git_commit=source_commit() or "", started=started, finished=_utc_now(),
               cpu_s=time.thread_time() - cpu,
               versions={**row.get("versions", {}), **_module_versions(task.module)})
    return row


_PLANS: dict = {}


def _cell_plan(c, seed, profile):
    """A claim's cells, listed once per process for its last few (claim, seed, profile):
    a grid is a function of these alone (its generator is the claim's, made afresh), and a
    worker running several cells of one claim would otherwise list the grid for each."""
    key = (c.id, id(c), seed, profile)
    if key not in _PLANS:
        if len(_PLANS) >= 8:
            _PLANS.pop(next(iter(_PLANS)))
        _PLANS[key] = c.cell_plan(seed, profile)
    return _PLANS[key]


def execute_cell(task_id: str, profile: str, seed: int) -> dict:
    """Run one cell (task id ``cell:<index>:<claim id>``) as :func:`execute` runs a task;
    its row: claim ``id``, ``index``, ``cell`` (its parameters), ``output`` (None when it
    failed), ``error`` and ``traceback`` ('' unless it failed), ``task_key`` (the cell's,
    :func:`~flbounds.ledger.api.taskkey.cell_key`), ``claim_key``, ``profile``, ``seed``,
    ``elapsed_s``, ``cpu_s`` and the provenance of :func:`execute`. A grid that cannot be
    listed raises (the task fails, and with it the claim)."""
    claim_id, index = parse_cell_task(task_id)
    c = registry.get(claim_id)
    started, cpu = _utc_now(), time.thread_time()
    with _single_blas():
        cell = _cell_plan(c, seed, profile)[index]
        start = time.perf_counter()
        try:
            output, error, trace = c.run_cell(seed, cell), "", ""
        except Exception as exc:  # noqa: BLE001 - a failed cell is a row; the claim fails
            output, error, trace = None, f"{type(exc).__name__}: {exc}", traceback.format_exc()
        elapsed = time.perf_counter() - start
    claim_key = task_key(c, profile, seed)
    return dict(id=claim_id, index=index, cell=cell, output=output, error=error,
                traceback=trace, task_key=cell_key(claim_key, cell), claim_key=claim_key,
                profile=profile, seed=seed, elapsed_s=elapsed,
                cpu_s=time.thread_time() - cpu, git_commit=source_commit() or "",
                started=started, finished=_utc_now())


def combine_cells(claim_id: str, profile: str, seed: int, cells: list[dict]) -> dict:
    """The row of a claim split into cells, from its cells' rows (grid order): its combine
    step run in this process, with BLAS single-threaded as in a task, so the row is the one
    :func:`execute` of the claim would return (timings aside: ``elapsed_s`` and ``cpu_s``
    sum the cells' and the combine's, ``started`` is the first cell's start)."""
    c = registry.get(claim_id)
    cpu = time.thread_time()
    with _single_blas():
        result = c.combine(seed=seed, profile=profile, outputs=[r["output"] for r in cells],
                           elapsed_s=sum(r["elapsed_s"] for r in cells))
    row = result.to_dict()
    starts = [r.get("started", "") for r in cells if r.get("started")]
    row.update(git_commit=source_commit() or "", started=min(starts, default=""),
               finished=_utc_now(),
               cpu_s=time.thread_time() - cpu + sum(r.get("cpu_s", 0.0) for r in cells),
               versions={**row.get("versions", {}), **_module_versions(c.module)})
    return row


def _single_blas():
    # a pool worker limits BLAS once for its life (the limit costs tens of ms per call)
    return contextlib.nullcontext() if _blas_limited else threadpool_limits(
        limits=1, user_api="blas")


_blas_limited = False


def limit_blas_for_process() -> None:
    """Single-threaded BLAS for the rest of this process (a pool worker's, which runs only
    tasks); :func:`execute` then skips its per-task limit."""
    global _blas_limited
    threadpool_limits(limits=1, user_api="blas")
    _blas_limited = True


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@cache
def source_commit() -> str | None:
    """``git rev-parse HEAD`` of the source tree when it is a checkout (``+dirty`` when
    tracked files differ from it); ``None`` otherwise or when git is unavailable."""
    import flbounds

    root = Path(flbounds.__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    return _git_head(root)


def _git_head(root: Path) -> str | None:
    """``git rev-parse HEAD`` in ``root`` (``+dirty`` when tracked files differ from it);
    ``None`` outside a checkout or without git."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=20)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0 or not head.stdout.strip():
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def failure_row(task: tuple[str, str, int], reason: str, elapsed_s: float = 0.0) -> dict:
    """The ``error`` row of a task that did not return (timed out, worker died); for a
    cell's task, the row of its claim. Its ``task_key`` is the task's own, as in the row
    the task would have returned."""
    task_id, profile, seed = task
    if task_id.startswith(CELL_PREFIX):
        task_id = parse_cell_task(task_id)[0]
    c = get(task_id)

    def fail(**_):
        raise RuntimeError(reason)

    try:   # the claim's own row layout, with the failure as its reason
        row = dataclasses.replace(c, func=fail, cells=None).check(
            seed=seed, profile=profile).to_dict()
    except TypeError:  # a task that is not a registered claim (e.g. an attack): its identity
        row = CheckResult(
            id=task_id, paper=getattr(c, "paper", ""), ref=getattr(c, "ref", ""),
            kind=getattr(c, "kind", ""), statement=getattr(c, "statement", ""),
            measured=None, theoretical=None, relation="", tolerance={}, verdict="error",
            expected=c.expected_for(profile), reproducer=c.reproducer(profile, seed),
            params=c.params(profile), seed=seed, elapsed_s=0.0, versions={}, profile=profile,
            task_key=task_key(c, profile, seed)).to_dict()
    # the task's own key: the stand-in function above lives in this module, whose code
    # digest is not the claim's
    row.update(reason=reason, traceback="", elapsed_s=float(elapsed_s),
               task_key=task_key(c, profile, seed),
               git_commit=source_commit() or "", finished=_utc_now(),
               versions={**(row.get("versions") or {}),
                         **plugin_versions(getattr(c, "module", ""))})
    return row


@cache
def plugin_versions(module: str) -> dict[str, str]:
    """The version of the plugin whose claims live in ``module`` (its distribution's name ->
    version) and, when its sources are a git checkout other than flbounds', that checkout's
    commit (``<name> commit``); empty for flbounds' own plugins (``git_commit`` and the
    ``flbounds`` version cover them) and for a module no plugin names."""
    from ..api.plugins import CLAIMS_GROUP, entry_point_module

    for ep in registry.entry_points(CLAIMS_GROUP):
        root = entry_point_module(ep)
        if not (module == root or module.startswith(root + ".")):
            continue
        dist = getattr(ep, "dist", None)
        name = dist.name if dist is not None else ep.name
        out = {name: dist.version} if dist is not None and dist.name != "flbounds" else {}
        commit = _checkout_commit(root)
        if commit is not None:
            out[f"{name} commit"] = commit
        return out
    return {}


#: the claim plugins' module roots, looked up once for the life of a pool worker (which
#: serves one run) by :func:`freeze_plugin_roots`; None: looked up at every new module
_plugin_roots: tuple[str, ...] | None = None


def freeze_plugin_roots() -> None:
    """Read the claim plugins' entry points once for the rest of this process (a pool
    worker's): listing them scans every installed distribution, tens of ms, which
    :func:`plugin_versions` would otherwise pay for each new claim module."""
    global _plugin_roots
    from ..api.plugins import CLAIMS_GROUP, entry_point_module

    _plugin_roots = tuple(entry_point_module(ep)
                          for ep in registry.entry_points(CLAIMS_GROUP))


def _module_versions(module: str) -> dict[str, str]:
    """:func:`plugin_versions` of ``module``; once :func:`freeze_plugin_roots` ran, through
    its plugin's root (the same entry point matches the root first: any entry point whose
    root is a prefix of it is one of ``module`` too), so each plugin is looked up once."""
    if _plugin_roots is None:
        return plugin_versions(module)
    for root in _plugin_roots:
        if module == root or module.startswith(root + "."):
            return plugin_versions(root)
    return {}


def _checkout_commit(module: str) -> str | None:
    """The commit of the git checkout that tracks ``module``'s sources, unless it is
    flbounds' own (``git_commit`` records that one); None for installed sources."""
    import importlib.util

    import flbounds

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = Path(getattr(spec, "origin", None) or "").resolve()
    own = Path(flbounds.__file__).resolve().parent.parent
    if not origin.is_file() or origin.is_relative_to(own):
        return None
    try:        # tracked by the checkout around it (not merely inside one, as a venv may be)
        tracked = subprocess.run(["git", "-C", str(origin.parent), "ls-files",
                                  "--error-unmatch", origin.name], capture_output=True,
                                 timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return None
    return _git_head(origin.parent) if tracked else None


def unseen_by_fresh_workers(claims) -> list[str]:
    """The claims and attacks (``"id (module)"``) that a worker process started afresh would not
    know: it imports only the claim plugins (:func:`~flbounds.ledger.api.registry.load_all`), so a
    claim declared at run time, in a script or a module no plugin names, is not there."""
    from ..api.plugins import CLAIMS_GROUP, entry_point_module

    roots = _plugin_roots if _plugin_roots is not None else tuple(
        entry_point_module(ep) for ep in registry.entry_points(CLAIMS_GROUP))
    unseen = []
    for claim in claims:
        for module in _modules(claim):
            if not any(module == root or module.startswith(root + ".") for root in roots):
                unseen.append(f"{claim.id} ({module})")
                break
    return unseen


def _modules(task) -> list[str]:
    """The modules a worker imports to run ``task``: a claim's function's; an attack's surface
    module and its claim's."""
    if hasattr(task, "func"):
        return [getattr(task.func, "__module__", None) or "?"]
    claim = getattr(task, "claim", None)
    return [getattr(task, "module", None) or "?", *(_modules(claim) if claim is not None
                                                     else [])]

