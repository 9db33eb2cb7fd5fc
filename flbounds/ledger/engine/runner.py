"""Run claims in this process, on a local worker pool or on a Dask distributed cluster.

A task is ``(task id, profile, root seed)``; the id is a claim id or any other id
:func:`~flbounds.ledger.engine.tasks.get` resolves (an attack). Its randomness depends on
nothing else, so the numbers are bit-identical for any worker count and either backend.
Each finished task is committed to the store at once; before a task starts, the run takes its
lease in the store, so two runs into one store compute it once, and ``resume=True`` skips
tasks whose key
(claim, params, seed, profile, code version) is already stored. A task past its time limit
becomes an ``error`` result ("timed out after N s"), its worker is replaced, the run goes on.

A claim split into cells (``claim(..., cells=...)``) runs as one task per cell, side by side
with the other tasks; each cell has its own key (the claim's plus the cell's parameters),
lease and stored row (the store's cells table), so ``resume=True`` recomputes only the cells
not stored. Once all its cells are in, the claim's row is combined in this process from
them and stored like any claim's; it is the row the one-task run gives, bit for bit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ..api.registry import Claim
from ..api.result import CheckResult
from ..api.taskkey import fixed_digests, sources_fixed, task_key
from .cellgrids import CellGrids, claim_stored
from .executors import DaskExecutor, InlineExecutor, SchedulerError, WorkerPool, connect
from .forking import can_fork, fork_obstacle
from .history import stored_history
from .leases import BUSY, DONE, Heartbeat, acquire, acquire_cell
from .store import ResultStore
from .tasks import (
    CELL_PREFIX,
    cell_task,
    execute,
    failure_row,
    source_commit,
    unseen_by_fresh_workers,
)

__all__ = ["DEFAULT_TIMEOUT_S", "SchedulerError", "connect", "execute", "failure_row",
           "longest_first", "run_claims", "run_tasks", "source_commit", "start_pool"]

Progress = Callable[[int, int, CheckResult, float], None]
#: per-task time limit of each profile, in seconds: generous (the longest quick task takes
#: seconds, the longest full one minutes), so only a hung task reaches it
DEFAULT_TIMEOUT_S = {"quick": 900.0, "full": 4 * 3600.0}
#: seconds between two looks at a task another run holds
POLL_S = 0.5


def run_claims(claims: Sequence[Claim], *, profile: str = "quick", seed: int = 0,
               workers: int = 1, scheduler=None, store: ResultStore | None = None,
               resume: bool = False, progress: Progress | None = None,
               timeout: float | None = None, pool: WorkerPool | None = None
               ) -> list[CheckResult]:
    """Evaluate ``claims`` and return their results in the order given.

    Parameters
    ----------
    claims
        Registered claims (see :func:`flbounds.ledger.api.registry.select`).
    profile, seed
        Parameter set and root seed, shared by every task.
    workers
        Size of the local worker pool. With 1 and no ``timeout`` tasks run in this process.
    scheduler
        Address of a Dask distributed scheduler (``tcp://host:8786``), or a
        ``distributed.Client`` instance.
    store, resume
        Where each result is committed as it finishes; with ``resume`` the tasks already in
        the store are not recomputed and their stored results are returned. Tasks another
        run holds are waited for, not duplicated.
    progress
        Called as ``progress(done, total, result, elapsed_s)`` after every task.
    timeout
        Seconds each task may take (None or 0: no limit); see :data:`DEFAULT_TIMEOUT_S`.
    pool
        A :class:`~flbounds.ledger.engine.workers.WorkerPool` the caller made (the command line
        makes it before it loads the claims: spawned workers import them meanwhile, forked
        ones start once they are loaded); used instead of a new pool of ``workers``
        processes, and closed at the end.

    Returns
    -------
    list of CheckResult
        One row per claim, in the order of ``claims``; a claim that raised or timed out has
        the verdict ``error`` with its traceback.
    """
    _check_options(workers, timeout)
    _check_reachable(claims, workers, scheduler, timeout, pool)
    # the executor starts before the task keys are computed and the store is read: its
    # workers get ready (fork, or import the claims) meanwhile
    tasks = None if any(getattr(c, "cells", None) is not None for c in claims) else len(claims)
    executor = pool if pool is not None else _executor(workers, scheduler, timeout, tasks)
    try:
        with sources_fixed():
            return _run_claims(claims, profile, seed, store, resume, progress, executor)
    finally:
        executor.close(kill=True)   # nothing left to stop unless the run failed early


def _run_claims(claims, profile, seed, store, resume, progress, executor):
    start = time.perf_counter()
    keys = _Keys(claims, profile, seed)
    known = stored_history(store, profile)
    results: dict[str, CheckResult] = {}
    run_id, since = "", None if resume else time.time()

    def finished(result: CheckResult, row: dict | None) -> None:
        results[result.id] = result
        if store is not None and row is not None:
            store.append(result, run_id=run_id)
        if progress is not None and (row is not None or not resumed(result)):
            progress(len(results), len(claims), result, time.perf_counter() - start)

    def resumed(result: CheckResult) -> bool:   # found stored when the run began
        return resume and result.task_key in initially_done

    initially_done = known.finished
    grids = CellGrids(profile, seed, keys, store, finished)
    if store is not None:
        run_id = store.begin_run(profile, seed, len(claims))
        grids.run_id = run_id
    grids.since = since
    # the first tasks start before the others' keys and cells are listed (those take the
    # parent a second or so, while the workers would wait): the longest of the claims not
    # split into cells, one per free slot of the executor
    first = _first_tasks(claims, known.durations, profile, seed, executor)
    for task in first:
        keys[task[0]]
    _share_digests(executor)

    def plan():
        """The run's other tasks, in :func:`_ordered_tasks`'s order."""
        keys.fill()
        _share_digests(executor)
        grids.plan(claims)
        cell_history = store.cell_records() if store is not None else []
        started = {t[0] for t in first}
        return [t for t in _ordered_tasks(claims, grids, known.durations, cell_history, profile,
                                          seed, since) if t[0] not in started]

    if store is None:
        _drive(first, executor, finished, lease=None, on_cell=grids.on_cell, plan=plan)
        return [results[c.id] for c in claims]

    def lease(task):
        if task[0] in grids.keys:
            return acquire_cell(store, grids.keys[task[0]], run_id, since)
        return acquire(store, keys[task[0]], run_id, since)

    status = "interrupted"
    try:
        with Heartbeat(store.directory, run_id):
            _drive(first, executor, finished, lease=lease, on_cell=grids.on_cell, plan=plan)
        status = "complete"
    finally:
        store.end_run(run_id, status)
    return [results[c.id] for c in claims]


class _Keys(dict):
    """The claims' task keys, each computed when first asked for (:meth:`fill`: all)."""

    def __init__(self, claims, profile, seed):
        super().__init__()
        self.claims = {c.id: c for c in claims}
        self.profile, self.seed = profile, seed

    def __missing__(self, claim_id):
        self[claim_id] = key = task_key(self.claims[claim_id], self.profile, self.seed)
        return key

    def fill(self) -> None:
        for claim_id in self.claims:
            self[claim_id]


def _share_digests(executor) -> None:
    if hasattr(executor, "share"):     # pool workers reuse the digests behind the keys
        executor.share(fixed_digests())


def _first_tasks(claims, durations: dict, profile, seed, executor) -> list:
    """The tasks to start at once: the first claims of :func:`longest_first` that are not
    split into cells, as many as the executor has free slots (none in this process: there
    a task runs when it is submitted, before the others are listed)."""
    if getattr(executor, "runs_inline", False):
        return []
    whole = [c for c in claims if getattr(c, "cells", None) is None]
    return [(c.id, profile, seed) for c in _by_durations(whole, durations)
            [:max(executor.capacity(), 0)]]


def _ordered_tasks(claims, grids: CellGrids, durations: dict, cell_history, profile, seed,
                   since):
    """The run's tasks longest first (:func:`longest_first`), a claim split into cells as
    its cells (each by its own last duration); a claim already stored is not split."""
    last = dict(durations)
    for row in cell_history:
        if row.get("profile") == profile and not row.get("error"):
            last[cell_task(row["id"], row["index"])] = float(row["elapsed_s"])
    units = []
    for c in claims:
        if c.id in grids.tasks and not claim_stored(grids, c.id):
            units += [(t, c.id) for t in grids.tasks[c.id]]
        else:
            grids.tasks.pop(c.id, None)
            units.append((c.id, c.id))
    return [(t, profile, seed) for t, _ in _longest_first(units, last)]


def longest_first(claims: Sequence[Claim], history: Sequence[CheckResult],
                  profile: str) -> list[Claim]:
    """``claims`` in the order to start them: longest first by the last duration stored for
    each in ``profile``, claims never run before at the very front (they may be long).

    With the longest tasks started first, the short ones fill the gaps at the end and the
    workers finish close together; a long task started last would run alone.
    Ties keep the given order, except among the claims never run: those take turns by paper
    (the first claim of each paper, then the second of each, ...). Claims of one paper share
    kernels, so on a first run, with nothing compiled yet, two workers starting claims of the
    same paper would often wait for one another's compilation.
    """
    return _by_durations(claims, {r.id: r.elapsed_s for r in history if r.profile == profile})


def _by_durations(claims: Sequence[Claim], last_time: dict) -> list[Claim]:
    """:func:`longest_first` from each claim's last duration (claim id -> seconds)."""
    order = _longest_first([(i, c.id) for i, c in enumerate(claims)],
                           {i: last_time[c.id] for i, c in enumerate(claims)
                            if c.id in last_time})
    return [claims[i] for i, _ in order]


def _longest_first(units: list[tuple], last_time: dict) -> list[tuple]:
    """``(unit, claim id)`` pairs in :func:`longest_first`'s order, ``last_time`` keyed by
    unit; the cells of one claim take the paper's turns one after another."""
    turn: dict[str, int] = {}
    never_run: dict[int, int] = {}
    for i, (unit, claim_id) in enumerate(units):
        if unit not in last_time:
            paper = claim_id.split(".", 1)[0]
            never_run[i] = turn.get(paper, 0)
            turn[paper] = never_run[i] + 1
    ranked = sorted(range(len(units)), key=lambda i: (never_run.get(i, float("inf")),
                                                      -last_time.get(units[i][0], 0.0)))
    return [units[i] for i in ranked]


def run_tasks(tasks: Sequence[tuple[str, str, int]], *, workers: int = 1, scheduler=None,
              on_result: Callable[[dict], None], timeout: float | None = None) -> None:
    """Execute ``(task id, profile, seed)`` tasks, calling ``on_result(row)`` as each ends.

    The backend is a Dask cluster when ``scheduler`` is given, else a pool of ``workers``
    processes (``workers == 1`` without ``timeout`` runs in this process). Completion order
    varies; the rows do not. No store, no leases.
    """
    _check_options(workers, timeout)
    tasks = list(tasks)
    _drive(tasks, _executor(workers, scheduler, timeout, len(tasks)),
           lambda result, row: on_result(row), lease=None)


def _check_options(workers, timeout) -> None:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if timeout is not None and not (isinstance(timeout, int | float) and timeout >= 0
                                    and timeout == timeout and not isinstance(timeout, bool)):
        raise ValueError(f"timeout must be a number of seconds >= 0 or None, got {timeout!r}")


def _check_reachable(claims, workers, scheduler, timeout, pool) -> None:
    """Refuse, before any work, claims that the run's worker processes would not know: a
    claim declared at run time reaches only workers forked from this process (or this process
    itself), never workers started afresh."""
    if scheduler is not None or (pool is None and workers == 1 and not timeout):
        return        # Dask's workers may be threads of this process; inline: this process
    if pool.inherits() if pool is not None else can_fork():
        return
    why = f"this process cannot fork them ({fork_obstacle() or 'fork=False'})"
    unseen = unseen_by_fresh_workers(claims)
    if unseen:
        shown = ", ".join(unseen[:5]) + (f" and {len(unseen) - 5} more" if len(unseen) > 5
                                         else "")
        raise ValueError(f"workers: claims declared at run time ({shown}) would be unknown "
                         f"to the run's worker processes: {why}; run them with workers=1 "
                         f"and no timeout, from a process with no other thread, or declare "
                         f"them in a claim plugin (docs/guide/plugins.md)")


def _executor(workers: int, scheduler, timeout: float | None, tasks: int):
    if scheduler is not None:
        return DaskExecutor(scheduler, timeout=timeout or None)
    return start_pool(workers, timeout, tasks) or InlineExecutor()


def start_pool(workers: int, timeout: float | None,
               tasks: int | None = None) -> WorkerPool | None:
    """The local pool that :func:`run_claims` would use, started now (at most ``tasks``
    workers); None when tasks run in this process (one worker and no time limit)."""
    _check_options(workers, timeout)
    if workers == 1 and not timeout:
        return None
    pool = WorkerPool(workers, timeout=timeout or None)
    pool.start(tasks)
    return pool


def _drive(tasks: list, executor, finished, *, lease, on_cell=None, plan=None) -> None:
    """Start tasks as the executor has room (each after taking its lease), hand every reply
    to ``finished(result, row)``; tasks another run holds are retried every ``POLL_S``.

    ``plan()``, when given, returns the run's other tasks: it is called once ``tasks`` are
    started, so that it runs while they do. Replies are handed on after the freed workers
    have their next tasks, so a worker does not wait while its previous result is stored
    (at once for an executor that runs tasks in this process). A cell's reply, or its row
    found stored, goes to ``on_cell(task, reply, stored)`` instead."""
    waiting, parked, replies = list(tasks), [], []
    ok = False
    try:
        while waiting or parked or replies or executor.busy() or plan is not None:
            if parked and not waiting:
                waiting, parked = parked, []
            held = []
            while waiting and executor.capacity() > 0:
                task = waiting.pop(0)
                state, stored = lease(task) if lease is not None else ("mine", None)
                if state == DONE and task[0].startswith(CELL_PREFIX):
                    on_cell(task, {"row": stored}, True)
                elif state == DONE:
                    finished(stored, None)
                elif state == BUSY:
                    held.append(task)
                else:
                    _deliver(executor.submit(task), finished, on_cell)
            parked += held
            if plan is not None:
                waiting, plan = waiting + plan(), None
                continue
            _deliver(replies, finished, on_cell)
            replies = []
            if executor.busy():
                replies = executor.wait(POLL_S if parked else None)
                if getattr(executor, "runs_inline", False):   # its next submit would run
                    _deliver(replies, finished, on_cell)      # the next task first
                    replies = []
            elif parked:
                time.sleep(POLL_S)
        ok = True
    finally:
        executor.close(kill=not ok)


def _deliver(replies, finished, on_cell=None) -> None:
    for task, reply in replies:
        if on_cell is not None and task[0].startswith(CELL_PREFIX):
            on_cell(task, reply, False)
            continue
        row = reply.get("row")
        if row is None:
            row = failure_row(task, reply.get("fail", "no result"), reply.get("elapsed_s", 0.0))
        finished(CheckResult.from_dict(row), row)
