"""One task of the engine: what its id names, running it in this process, its failure row.

A task id is a registered claim's id or ``attack:<claim id>``, an adversarial search on that
claim (:mod:`flbounds.falsify.task`); both have the same interface (``check(seed=,
profile=)``, ``params``, ``expected_for``, ``reproducer``, ``module``), so the runner, the
worker pool, Dask and the store treat them alike. The engine resolves attack ids here: the
claim registry, below it, knows claims only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import subprocess
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from threadpoolctl import threadpool_limits

from flbounds.falsify.task import PREFIX as ATTACK_PREFIX
from flbounds.falsify.task import attack_task

from ..api import registry
from ..api.result import CheckResult
from ..api.taskkey import task_key

__all__ = ["ATTACK_PREFIX", "execute", "failure_row", "get", "limit_blas_for_process",
           "source_commit"]


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


def execute(task_id: str, profile: str, seed: int) -> dict:
    """Run one task in whatever process this is; the unit sent to pool and Dask workers.

    BLAS runs single-threaded inside a task: a multithreaded BLAS may sum in a different
    order on a machine with another core count (so the numbers would depend on where a task
    ran), and the claims' small solves only lose time to thread start-up. Parallelism comes
    from running tasks side by side. The row gains its provenance: the git commit of the
    sources and the task's wall-clock start and end (ISO-8601, UTC).
    """
    started = _utc_now()
    # a pool worker limits BLAS once for its life (the limit costs tens of ms per call)
    limit = contextlib.nullcontext() if _blas_limited else threadpool_limits(
        limits=1, user_api="blas")
    task = get(task_id)
    with limit:
        row = task.check(seed=seed, profile=profile).to_dict()
    row.update(git_commit=source_commit() or "", started=started, finished=_utc_now(),
               versions={**row.get("versions", {}), **plugin_versions(task.module)})
    return row


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
    """The ``error`` row of a task that did not return (timed out, worker died)."""
    task_id, profile, seed = task
    c = get(task_id)

    def fail(**_):
        raise RuntimeError(reason)

    try:   # the claim's own row layout, with the failure as its reason
        row = dataclasses.replace(c, func=fail).check(seed=seed, profile=profile).to_dict()
    except TypeError:  # a task that is not a registered claim (e.g. an attack): its identity
        row = CheckResult(
            id=task_id, paper=getattr(c, "paper", ""), ref=getattr(c, "ref", ""),
            kind=getattr(c, "kind", ""), statement=getattr(c, "statement", ""),
            measured=None, theoretical=None, relation="", tolerance={}, verdict="error",
            expected=c.expected_for(profile), reproducer=c.reproducer(profile, seed),
            params=c.params(profile), seed=seed, elapsed_s=0.0, versions={}, profile=profile,
            task_key=task_key(c, profile, seed)).to_dict()
    row.update(reason=reason, traceback="", elapsed_s=float(elapsed_s),
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
