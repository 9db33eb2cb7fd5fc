"""Workers never outlive a killed run; a task past its time limit is stopped, the run goes on.

Worker processes are found by an environment marker the test gives the run (workers inherit
it), so a worker is found even after it has been re-parented. Liveness is polled with
generous deadlines; nothing waits on a fixed sleep for something to happen.
"""

import os
import random
import select
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from flbounds.ledger.engine.runner import run_tasks

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")

# two long tasks (full profile), so both workers are busy when the parent is killed; the
# parent prints "begun" each time a worker reports that it began its task
SCRIPT = """
from flbounds.ledger.engine import workers
from flbounds.ledger.engine.runner import run_tasks

begin = workers._Worker.begin
def announce(self):
    begin(self)
    print("begun", flush=True)
workers._Worker.begin = announce
run_tasks([("fedals.thm41.bound", "full", 0), ("fedals.thm41.bound", "full", 1)],
          workers=2, timeout=3600, on_result=lambda row: None)
"""
#: rounds of the start-up race; FLBOUNDS_STARTUP_KILLS=50 for the acceptance run
ROUNDS = int(os.environ.get("FLBOUNDS_STARTUP_KILLS", "3"))


def _marked(mark: str) -> list[int]:
    """Live (non-zombie) processes carrying the environment marker."""
    needle = f"FLBOUNDS_TEST_MARK={mark}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0") \
                        and _alive(int(entry.name)):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait(predicate, limit: float, every: float = 0.05) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(every)
    return predicate()


def _start_run(mark: str) -> subprocess.Popen:
    env = dict(os.environ, FLBOUNDS_TEST_MARK=mark,
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    # unbuffered: _await_begun selects on the pipe, and a buffered readline could take both
    # "begun" lines at once, leaving the second in Python's buffer while select waits for
    # the pipe (a wait that failed once in about 30 CI runs, both workers inside their tasks)
    return subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, stdout=subprocess.PIPE,
                            bufsize=0)


def _process_table(mark: str) -> str:
    """State, kernel wait channel, CPU seconds and command of each marked process (what a
    failed wait reports: a worker blocked in a lock shows ``flock`` or ``futex``)."""
    lines = []
    for pid in _marked(mark):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            wchan = Path(f"/proc/{pid}/wchan").read_text() or "-"
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:80]
        except OSError:
            continue
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        lines.append(f"pid {pid} ppid {fields[1]} state {fields[0]} wchan {wchan} "
                     f"cpu {cpu:.1f} s: {cmd.decode(errors='replace')}")
    return "\n".join(lines) or "no marked process alive"


def _await_begun(parent: subprocess.Popen, count: int, limit: float = 300,
                 mark: str = "") -> None:
    """Block until the parent has announced ``count`` begun tasks (or fail after limit,
    listing the run's processes)."""
    end = time.monotonic() + limit
    seen = 0
    while seen < count:
        ready, _, _ = select.select([parent.stdout], [], [], max(end - time.monotonic(), 0))
        assert ready, (f"only {seen} of {count} tasks began within {limit} s; load "
                       f"{os.getloadavg()[0]:.1f}; processes:\n{_process_table(mark)}")
        line = parent.stdout.readline()
        assert line, "the run ended before its tasks began"
        seen += line.strip() == b"begun"


def _kill_all(mark: str) -> None:
    for pid in _marked(mark):   # a failed round must not leave its orphans behind
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _kill_parent_then_expect_no_workers(parent: subprocess.Popen, mark: str) -> list[int]:
    workers = [p for p in _marked(mark) if p != parent.pid]
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    assert _wait(lambda: not _marked(mark), 120, every=0.2), \
        f"orphaned workers still running: {_marked(mark)}"
    return workers


def test_workers_die_with_a_killed_parent():
    mark = uuid.uuid4().hex
    parent = _start_run(mark)
    try:
        _await_begun(parent, 2, mark=mark)   # both workers are inside their (long) tasks
        workers = _kill_parent_then_expect_no_workers(parent, mark)
        assert len(workers) >= 2
    finally:
        if parent.poll() is None:
            parent.kill()
        _kill_all(mark)


@pytest.fixture
def busy_cores():
    """Both cores kept busy for the duration of a test (the start-up race under load)."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    yield
    for b in burners:
        b.kill()
        b.wait()


def test_workers_die_when_the_parent_is_killed_during_start_up(busy_cores):
    rng = random.Random(20261125)
    for round_ in range(ROUNDS):
        mark = uuid.uuid4().hex
        parent = _start_run(mark)
        try:
            # kill as soon as the first worker exists (it is still starting Python), a
            # moment later, or once one worker is inside its task (the other starting)
            assert _wait(lambda m=mark: len(_marked(m)) >= 2, 300, every=0.005), \
                f"round {round_}: no worker started"
            moment = rng.choice(["first process", "random delay", "first task begun"])
            if moment == "random delay":
                time.sleep(rng.uniform(0.0, 2.0))
            elif moment == "first task begun":
                _await_begun(parent, 1, mark=mark)
            _kill_parent_then_expect_no_workers(parent, mark)
        finally:
            if parent.poll() is None:
                parent.kill()
            _kill_all(mark)


def test_a_task_past_its_time_limit_becomes_error_and_the_run_goes_on():
    rows = []
    # fedals.thm41.bound on the full profile runs for minutes; the quick tasks take well
    # under a second, so a 15 s limit separates them on any machine load
    run_tasks([("fedals.thm41.bound", "full", 0), ("kvib.lemma2_2.closed_form", "quick", 0),
               ("focus.matrices.pull_row_stochastic", "quick", 0)],
              workers=1, timeout=15, on_result=rows.append)
    verdicts = {r["id"]: (r["verdict"], r["reason"]) for r in rows}
    assert verdicts["fedals.thm41.bound"] == ("error", "timed out after 15 s")
    assert verdicts["kvib.lemma2_2.closed_form"][0] == "holds"
    assert verdicts["focus.matrices.pull_row_stochastic"][0] == "holds"
