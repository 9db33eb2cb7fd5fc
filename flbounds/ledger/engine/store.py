"""The results store: an SQLite database ``<directory>/results.sqlite``.

One row per finished task (the full :class:`CheckResult` as JSON, plus its key, claim id,
profile, seed, verdict, run, git commit, start and end time), committed in one transaction
as the task finishes. The database runs in WAL mode, so readers never block the runs
writing into it. Runs are recorded in their own table (profile, seed, status), which is
what ``report`` states as provenance. Leases (:mod:`flbounds.ledger.engine.leases`) let two runs
share one store and compute each task once.

Readers never crash on what they find: a row that cannot be read is counted and skipped
(:mod:`flbounds.ledger.engine.rows`). A ``results.jsonl`` left by earlier versions is imported
once, the first time a run writes into the store; until then readers include its rows.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from ..api.result import CheckResult
from .liveness import holder_alive
from .rows import Skipped, cell_row, parse_row, read_jsonl, report_skipped

DB_FILE = "results.sqlite"
LEGACY_FILE = "results.jsonl"
#: seconds a writer waits for another run's transaction before giving up
BUSY_TIMEOUT_S = 60.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, task_key TEXT, claim_id TEXT, profile TEXT,
    seed INTEGER, verdict TEXT, run_id TEXT, commit_id TEXT, started REAL, ended REAL,
    row BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS results_by_key ON results(task_key);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, profile TEXT, seed INTEGER, n_tasks INTEGER, started REAL,
    ended REAL, status TEXT, host TEXT, pid INTEGER);
CREATE TABLE IF NOT EXISTS leases (
    task_key TEXT PRIMARY KEY, run_id TEXT, host TEXT, pid INTEGER, expires REAL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS cells (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, task_key TEXT, claim_key TEXT, claim_id TEXT,
    cell_index INTEGER, profile TEXT, seed INTEGER, failed INTEGER, run_id TEXT,
    ended REAL, row BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS cells_by_key ON cells(task_key);
"""


class StoreError(ValueError):
    """The store cannot be opened or written (not a database, no permission, ...)."""


class StoredRow(NamedTuple):
    """A stored result with the provenance the store keeps beside it."""

    result: CheckResult
    run_id: str
    commit: str | None
    started: float | None
    ended: float | None


class Run(NamedTuple):
    """One ``check`` run into the store. ``status``: running / complete / interrupted."""

    run_id: str
    profile: str
    seed: int
    n_tasks: int
    started: float
    ended: float | None
    status: str
    host: str
    pid: int


