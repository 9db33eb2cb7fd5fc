"""The SQLite results store: bad rows skipped and counted, JSONL import, runs and leases."""

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time

import pytest

from flbounds.cli import main
from flbounds.ledger import ResultStore, get, select
from flbounds.ledger.engine.leases import BUSY, DONE, MINE, acquire

FAST = "focus.matrices.pull_row_stochastic"


@pytest.fixture(scope="module")
def good_row():
    return get(FAST).check(seed=0).to_dict()


def _bad_lines(good: dict) -> list[bytes]:
    return [b"[1, 2, 3]", b"42", b"\xff\xfe{\"id\": 1}", b'{"id": "focus.matr',
            json.dumps({**good, "elapsed_s": None}).encode(),
            json.dumps({**good, "elapsed_s": "fast"}).encode(),
            json.dumps({**good, "verdict": "maybe"}).encode(),
            json.dumps({**good, "seed": -1}).encode()]


def _write_legacy(folder, good, bad):
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(good).encode()] + bad + [json.dumps({**good, "seed": 3}).encode()]
    (folder / "results.jsonl").write_bytes(b"\n".join(lines) + b"\n")


def test_bad_jsonl_lines_are_skipped_counted_and_reported_once(tmp_path, good_row, capsys):
    bad = _bad_lines(good_row)
    _write_legacy(tmp_path, good_row, bad)
    store = ResultStore(tmp_path)
    assert [r.seed for r in store.load()] == [0, 3]
    store.load()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"skipped {len(bad)} unreadable row(s)" in err[0]
    assert "line 2" in err[0]   # one example, with where it is


def test_legacy_file_is_imported_once(tmp_path, good_row):
    _write_legacy(tmp_path, good_row, _bad_lines(good_row))
    first, second = ResultStore(tmp_path), ResultStore(tmp_path)
    first.connect(create=True)
    second.connect(create=True)
    with sqlite3.connect(first.path) as conn:
        assert conn.execute("SELECT count(*) FROM results").fetchone()[0] == 2
    assert len(ResultStore(tmp_path).load()) == 2


def test_check_and_report_survive_a_damaged_store(tmp_path, good_row, capsys):
    _write_legacy(tmp_path, good_row, _bad_lines(good_row))
    assert main(["check", FAST, "--results", str(tmp_path), "--timeout", "0", "--quiet"]) == 0
    store = ResultStore(tmp_path)
    with store.transaction() as conn:
        for raw in (b"\xff", b"[]", b'{"id": 1}', b"not json"):
            conn.execute("INSERT INTO results (task_key, verdict, row) VALUES ('k', 'holds', ?)",
                         (raw,))
    capsys.readouterr()
    assert main(["report", "--results", str(tmp_path)]) == 0
    assert main(["check", FAST, "--results", str(tmp_path), "--resume", "--timeout", "0",
                 "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "skipped 4 unreadable row(s)" in err


def test_a_file_that_is_not_a_database_is_a_usage_error(tmp_path, capsys):
    """Every command that reads or writes the store says the same, with the way out, and
    exits 2 (``report`` once asked to run 'check', which refused the store; ``show`` said
    'none stored' and exited 0)."""
    (tmp_path / "results.sqlite").write_text("not a database")
    for argv in (["check", FAST], ["report"], ["show", FAST], ["show", "focus.lemma4"],
                 ["falsify", "focus.lemma4", "--budget", "10"]):
        assert main([*argv, "--results", str(tmp_path)]) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("flbounds: error: --results: results store")
        assert "damaged or not a results database" in err[0] and "move it aside (mv " in err[0]
        assert "run 'flbounds check' first" not in err[0]
    assert (tmp_path / "results.sqlite").read_text() == "not a database"


def test_a_run_killed_with_its_parent_is_marked_interrupted_by_the_next_run(store):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()                     # a pid no live process holds (on this host)
    with store.transaction() as conn:
        conn.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?)",
                     ("killed", "quick", 0, 3, time.time(), None, "running",
                      socket.gethostname(), gone.pid))
    run_id = store.begin_run("quick", 0, 1)
    with sqlite3.connect(store.path) as conn:
        status = dict(conn.execute("SELECT run_id, status FROM runs").fetchall())
    assert status == {"killed": "interrupted", run_id: "running"}


def _insert_lease(store, key, run_id, host, pid, expires):
    with store.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO leases VALUES (?,?,?,?,?)",
                     (key, run_id, host, pid, expires))


