"""Per-run costs of the ledger paid once, not per task: code digests, worker start-up."""

import json
import subprocess
import sys

import pytest

from flbounds.ledger.api import taskkey
from flbounds.ledger.engine.workers import WorkerPool


def test_code_digest_is_computed_once_per_module_within_a_run(monkeypatch):
    calls = []
    real = taskkey._file_digest
    monkeypatch.setattr(taskkey, "_file_digest", lambda p: calls.append(p) or real(p))
    with taskkey.sources_fixed():
        first = taskkey.code_digest("flbounds.ledger.api.taskkey")
        walked = len(calls)
        assert walked > 0
        with taskkey.sources_fixed():      # nested: the same memo
            assert taskkey.code_digest("flbounds.ledger.api.taskkey") == first
        assert len(calls) == walked
    assert taskkey._fixed is None
    assert taskkey.code_digest("flbounds.ledger.api.taskkey") == first
    assert len(calls) == 2 * walked          # outside a run: the tree is read again


class _Dummy:
    def listen(self, events):
        pass

    def pipe_ends(self):
        return []


def test_a_pool_starts_its_workers_up_front_but_no_more_than_needed(monkeypatch):
    made = []
    monkeypatch.setattr(WorkerPool, "_new_worker",
                        lambda self, *, fork, after=(): made.append(fork) or _Dummy())
    pool = WorkerPool(3, fork=False)
    pool.start(2)                            # two tasks: two workers
    assert made == [False, False] and pool.capacity() == 3
    pool.start()
    assert len(made) == 3
    pool.start()                             # already full
    assert len(made) == 3


def test_a_forking_pool_waits_for_the_claims(monkeypatch):
    from flbounds.ledger.engine import workers

    made = []
    monkeypatch.setattr(WorkerPool, "_new_worker",
                        lambda self, *, fork, after=(): made.append(fork) or _Dummy())
    monkeypatch.setattr(workers, "can_fork", lambda: True)
    loaded = [False]
    monkeypatch.setattr(workers, "claims_loaded", lambda: loaded[0])
    pool = WorkerPool(2, fork=True)
    pool.start()
    assert made == []                        # nothing to fork yet
    loaded[0] = True
    pool.start()
    assert made == [True, True]


_FORK_PROBE = """
import json, sys
import flbounds.cli.check as check
from flbounds.cli import main
from flbounds.ledger.engine import workers

events = []
real_select, real_init = check.select_claims, workers._Worker.__init__
check.select_claims = lambda patterns: events.append("select") or real_select(patterns)

def init(self, index, *, fork_closing=None):
    events.append("spawn" if fork_closing is None else "fork")
    real_init(self, index, fork_closing=fork_closing)

workers._Worker.__init__ = init
# a finished run closes its workers' input; each must see the end and exit by itself (a
# forked worker holding another's pipe would not), not be killed after the grace period
workers.CLOSE_GRACE_S = 300.0
killed, real_kill = [], workers._Forked.kill
workers._Forked.kill = lambda self: killed.append(self.poll() is None) or real_kill(self)
if sys.argv[2] == "spawn":
    workers.can_fork = lambda: False
code = main(["check", "focus.matrices.average_row_stochastic", "kvib.lemma2_2.special_cases",
             "--workers", "2", "--results", sys.argv[1], "--quiet"])
print(json.dumps([code, events, any(killed)]))
"""


@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_check_starts_its_workers_as_early_as_it_can_and_uses_that_pool(tmp_path, mode):
    """``flbounds check --workers 2`` in its own (single-threaded) process: forked workers
    start right after the claims are loaded (they inherit them); spawned ones (where a fork
    is not safe) before, so they import the claims meanwhile. One pool, no second one."""
    proc = subprocess.run([sys.executable, "-c", _FORK_PROBE, str(tmp_path / "r"), mode],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    code, events, killed = json.loads(proc.stdout.strip().splitlines()[-1])
    assert code == 0 and not killed
    if mode == "fork" and sys.platform.startswith("linux"):
        assert events == ["select", "fork", "fork"]
    else:
        assert events == ["spawn", "spawn", "select"]


def test_a_usage_error_after_the_pool_started_stops_its_workers(monkeypatch, tmp_path, capsys):
    import flbounds.cli.check as check
    from flbounds.cli import main

    pools = []
    real = check.start_pool
    monkeypatch.setattr(check, "start_pool", lambda *a: pools.append(real(*a)) or pools[-1])
    assert main(["check", "no.such.claim", "--workers", "2",
                 "--results", str(tmp_path / "r")]) == 2
    assert "no.such.claim" in capsys.readouterr().err
    (pool,) = pools
    assert pool.busy() == 0 and pool.capacity() == 2 and not pool._idle
    assert not (tmp_path / "r").exists()          # nothing written


_SIBLING_PROBE = """
import subprocess
from flbounds.ledger.api.registry import load_all
from flbounds.ledger.engine.workers import WorkerPool, can_fork

load_all()
pool = WorkerPool(2, fork=True)
pool.start()
first, second = pool._idle
first.proc.stdin.close()             # the second worker must not hold this pipe open
try:
    code = first.proc.wait(timeout=600)   # a hang guard only: it exits at once
except subprocess.TimeoutExpired:
    code = "still running"
pool.close(kill=True)
print(can_fork(), type(first.proc).__name__, code)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers fork on Linux")
def test_a_forked_worker_sees_the_end_of_its_input_while_its_sibling_runs():
    proc = subprocess.run([sys.executable, "-c", _SIBLING_PROBE], capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-2:] == ["_Forked", "0"]


def test_a_row_converts_in_one_pass_as_asdict_then_to_jsonable():
    import dataclasses
    import json

    import numpy as np

    from flbounds.ledger import Tolerance
    from flbounds.ledger.api.result import CheckResult, to_jsonable

    row = CheckResult(id="x.y", paper="p", ref="r", kind="lemma", statement="s",
                      measured=np.float32(0.1), theoretical=np.arange(3.0), relation="<=",
                      tolerance=dataclasses.asdict(Tolerance(1e-9, "t", "d")),
                      verdict="holds", expected="holds", reproducer="", params={"n": 3},
                      seed=0, elapsed_s=0.5, versions={},
                      details={"a": np.arange(3), (1, 2): np.float64(np.nan), 3: (np.int64(4),
                               [np.bool_(True), np.inf]), "tol": Tolerance(0.5, "n", "d"),
                               "nested": {"x": np.array([[1.5]])}, "none": None})
    plain = row.to_dict()
    assert json.dumps(plain) == json.dumps(to_jsonable(dataclasses.asdict(row)))
    assert list(plain) == [f.name for f in dataclasses.fields(CheckResult)]


def test_numeric_arrays_convert_as_their_elements():
    """The array fast path of to_jsonable gives what element-by-element conversion gives."""
    import json

    import numpy as np

    from flbounds.ledger.api.result import to_jsonable

    arrays = [np.arange(6).reshape(2, 3), np.array([True, False]), np.linspace(0, 1, 7),
              np.array([[1.5, np.inf], [np.nan, -2.0]]), np.float32([0.1, 2]), np.array(3.25),
              np.empty(0)]
    for a in arrays:
        assert json.dumps(to_jsonable(a)) == json.dumps(to_jsonable(a.tolist()))