class ResultStore:
    """The SQLite results store in ``directory`` (created by the first write).

    Every finished task is committed as it finishes, keyed by its task key (claim, params,
    seed, profile and a hash of the code it can execute), so ``--resume`` skips what is
    stored and a changed module is never reused stale.

    Parameters
    ----------
    directory : str or path-like
        The folder of ``results.sqlite`` (``flbounds check --results DIR``).
    """

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self.path = self.directory / DB_FILE
        self.legacy_path = self.directory / LEGACY_FILE
        self._local = threading.local()

    # -- connections ---------------------------------------------------------------------
    def connect(self, *, create: bool) -> sqlite3.Connection | None:
        """This thread's connection (``None`` if the store does not exist and not ``create``).

        Raises :class:`StoreError` when the file is not a usable database.
        """
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if not create and not self.path.exists():
                return None
            conn = self._open(create)
            self._local.conn, self._local.ready = conn, False
        if create and not self._local.ready:
            try:
                _initialise(conn)
            except sqlite3.Error as exc:
                raise StoreError(f"cannot write results store {str(self.path)!r}: {exc}") \
                    from None
            self._import_legacy(conn)
            self._local.ready = True
        return conn

    def _open(self, create: bool) -> sqlite3.Connection:
        try:
            if create:
                self.directory.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            conn.text_factory = bytes   # decode ourselves: a bad byte is one bad row
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            # in WAL mode a commit then writes the log without waiting for the disk (an
            # fsync per commit, two or three per task, costs ~7 ms each on a virtual disk;
            # the run's loop waits for them): a killed run keeps every commit, a power cut
            # may lose the last ones, which --resume recomputes; the file stays consistent
            conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.DatabaseError as exc:
            raise StoreError(damaged(self.path, exc)) from None
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot use results store {str(self.path)!r}: {exc}") from None
        return conn

    def check_usable(self) -> None:
        """Raise :class:`StoreError` unless a run can write here (the folder itself is
        checked by :func:`flbounds.ledger.engine.outputs.output_folder`)."""
        if self.path.is_dir():
            raise StoreError(f"results store {str(self.path)!r} is a folder; expected a file")
        if self.path.exists():
            if not os.access(self.path, os.R_OK | os.W_OK):
                raise StoreError(f"no read and write permission for {str(self.path)!r}")
            conn = self._open(create=False)
            conn.close()

    def check_readable(self) -> None:
        """Raise :class:`StoreError` when the store exists but SQLite cannot read it (a
        missing store is an empty one)."""
        if self.path.is_dir():
            raise StoreError(f"results store {str(self.path)!r} is a folder; expected a file")
        if self.path.exists():
            self._open(create=False).close()

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def transaction(self):
        """``with store.transaction() as conn:`` one write transaction (BEGIN IMMEDIATE)."""
        return _Transaction(self.connect(create=True))

    # -- writing -------------------------------------------------------------------------
    def append(self, result: CheckResult, *, run_id: str = "") -> None:
        """Store one finished task and drop its lease, in one transaction."""
        row = json.dumps(result.to_dict(), sort_keys=True).encode()
        commit = result.git_commit or None
        started, ended = _epoch(result.started), _epoch(result.finished) or time.time()
        with self.transaction() as conn:
            conn.execute("INSERT INTO results (task_key, claim_id, profile, seed, verdict, "
                         "run_id, commit_id, started, ended, row) VALUES (?,?,?,?,?,?,?,?,?,?)",
                         (result.task_key, result.id, result.profile, result.seed,
                          result.verdict, run_id, commit, started, ended, row))
            conn.execute("DELETE FROM leases WHERE task_key = ?", (result.task_key,))

    def append_cell(self, row: dict, *, run_id: str = "") -> None:
        """Store one finished cell of a claim split into cells (its row as
        :func:`flbounds.ledger.engine.tasks.execute` returns it) and drop its lease.

        Cells live in their own table: readers of claim results never see them."""
        data = json.dumps(row).encode()       # key order kept: the combine reads it back
        with self.transaction() as conn:
            conn.execute("INSERT INTO cells (task_key, claim_key, claim_id, cell_index, "
                         "profile, seed, failed, run_id, ended, row) VALUES "
                         "(?,?,?,?,?,?,?,?,?,?)",
                         (row["task_key"], row["claim_key"], row["id"], row["index"],
                          row["profile"], row["seed"], int(bool(row.get("error"))), run_id,
                          _epoch(row.get("finished", "")) or time.time(), data))
            conn.execute("DELETE FROM leases WHERE task_key = ?", (row["task_key"],))

    def begin_run(self, profile: str, seed: int, n_tasks: int) -> str:
        """Record a new run (status ``running``); return its id. Runs still recorded as
        ``running`` whose process is gone (killed with their parent) are marked
        ``interrupted`` first."""
        run_id = uuid.uuid4().hex[:12]
        with self.transaction() as conn:
            stale = [(_text(rid),) for rid, host, pid in conn.execute(
                "SELECT run_id, host, pid FROM runs WHERE status = 'running'")
                if not holder_alive(_text(host), pid, None)]
            conn.executemany("UPDATE runs SET status = 'interrupted' WHERE run_id = ?", stale)
            conn.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?)",
                         (run_id, profile, int(seed), n_tasks, time.time(), None, "running",
                          socket.gethostname(), os.getpid()))
        return run_id

    def end_run(self, run_id: str, status: str) -> None:
        """Mark a run ``complete`` or ``interrupted`` and drop the leases it still holds."""
        with self.transaction() as conn:
            conn.execute("UPDATE runs SET ended = ?, status = ? WHERE run_id = ?",
                         (time.time(), status, run_id))
            conn.execute("DELETE FROM leases WHERE run_id = ?", (run_id,))

    # -- reading -------------------------------------------------------------------------
    def records(self) -> list[StoredRow]:
        """Every readable stored row, oldest first (unreadable ones counted and skipped)."""
        skipped = Skipped()
        out: list[StoredRow] = []
        if not self._legacy_imported():
            legacy, skipped = read_jsonl(self.legacy_path, skipped)
            out += [StoredRow(r, "imported", r.git_commit or None, None, None)
                    for r in legacy]
        try:
            conn = self.connect(create=False)
            cursor = conn.execute("SELECT seq, run_id, commit_id, started, ended, row FROM "
                                  "results ORDER BY seq") if conn is not None else []
            for seq, run_id, commit, started, ended, raw in cursor:
                result, problem = parse_row(raw)
                if result is None:
                    skipped = skipped.add(f"row {seq}", problem)
                    continue
                out.append(StoredRow(result, _text(run_id), _text(commit) or None,
                                     _number(started), _number(ended)))
        except (StoreError, sqlite3.Error) as exc:
            skipped = skipped.add(str(self.path), f"unreadable database ({exc})")
        report_skipped(str(self.path), skipped)
        return out

    def cell_records(self) -> list[dict]:
        """Every readable stored cell row, oldest first (unreadable ones skipped)."""
        try:
            conn = self.connect(create=False)
            if conn is None or conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE name = 'cells'").fetchone() is None:
                return []
            raws = [raw for (raw,) in conn.execute("SELECT row FROM cells ORDER BY seq")]
        except (StoreError, sqlite3.Error):
            return []
        out = []
        for raw in raws:
            row = cell_row(raw)
            if row is not None:
                out.append(row)
        return out

    def load(self) -> list[CheckResult]:
        """Every readable stored result, oldest first."""
        return [r.result for r in self.records()]

    def latest(self, *, profile: str | None = None,
               seed: int | None = None) -> dict[str, CheckResult]:
        """The most recent result per claim id (of one profile and/or seed when given)."""
        out: dict[str, CheckResult] = {}
        for r in self.load():
            if (profile is None or r.profile == profile) and (seed is None or r.seed == seed):
                out[r.id] = r
        return dict(sorted(out.items()))

    def finished_keys(self) -> set[str]:
        """Task keys of stored results that completed (``error`` results are re-run)."""
        return {r.task_key for r in self.load() if r.verdict != "error"}

    def runs(self) -> list[Run]:
        """Every recorded run, oldest first; a ``running`` run whose process is gone on
        this host is reported as ``interrupted``."""
        try:
            conn = self.connect(create=False)
            rows = conn.execute("SELECT * FROM runs ORDER BY started").fetchall() \
                if conn is not None else []
        except (StoreError, sqlite3.Error):
            return []
        out = []
        for row in rows:
            try:
                run = Run(*(_text(v) if isinstance(v, bytes) else v for v in row))
            except TypeError:
                continue
            if run.status == "running" and not holder_alive(run.host, run.pid, None):
                run = run._replace(status="interrupted")
            out.append(run)
        return out

    # -- the legacy JSONL file -----------------------------------------------------------
    def _legacy_imported(self) -> bool:
        if not self.legacy_path.exists():
            return True
        try:
            conn = self.connect(create=False)
            if conn is None:
                return False
            return conn.execute("SELECT 1 FROM meta WHERE key = 'imported_jsonl'"
                                ).fetchone() is not None
        except (StoreError, sqlite3.Error):
            return False

    def _import_legacy(self, conn: sqlite3.Connection) -> None:
        if not self.legacy_path.is_file():
            return
        with _Transaction(conn):
            if conn.execute("SELECT 1 FROM meta WHERE key = 'imported_jsonl'").fetchone():
                return
            rows, skipped = read_jsonl(self.legacy_path, Skipped())
            for r in rows:
                conn.execute("INSERT INTO results (task_key, claim_id, profile, seed, "
                             "verdict, run_id, row) VALUES (?,?,?,?,?,?,?)",
                             (r.task_key, r.id, r.profile, r.seed, r.verdict, "imported",
                              json.dumps(r.to_dict(), sort_keys=True).encode()))
            conn.execute("INSERT INTO meta VALUES ('imported_jsonl', ?)",
                         (f"{len(rows)} rows, {skipped.count} skipped, {time.time()}",))
        report_skipped(str(self.legacy_path), skipped)


def damaged(path: Path, exc: Exception) -> str:
    """The message for a results store SQLite cannot read, with the way out."""
    return (f"results store {str(path)!r} is damaged or not a results database ({exc}); "
            f"move it aside (mv {str(path)!r} {str(path) + '.damaged'!r}) and run "
            "'flbounds check' again to start a new one")


def _initialise(conn: sqlite3.Connection) -> None:
    """WAL mode and the schema, retried while another process holds the database (up to
    :data:`BUSY_TIMEOUT_S`). Two runs starting on a fresh store race to create it, and in
    WAL mode a statement that read an older snapshot and then writes (``CREATE TABLE IF NOT
    EXISTS`` after the other process's commit) gets "database is locked" at once, without
    SQLite's busy timeout: one failed run in 60 races of four processes, and once in CI
    (``test_two_concurrent_runs_compute_each_task_once``)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) \
                    or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any exception)."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, kind, value, tb) -> None:
        self.conn.execute("COMMIT" if kind is None else "ROLLBACK")


def _text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def _epoch(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text).timestamp() if text else None
    except (TypeError, ValueError):
        return None


def _number(value) -> float | None:
    return float(value) if isinstance(value, int | float) else None