def test_leases_are_exclusive_and_reclaimed_from_dead_holders(store):
    assert acquire(store, "k1", "run-a", None) == (MINE, None)
    assert acquire(store, "k1", "run-a", None) == (MINE, None)          # re-entrant
    here = socket.gethostname()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        _insert_lease(store, "k2", "run-b", here, alive.pid, time.time() + 600)
        assert acquire(store, "k2", "run-a", None)[0] == BUSY         # live holder here
        _insert_lease(store, "k3", "run-b", here, dead.pid, time.time() + 600)
        assert acquire(store, "k3", "run-a", None)[0] == MINE         # holder was killed
        _insert_lease(store, "k4", "run-b", "elsewhere", 1, time.time() + 600)
        assert acquire(store, "k4", "run-a", None)[0] == BUSY         # remote, not expired
        _insert_lease(store, "k5", "run-b", "elsewhere", 1, time.time() - 1)
        assert acquire(store, "k5", "run-a", None)[0] == MINE         # remote, expired
    finally:
        alive.kill()
        alive.wait()


def test_a_stored_task_is_done_for_resume_and_for_a_run_that_began_before_it(store,
                                                                             good_row):
    from flbounds.ledger import CheckResult

    result = CheckResult.from_dict(good_row)
    store.append(result, run_id="run-a")
    assert acquire(store, result.task_key, "run-b", None) == (DONE, result)
    assert acquire(store, result.task_key, "run-c", time.time() - 3600)[0] == DONE
    assert acquire(store, result.task_key, "run-d", time.time() + 3600)[0] == MINE


def test_two_concurrent_runs_compute_each_task_once(tmp_path, child_env):
    cmd = [sys.executable, "-m", "flbounds", "check", "focus.matrices", "kvib.lemma2_2",
           "--results", str(tmp_path), "--resume", "--quiet", "--timeout", "0"]
    runs = [subprocess.Popen(cmd, env=child_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in range(2)]
    outputs = [r.communicate(timeout=600) for r in runs]
    assert [r.returncode for r in runs] == [0, 0], outputs
    store = ResultStore(tmp_path)
    ids = [r.id for r in store.load()]
    n_tasks = len(select(["focus.matrices", "kvib.lemma2_2"]))
    assert len(ids) == len(set(ids)) == n_tasks    # every task stored exactly once
    assert [r.status for r in store.runs()] == ["complete", "complete"]


def test_creating_the_schema_retries_while_another_run_holds_the_database():
    """A stale WAL snapshot makes SQLite report "database is locked" at once (no busy
    timeout): the schema is retried; any other error is not."""
    from flbounds.ledger.engine import store as store_module

    class Racing:
        def __init__(self, failures, message="database is locked"):
            self.failures, self.message, self.calls = failures, message, 0

        def execute(self, sql):
            self.calls += 1
            if self.failures:
                self.failures -= 1
                raise sqlite3.OperationalError(self.message)

        def executescript(self, sql):
            pass

    conn = Racing(2)
    store_module._initialise(conn)
    assert conn.calls == 3
    with pytest.raises(sqlite3.OperationalError, match="no such"):
        store_module._initialise(Racing(1, "no such table"))


def test_share_pep_solves_beside_the_store(tmp_path, monkeypatch):
    """`flbounds check` keeps accepted PEP solves beside the results store for the run's
    duration; a value already set (an empty one turns the reuse off) is left alone."""
    from flbounds.ledger.engine.pep_solves import PEP_SOLVES_FILE, share_pep_solves
    from flbounds.pep.sdp import CACHE_ENV

    monkeypatch.delenv(CACHE_ENV, raising=False)
    with share_pep_solves(tmp_path):
        assert os.environ[CACHE_ENV] == str(tmp_path / PEP_SOLVES_FILE)
    assert CACHE_ENV not in os.environ
    monkeypatch.setenv(CACHE_ENV, "")
    with share_pep_solves(tmp_path):
        assert os.environ[CACHE_ENV] == ""
    assert os.environ[CACHE_ENV] == ""


def test_commits_do_not_wait_for_the_disk(tmp_path):
    """WAL with synchronous=NORMAL: a commit per task is not an fsync per task."""
    store = ResultStore(tmp_path)
    conn = store.connect(create=True)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] in (b"wal", "wal")
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1     # NORMAL
