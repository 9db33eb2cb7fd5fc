"""Workers forked from the parent process: when it is safe, and the forked process itself.

A fork copies only the calling thread, so a process may fork its workers only while no other
thread is alive (a lock another thread held would stay held in the child). Some threads
outlive what started them: a Dask client leaves its offload thread for the rest of the
process, so no fork is safe after one (:func:`fork_obstacle` names what stands in the way).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

__all__ = ["can_fork", "fork_obstacle"]


def can_fork() -> bool:
    """True when this process may fork workers: Linux, no thread besides this one (a fork
    copies only the calling thread; a lock another thread held would stay held) and numba's
    thread pool not started (its OpenMP and TBB layers do not survive a fork). See
    :func:`fork_obstacle` for what stands in the way."""
    return fork_obstacle() is None


def fork_obstacle() -> str | None:
    """Why this process may not fork workers (:func:`can_fork`), None when it may. Another
    thread is named: some outlive what started them (e.g. the offload thread a Dask client
    leaves for the rest of the process), so no fork is safe after them."""
    if not (sys.platform.startswith("linux") and hasattr(os, "fork")):
        return f"no fork on {sys.platform}"
    if threading.active_count() != 1:
        others = [t.name for t in threading.enumerate() if t is not threading.current_thread()]
        return f"other threads are alive ({', '.join(others)})"
    parallel = sys.modules.get("numba.np.ufunc.parallel")
    if getattr(parallel, "_is_initialized", False):
        return "numba's thread pool is started"
    return None


class _Forked:
    """A worker forked from this process: the part of :class:`subprocess.Popen` the pool
    uses (pipes, poll, wait, kill). ``close`` lists the parent's pipe ends to the other
    workers, closed in the child (a worker holding another's stdin would keep it from ever
    seeing the end of its input); the child runs ``main(parent pid)`` and exits."""

    def __init__(self, close: list[int], main: Callable[[int], None]):
        task_r, task_w = os.pipe()
        reply_r, reply_w = os.pipe()
        parent = os.getpid()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:                                            # pragma: no cover - child
            try:
                for fd in (*close, task_w, reply_r):
                    os.close(fd)
                os.dup2(task_r, 0)
                os.dup2(reply_w, 1)
                os.close(task_r)
                os.close(reply_w)
                sys.stdin = open(0, encoding="utf-8", closefd=False)
                main(parent)
            finally:
                os._exit(1)
        os.close(task_r)
        os.close(reply_w)
        self.pid, self.returncode = pid, None
        self.stdin = open(task_w, "w", encoding="utf-8", buffering=1)
        self.stdout = open(reply_r, encoding="utf-8")

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:        # reaped elsewhere: it is gone all the same
                pid, status = self.pid, 255 << 8
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() >= end:
                raise subprocess.TimeoutExpired("flbounds worker", timeout)
            time.sleep(0.005)
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            os.kill(self.pid, signal.SIGKILL)
