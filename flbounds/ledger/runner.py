"""Run claims on the embedded process pool or on a Dask distributed cluster.

A task is ``(claim id, profile, root seed)``. Its randomness depends on nothing else, so the
numbers are bit-identical for any worker count and either backend. Results are appended to
the store as each task finishes; ``resume=True`` skips tasks whose key (claim, params, seed,
code version) is already stored.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed

from threadpoolctl import threadpool_limits

from .registry import Claim, get, task_key
from .result import CheckResult
from .store import ResultStore

Progress = Callable[[int, int, CheckResult, float], None]


def execute(claim_id: str, profile: str, seed: int) -> dict:
    """Run one task in whatever process this is; the unit sent to pool and Dask workers.

    BLAS runs single-threaded inside a task: a multithreaded BLAS may sum in a different
    order on a machine with another core count (so the numbers would depend on where a task
    ran), and the claims' small solves only lose time to thread start-up. Parallelism comes
    from running tasks side by side.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return get(claim_id).check(seed=seed, profile=profile).to_dict()


class SchedulerError(RuntimeError):
    """The Dask scheduler could not be reached (a usage error for the CLI)."""


def run_claims(claims: Sequence[Claim], *, profile: str = "quick", seed: int = 0,
               workers: int = 1, scheduler: str | None = None,
               store: ResultStore | None = None, resume: bool = False,
               progress: Progress | None = None) -> list[CheckResult]:
    """Evaluate ``claims`` and return their results in the order given.

    Parameters
    ----------
    claims
        Registered claims (see :func:`flbounds.ledger.registry.select`).
    profile, seed
        Parameter set and root seed, shared by every task.
    workers
        Size of the local process pool; 1 runs in this process. Ignored with ``scheduler``.
    scheduler
        Address of a Dask distributed scheduler (``tcp://host:8786``), or a
        ``distributed.Client`` instance.
    store, resume
        Where each result is appended as it finishes; with ``resume`` the tasks already in the
        store are not recomputed and their stored results are returned.
    progress
        Called as ``progress(done, total, result, elapsed_s)`` after every task.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    start = time.perf_counter()
    keys = {c.id: task_key(c, profile, seed) for c in claims}
    results: dict[str, CheckResult] = {}
    history = store.load() if store is not None else []
    if resume:
        stored = {r.task_key: r for r in history if r.verdict != "error"}
        results = {cid: stored[k] for cid, k in keys.items() if k in stored}
    # longest first (by the last recorded time of each claim), so no long task starts last
    last_time = {r.id: r.elapsed_s for r in history if r.profile == profile}
    todo = sorted((c for c in claims if c.id not in results),
                  key=lambda c: -last_time.get(c.id, float("inf")))
    total, done = len(claims), len(results)

    def finished(row: dict) -> None:
        nonlocal done
        result = CheckResult.from_dict(row)
        results[result.id] = result
        if store is not None:
            store.append(result)
        done += 1
        if progress is not None:
            progress(done, total, result, time.perf_counter() - start)

    run_tasks([(c.id, profile, seed) for c in todo], workers=workers, scheduler=scheduler,
              on_result=finished)
    return [results[c.id] for c in claims]


def run_tasks(tasks: Sequence[tuple[str, str, int]], *, workers: int = 1, scheduler=None,
              on_result: Callable[[dict], None]) -> None:
    """Execute ``(claim id, profile, seed)`` tasks, calling ``on_result(row)`` as each ends.

    The backend is a Dask cluster when ``scheduler`` is given, else a spawn-based process pool
    of ``workers`` processes (``workers == 1`` runs in this process). Completion order varies;
    the rows do not.
    """
    if scheduler is not None:
        _run_dask(tasks, scheduler, on_result)
    elif workers == 1 or len(tasks) <= 1:
        for task in tasks:
            on_result(execute(*task))
    else:
        _run_pool(tasks, workers, on_result)


def _run_pool(tasks, workers: int, finished) -> None:
    # spawn: workers import the registry afresh and share no state (numba caches on disk)
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                               initializer=_worker_init)
    futures = [pool.submit(execute, *task) for task in tasks]
    try:
        for future in as_completed(futures):
            finished(future.result())
    except BaseException:
        # interrupted (Ctrl-C) or a task failed: do not wait for the tasks in flight
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        raise
    pool.shutdown(wait=True)


def _worker_init() -> None:
    """Pool workers already share the cores: parallel kernels run on one thread each there
    (their results do not depend on the thread count). On Linux a worker also receives
    SIGTERM when the parent process dies, so killing ``flbounds check`` leaves no orphans."""
    import numba

    numba.set_num_threads(1)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
        except (OSError, AttributeError):                # pragma: no cover
            pass


def connect(scheduler, timeout: float = 10.0):
    """A ``distributed.Client`` for ``scheduler`` (an address or an existing client)."""
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise SchedulerError("--scheduler needs dask: pip install 'flbounds[dask]'") from exc
    if isinstance(scheduler, Client):
        return scheduler
    try:
        return Client(scheduler, timeout=f"{timeout}s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise SchedulerError(f"cannot reach Dask scheduler {scheduler!r}: {exc}") from exc


def _run_dask(tasks, scheduler, finished) -> None:
    from distributed import as_completed as dask_completed

    client = connect(scheduler)
    own = client is not scheduler
    try:
        futures = [client.submit(execute, *task, pure=False, key=f"{task[0]}-{task[2]}-{i}")
                   for i, task in enumerate(tasks)]
        for future in dask_completed(futures):
            finished(future.result())
    finally:
        if own:
            client.close()
