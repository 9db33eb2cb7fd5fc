"""A run killed at a random moment (SIGKILL to the parent and its workers) and resumed
stores the same rows, bit for bit, as an uninterrupted run (timings aside)."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flbounds.ledger import ResultStore

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")

CLAIMS = ["focus.matrices", "kvib.lemma2_2"]          # seven fast claims
TIMINGS = {"elapsed_s", "cpu_s", "started", "finished"}


def _check(results: Path, *extra, mark: str = "") -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
               FLBOUNDS_TEST_MARK=mark)
    return subprocess.Popen([sys.executable, "-m", "flbounds", "check", *CLAIMS, "--workers",
                             "2", "--results", str(results), "--quiet", *extra], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _rows(results: Path) -> dict[str, str]:
    out = {}
    for r in ResultStore(results).load():
        row = {k: v for k, v in r.to_dict().items() if k not in TIMINGS}
        out[r.id] = json.dumps(row, sort_keys=True)
    return out


def _marked(mark: str) -> list[int]:
    needle = f"FLBOUNDS_TEST_MARK={mark}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


@pytest.fixture(scope="module")
def reference():
    folder = Path(tempfile.mkdtemp(prefix="flbounds-reference-"))
    start = time.monotonic()
    proc = _check(folder)
    assert proc.wait(timeout=900) == 0, proc.stderr.read()
    return _rows(folder), time.monotonic() - start


@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(moment=st.floats(0.0, 1.0))
def test_killed_and_resumed_run_matches_an_uninterrupted_one(reference, moment):
    rows, wall = reference
    folder = Path(tempfile.mkdtemp(prefix="flbounds-killed-"))
    mark = uuid.uuid4().hex
    run = _check(folder, mark=mark)
    time.sleep(moment * wall)          # the random moment of the kill (not a synchronisation)
    for pid in [run.pid] + [p for p in _marked(mark) if p != run.pid]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    run.wait()
    resumed = _check(folder, "--resume")
    assert resumed.wait(timeout=900) == 0, resumed.stderr.read()
    assert _rows(folder) == rows
