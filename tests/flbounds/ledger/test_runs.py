"""Runs shared by claims (flbounds.ledger.engine.runs): a run named by one description is
computed once per store, reads back bit for bit, and waits for a run under way elsewhere."""

import multiprocessing
import os
import sqlite3
import threading

import numpy as np
import pytest

from flbounds.ledger.engine import runs
from flbounds.ledger.engine.runs import RUN_STORE_ENV, RUNS_FILE, reused_run, share_runs

CODE = "flbounds.ledger.engine.runs"


def _draws(seed):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((3, 4)) / 7.0, "n": np.arange(5)}


class Counter:
    def __init__(self, seed):
        self.seed, self.calls = seed, 0

    def __call__(self):
        self.calls += 1
        return _draws(self.seed)


def test_without_a_store_every_call_computes(monkeypatch):
    monkeypatch.delenv(RUN_STORE_ENV, raising=False)
    count = Counter(1)
    a = reused_run({"seed": 1}, count, code=CODE)
    b = reused_run({"seed": 1}, count, code=CODE)
    assert count.calls == 2
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_a_run_is_computed_once_and_reads_back_bit_for_bit(tmp_path, monkeypatch):
    monkeypatch.setenv(RUN_STORE_ENV, str(tmp_path / RUNS_FILE))
    want = _draws(2)
    count = Counter(2)
    first = reused_run({"seed": 2, "what": [1, 2]}, count, code=CODE)
    again = reused_run({"what": [1, 2], "seed": 2}, count, code=CODE)   # key order: same run
    other = reused_run({"seed": 3, "what": [1, 2]}, Counter(3), code=CODE)
    assert count.calls == 1
    assert list(first) == ["x", "n"]
    for k in want:   # the caller that computed and the one that read get the same bits
        assert first[k].dtype == want[k].dtype == again[k].dtype
        assert first[k].tobytes() == want[k].tobytes() == again[k].tobytes()
    assert not np.array_equal(other["x"], first["x"])
    with sqlite3.connect(tmp_path / RUNS_FILE) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 2
        assert db.execute("SELECT COUNT(*) FROM pending").fetchone()[0] == 0


def test_the_key_holds_the_code(tmp_path, monkeypatch):
    monkeypatch.setenv(RUN_STORE_ENV, str(tmp_path / RUNS_FILE))
    assert runs.run_key({"a": 1}, CODE) == runs.run_key({"a": 1}, CODE)
    assert runs.run_key({"a": 1}, CODE) != runs.run_key({"a": 1}, "flbounds.ledger.engine.rows")
    assert runs.run_key({"a": 1}, CODE) != runs.run_key({"a": 2}, CODE)
    before = runs.run_key({"a": 1}, CODE)
    monkeypatch.setattr(runs, "code_digest", lambda module: "an edited source")
    assert runs.run_key({"a": 1}, CODE) != before


def test_a_failed_run_is_not_stored_and_frees_its_key(tmp_path, monkeypatch):
    monkeypatch.setenv(RUN_STORE_ENV, str(tmp_path / RUNS_FILE))

    def broken():
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        reused_run({"seed": 4}, broken, code=CODE)
    count = Counter(4)
    reused_run({"seed": 4}, count, code=CODE)
    assert count.calls == 1


def test_an_unusable_store_only_loses_the_reuse(tmp_path, monkeypatch):
    bad = tmp_path / "not-a-db"
    bad.write_text("plain text, not SQLite " * 100)
    monkeypatch.setenv(RUN_STORE_ENV, str(bad))
    out = reused_run({"seed": 5}, Counter(5), code=CODE)
    assert np.array_equal(out["x"], _draws(5)["x"])


def test_bad_arguments_name_themselves(monkeypatch):
    monkeypatch.delenv(RUN_STORE_ENV, raising=False)
    with pytest.raises(ValueError, match="description"):
        reused_run([1, 2], Counter(1), code=CODE)
    with pytest.raises(ValueError, match="code"):
        reused_run({}, Counter(1), code="")
    with pytest.raises(ValueError, match="mapping"):
        reused_run({}, lambda: [np.zeros(2)], code=CODE)
    with pytest.raises(ValueError, match="numeric"):
        reused_run({}, lambda: {"s": np.array(["a"])}, code=CODE)


def _hold_then_store(path, started, release):
    os.environ[RUN_STORE_ENV] = path

    def slow():
        started.set()
        release.wait(30)
        return _draws(6)

    reused_run({"seed": 6}, slow, code=CODE)


def test_a_run_under_way_elsewhere_is_waited_for(tmp_path, monkeypatch):
    path = str(tmp_path / RUNS_FILE)
    monkeypatch.setenv(RUN_STORE_ENV, path)
    ctx = multiprocessing.get_context("spawn")
    started, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_then_store, args=(path, started, release))
    holder.start()
    try:
        assert started.wait(60)

        def not_again():
            raise AssertionError("the run under way was computed twice")

        monkeypatch.setattr(runs, "POLL_S", 0.05)
        threading.Timer(0.5, release.set).start()   # finishes while this process waits
        got = reused_run({"seed": 6}, not_again, code=CODE)
        assert got["x"].tobytes() == _draws(6)["x"].tobytes()
    finally:
        release.set()
        holder.join(60)


def test_a_dead_holder_is_replaced(tmp_path, monkeypatch):
    path = tmp_path / RUNS_FILE
    monkeypatch.setenv(RUN_STORE_ENV, str(path))
    key = runs.run_key({"seed": 7}, CODE)
    ctx = multiprocessing.get_context("spawn")
    gone = ctx.Process(target=int)
    gone.start()
    gone.join()
    with runs._connect(str(path)) as db:
        db.execute("INSERT INTO pending VALUES (?, ?, ?, ?)",
                   (key, runs.socket.gethostname(), gone.pid, 1e18))
    count = Counter(7)
    reused_run({"seed": 7}, count, code=CODE)
    assert count.calls == 1


def test_share_runs_beside_the_store(tmp_path, monkeypatch):
    """`flbounds check` keeps the shared runs beside the results store for the run's
    duration; a value already set (an empty one turns the reuse off) is left alone."""
    monkeypatch.delenv(RUN_STORE_ENV, raising=False)
    with share_runs(tmp_path):
        assert os.environ[RUN_STORE_ENV] == str(tmp_path / RUNS_FILE)
    assert RUN_STORE_ENV not in os.environ
    monkeypatch.setenv(RUN_STORE_ENV, "")
    with share_runs(tmp_path):
        assert os.environ[RUN_STORE_ENV] == ""
    assert os.environ[RUN_STORE_ENV] == ""
