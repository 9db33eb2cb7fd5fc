"""A killed `flbounds check` leaves no pool workers behind (Linux: parent-death signal)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")

# two long tasks (full profile), so both workers are busy when the parent is killed
SCRIPT = """
from flbounds.ledger.runner import run_tasks
run_tasks([("fedals.thm41.bound", "full", 0), ("fedals.thm41.bound", "full", 1)],
          workers=2, on_result=lambda row: None)
"""


def _children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(entry.name))
    return kids


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait(predicate, limit: float) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def test_workers_die_with_a_killed_parent():
    parent = subprocess.Popen([sys.executable, "-c", SCRIPT])
    workers = []
    try:
        # the pool has started when the parent has its two workers (plus a resource tracker)
        assert _wait(lambda: len(_children(parent.pid)) >= 3, 120), "pool did not start"
        workers = _children(parent.pid)
        time.sleep(1.0)  # let the workers enter their tasks
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        assert _wait(lambda: not any(_alive(w) for w in workers), 60), \
            f"orphaned workers still running: {[w for w in workers if _alive(w)]}"
    finally:
        if parent.poll() is None:
            parent.kill()
        for w in workers:   # a failed run must not leave its orphans behind either
            try:
                if b"spawn_main" in Path(f"/proc/{w}/cmdline").read_bytes():
                    os.kill(w, signal.SIGKILL)
            except OSError:
                pass
