"""Where tasks run: this process, the local worker pool, or a Dask distributed cluster.

Every backend offers the same small interface to the runner: ``capacity()`` (tasks it can
start now), ``submit(task)`` (returns replies that failed at once), ``busy()``,
``wait(timeout)`` (replies that arrived) and ``close(kill=)``. A reply is ``{"row": dict}``
or ``{"fail": reason}``.
"""

from __future__ import annotations

import time
import traceback

from .tasks import execute
from .workers import Task, WorkerPool

__all__ = ["DaskExecutor", "InlineExecutor", "SchedulerError", "WorkerPool", "connect"]


class SchedulerError(RuntimeError):
    """The Dask scheduler could not be reached (a usage error for the CLI)."""


class InlineExecutor:
    """Runs each task in this process when it is submitted (no time limit possible)."""

    #: submitting runs the task: a reply is handed on before the next task is submitted
    runs_inline = True

    def __init__(self):
        self._done: list[tuple[Task, dict]] = []

    def capacity(self) -> int:
        # none while a reply waits to be handed on: the runner stores each task's result
        # before it runs the next (a run killed mid-way keeps what it finished)
        return 0 if self._done else 1

    def busy(self) -> int:
        return len(self._done)

    def submit(self, task: Task) -> list[tuple[Task, dict]]:
        try:
            reply = {"row": execute(*task)}
        except Exception as exc:  # noqa: BLE001 - the task failed, the run goes on
            reply = {"fail": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        self._done.append((task, reply))
        return []

    def wait(self, timeout: float | None) -> list[tuple[Task, dict]]:
        out, self._done = self._done, []
        return out

    def close(self, *, kill: bool = False) -> None:
        self._done = []


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


class DaskExecutor:
    """Tasks on a Dask cluster. A worker that dies mid-task has its task rerun elsewhere by
    the scheduler; a task past ``timeout`` is reported as timed out and cancelled (the
    worker thread computing it cannot be interrupted, so it finishes in the background)."""

    def __init__(self, scheduler, *, timeout: float | None = None):
        self.client = connect(scheduler)
        self._own = self.client is not scheduler
        self.timeout = timeout
        self._futures: dict = {}
        self._count = 0

    def capacity(self) -> int:
        # no more tasks than worker threads, so a task's clock starts when it can run
        # (and its lease is not held while it waits in the scheduler's queue)
        try:
            threads = sum(self.client.nthreads().values())
        except Exception:  # noqa: BLE001 - scheduler briefly unreachable: one at a time
            threads = 1
        return max(threads, 1) - len(self._futures)

    def busy(self) -> int:
        return len(self._futures)

    def submit(self, task: Task) -> list[tuple[Task, dict]]:
        self._count += 1
        future = self.client.submit(execute, *task, pure=False,
                                    key=f"{task[0]}-{task[1]}-{task[2]}-{self._count}")
        self._futures[future] = (task, time.monotonic())
        return []

    def wait(self, timeout: float | None) -> list[tuple[Task, dict]]:
        from distributed import wait as dask_wait

        if not self._futures:
            return []
        limit = timeout
        if self.timeout:
            first = min(t0 for _, t0 in self._futures.values()) + self.timeout
            limit = max(first - time.monotonic(), 0.0) if limit is None \
                else min(limit, max(first - time.monotonic(), 0.0))
        try:
            dask_wait(list(self._futures), timeout=limit, return_when="FIRST_COMPLETED")
        except TimeoutError:
            pass
        return self._collect()

    def _collect(self) -> list[tuple[Task, dict]]:
        out, now = [], time.monotonic()
        for future, (task, t0) in list(self._futures.items()):
            if future.done():
                del self._futures[future]
                try:
                    out.append((task, {"row": future.result()}))
                except Exception as exc:  # noqa: BLE001 - e.g. KilledWorker after retries
                    out.append((task, {"fail": f"{type(exc).__name__}: {exc}"}))
            elif self.timeout and now - t0 >= self.timeout:
                del self._futures[future]
                future.cancel()
                out.append((task, {"fail": f"timed out after {self.timeout:g} s",
                                   "elapsed_s": now - t0}))
        return out

    def close(self, *, kill: bool = False) -> None:
        for future in self._futures:
            future.cancel()
        self._futures = {}
        if self._own:
            self.client.close()
