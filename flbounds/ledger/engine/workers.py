"""A small pool of worker processes that can stop one task: time limits, dead workers.

A worker reads tasks as JSON lines on its stdin and answers each with one JSON line on a
private copy of its stdout (its own stdout goes to stderr, so a stray print cannot corrupt
the channel). The parent knows which task each worker runs, so a task past its time limit
is stopped by killing its worker, which is then replaced; a worker that dies is replaced the
same way.

The first workers of a pool are forked from the parent when it can be done safely (Linux,
the claims already imported, no other thread in the parent): they start with every claim
loaded, in milliseconds, where a fresh interpreter spends a second or more importing them
while competing with the parent for the cores. A pool started before the claims are loaded
waits for them and forks at its first task. Otherwise, and for every replacement, a worker
is a fresh Python process (``python -c``, the parent's ``sys.path``), which sees only the
claims that the plugins declare; a pool that must fork (``fork=True``) raises instead.

Workers never outlive the parent: on Linux a worker asks for SIGKILL on the parent's death
(``PR_SET_PDEATHSIG``) and then checks that the parent is still the one that started it
(the parent may have died before the request; the worker would then never be signalled);
elsewhere a watchdog thread polls the parent. A worker also exits when its stdin closes.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import traceback
import warnings

from ..api.plugins import PluginLoadWarning
from ..api.registry import claims_loaded, load_all
from ..api.taskkey import adopt_digests, sources_fixed
from .forking import _Forked, can_fork, fork_obstacle
from .tasks import execute, freeze_plugin_roots, limit_blas_for_process

Task = tuple[str, str, int]
#: seconds a closing pool waits for idle workers to exit before killing them
CLOSE_GRACE_S = 10.0
#: seconds a new worker may take to start (imports, registry) before its task's clock runs
STARTUP_GRACE_S = 300.0

#: a worker's BLAS libraries start single-threaded (tasks run side by side already)
_SINGLE_THREADED_BLAS = {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                         "BLIS_NUM_THREADS": "1"}
_BEGIN = '{"begin": true}'
_BOOT = ("import sys, json; sys.path[:] = json.loads(sys.argv[2]); "
         "from flbounds.ledger.engine.workers import worker_main; worker_main(int(sys.argv[1]))")


class _Worker:
    def __init__(self, index: int, *, fork_closing: list[int] | None = None):
        """A spawned worker, or (``fork_closing`` given: the parent's pipe ends to the other
        workers) a forked one. Its replies reach the pool once :meth:`listen` is called."""
        self.index = index
        if fork_closing is not None:
            self.proc = _Forked(fork_closing, worker_main)
        else:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _BOOT, str(os.getpid()), json.dumps(sys.path)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8",
                bufsize=1, close_fds=True, env={**os.environ, **_SINGLE_THREADED_BLAS})
        self.task: Task | None = None
        self.deadline = float("inf")
        self.started = 0.0

    def listen(self, events: queue.Queue) -> None:
        threading.Thread(target=self._read, args=(events,), daemon=True,
                         name=f"flbounds-worker-{self.index}").start()

    def pipe_ends(self) -> list[int]:
        return [self.proc.stdin.fileno(), self.proc.stdout.fileno()]

    def _read(self, events: queue.Queue) -> None:
        for line in self.proc.stdout:
            events.put((self, line))
        events.put((self, None))   # end of stream: the worker exited

    def share(self, message: str) -> None:
        """Send a line of shared state (no reply comes); a dead worker is noticed later."""
        try:
            self.proc.stdin.write(message + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass

    def send(self, task: Task, timeout: float | None) -> bool:
        """Send ``task``; its clock starts when the worker reports that it began it."""
        self.task, self.started, self.timeout = task, time.monotonic(), timeout
        self.deadline = self.started + timeout + STARTUP_GRACE_S if timeout else float("inf")
        try:
            self.proc.stdin.write(json.dumps(list(task)) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return False
        return True

    def begin(self) -> None:
        self.started = time.monotonic()
        if self.timeout:
            self.deadline = self.started + self.timeout

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class WorkerPool:
    """Up to ``size`` worker processes; each task gets ``timeout`` seconds (None: no limit)."""

    def __init__(self, size: int, *, timeout: float | None = None, fork: bool | None = None):
        """``fork``: None forks the first workers whenever :func:`can_fork` allows it and
        spawns them otherwise; True forks them or raises ``RuntimeError`` saying why it
        cannot (for workers that must inherit this process's state, such as claims declared
        at run time, which a spawned worker never sees); False never forks. Replacements are
        always spawned."""
        self.size, self.timeout = size, timeout
        self.fork = fork
        self._events: queue.Queue = queue.Queue()
        self._idle: list[_Worker] = []
        self._busy: dict[_Worker, Task] = {}
        self._count = 0
        self._shared: str | None = None
        self._deferred: int | None = None

    def start(self, count: int | None = None) -> None:
        """Start ``count`` workers (default and at most ``size``) now, rather than at first use.

        Forked workers need the claims imported first: before :func:`load_all`, a pool that
        will fork waits for its first task (spawned workers start now and import the claims
        while the caller prepares the tasks)."""
        count = self.size if count is None else min(count, self.size)
        if len(self._idle) + len(self._busy) >= count:
            return
        if self.fork and not can_fork():
            raise RuntimeError(f"WorkerPool(fork=True) cannot fork its workers: "
                               f"{fork_obstacle() or 'can_fork() is False'}; fork=None "
                               f"spawns them instead")
        fork = can_fork() if self.fork is None else self.fork
        if fork and not claims_loaded():
            self._deferred = max(count, self._deferred or 0)
            return
        self._deferred = None
        new = []
        while len(self._idle) + len(self._busy) + len(new) < count:
            new.append(self._new_worker(fork=fork and can_fork(), after=new))
        for worker in new:        # reader threads only after every fork (see can_fork)
            worker.listen(self._events)
        self._idle += new

    def inherits(self) -> bool:
        """Whether this pool's workers are (or, not started yet, would be) forked from this
        process, so that they know the claims declared here at run time."""
        workers = self._idle + list(self._busy)
        if workers:
            return all(isinstance(w.proc, _Forked) for w in workers)
        return self.fork is not False and can_fork()

    def share(self, digests: dict[str, str]) -> None:
        """Hand the run's code digests (:func:`~flbounds.ledger.api.taskkey.fixed_digests`) to
        every worker, now and as it starts, so that no worker recomputes them."""
        self._shared = json.dumps({"digests": digests})
        for worker in self._idle + list(self._busy):
            worker.share(self._shared)

    def capacity(self) -> int:
        return self.size - len(self._busy)

    def busy(self) -> int:
        return len(self._busy)

    def submit(self, task: Task) -> list[tuple[Task, dict]]:
        """Start ``task`` on an idle (or new) worker; returns failures of dead workers."""
        if self._deferred is not None:
            self.start(self._deferred)
        for _ in range(3):
            worker = self._idle.pop() if self._idle else self._spawn()
            if worker.send(task, self.timeout):
                self._busy[worker] = task
                return []
            worker.kill()            # died while idle: replace it and try again
        return [(task, {"fail": "worker processes exit at start-up (see stderr)"})]

    def wait(self, timeout: float | None) -> list[tuple[Task, dict]]:
        """Replies that arrive within ``timeout`` seconds (first one, then any ready)."""
        out = self._expire()
        if out or not self._busy:
            return out
        limit = min(w.deadline for w in self._busy) - time.monotonic()
        if timeout is not None:
            limit = min(limit, timeout)
        try:
            event = self._events.get(timeout=max(limit, 0.0) if limit != float("inf")
                                     else None)
        except queue.Empty:
            return self._expire()
        out += self._handle(*event)
        while True:
            try:
                out += self._handle(*self._events.get_nowait())
            except queue.Empty:
                return out + self._expire()

    def close(self, *, kill: bool = False) -> None:
        """Stop every worker (idle ones exit on end of input; ``kill`` stops them at once)."""
        workers = self._idle + list(self._busy)
        for w in workers:
            if not kill:
                try:
                    w.proc.stdin.close()
                except OSError:
                    pass
        end = time.monotonic() + (0 if kill else CLOSE_GRACE_S)
        for w in workers:
            try:
                w.proc.wait(timeout=max(end - time.monotonic(), 0))
            except subprocess.TimeoutExpired:
                pass
            w.kill()
        self._idle, self._busy = [], {}

    def _spawn(self) -> _Worker:
        """A fresh worker process, listened to at once (a replacement)."""
        worker = self._new_worker(fork=False)
        worker.listen(self._events)
        return worker

    def _new_worker(self, *, fork: bool, after: list[_Worker] = ()) -> _Worker:
        """A worker; ``after``: workers made since the pool last listed its own."""
        self._count += 1
        closing = [fd for w in [*self._idle, *self._busy, *after] for fd in w.pipe_ends()]
        worker = _Worker(self._count, fork_closing=closing if fork else None)
        if self._shared is not None:
            worker.share(self._shared)
        return worker

    def _handle(self, worker: _Worker, line: str | None) -> list[tuple[Task, dict]]:
        if line is not None and line.strip() == _BEGIN and worker in self._busy:
            worker.begin()
            return []
        task = self._busy.pop(worker, None)
        if line is None:     # exited: by its own failure, or killed after a time-out
            code = worker.proc.wait()
            if worker in self._idle:
                self._idle.remove(worker)
            return [] if task is None else [(task, {"fail": f"worker exited with code {code}"
                                                             " while running the task"})]
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            reply = {"fail": f"unreadable reply from a worker: {line[:80]!r}"}
        if task is not None:
            self._idle.append(worker)
            return [(task, reply)]
        return []

    def _expire(self) -> list[tuple[Task, dict]]:
        now = time.monotonic()
        out = []
        for worker, task in list(self._busy.items()):
            if worker.deadline <= now:
                del self._busy[worker]
                worker.kill()            # its reader thread then reports end of stream
                out.append((task, {"fail": f"timed out after {self.timeout:g} s",
                                   "elapsed_s": now - worker.started}))
        return out


def worker_main(parent: int) -> None:
    """Entry point of a worker process: serve tasks from stdin until it closes."""
    _die_with_parent(parent)
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)                      # prints from claims land on stderr
    sys.stdout = sys.stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
    import numba


    numba.set_num_threads(1)   # workers share the cores already
    warnings.showwarning = _show_warning
    load_all()                 # import the claims before any task's clock starts
    limit_blas_for_process()
    freeze_plugin_roots()      # the plugins' versions: one look-up, not one per module
    with sources_fixed():      # a worker serves one run: its code is what it imported
        _serve(channel)
    # end of input: every reply is written and nothing else is held, so skip the interpreter's
    # teardown (about half a second with numba and scipy loaded, at the end of every run)
    channel.close()
    sys.stderr.flush()
    os._exit(0)


_SHOW_WARNING = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A plugin that failed to load in a (replacement) worker: one line on stderr, among the
    progress lines, saying it comes from a worker; other warnings as usual."""
    if issubclass(category, PluginLoadWarning):
        print(f"flbounds: warning: worker {os.getpid()}: {message}", file=sys.stderr,
              flush=True)
    else:
        _SHOW_WARNING(message, category, filename, lineno, file, line)


def _serve(channel) -> None:
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            message = None
        if isinstance(message, dict):      # the run's shared state, not a task: no reply
            adopt_digests(message.get("digests", {}))
            continue
        channel.write(_BEGIN + "\n")
        channel.flush()
        try:
            reply = {"row": execute(*json.loads(line))}
        except Exception as exc:  # noqa: BLE001 - reported to the parent as a failed task
            reply = {"fail": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        channel.write(json.dumps(reply) + "\n")
        channel.flush()


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):                               # pragma: no cover
            _watchdog(parent)
    else:                                                               # pragma: no cover
        _watchdog(parent)
    # the parent may have died before the request above: then no signal will ever come
    if os.getppid() != parent:
        os._exit(1)


def _watchdog(parent: int, interval: float = 0.5) -> None:
    def watch():
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="flbounds-parent-watchdog").start()
