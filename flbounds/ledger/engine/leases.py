"""Task leases: two runs into one results store compute each task once.

Before a run starts a task it takes the task's lease in the store (one transaction that
also checks whether the task is already stored). A lease names its holder (run id, host,
pid) and expires ``LEASE_S`` seconds after the holder's last heartbeat. A lease is
reclaimed when it has expired, or at once when its holder ran on this host and that
process is gone (a killed run).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

from ..api.result import CheckResult
from .liveness import holder_alive
from .rows import cell_row, parse_row
from .store import ResultStore

#: seconds a lease lives without a heartbeat; the holder renews every LEASE_S / 4
LEASE_S = 120.0

DONE, MINE, BUSY = "done", "mine", "busy"


def acquire(store: ResultStore, task_key: str, run_id: str,
            since: float | None) -> tuple[str, CheckResult | None]:
    """Take the lease of ``task_key`` for ``run_id``.

    Returns ``(DONE, result)`` when a finished (non-``error``) row is stored for the key
    (any row when ``since`` is None, else one that ended at or after ``since``),
    ``(BUSY, None)`` while another live run holds the lease, else ``(MINE, None)``.
    """
    return _acquire(store, task_key, run_id, since, cell=False)


def acquire_cell(store: ResultStore, task_key: str, run_id: str,
                 since: float | None) -> tuple[str, dict | None]:
    """:func:`acquire` for a cell of a claim split into cells: ``(DONE, row)`` when a cell
    row that did not fail is stored for its key (the cells table), else as :func:`acquire`."""
    return _acquire(store, task_key, run_id, since, cell=True)


def stored_result(store: ResultStore, task_key: str,
                  since: float | None) -> CheckResult | None:
    """The finished result :func:`acquire` would find stored for ``task_key`` (no lease)."""
    with store.transaction() as conn:
        return _stored(conn, task_key, since, cell=False)


def _stored(conn, task_key, since, *, cell):
    query = ("SELECT row, ended FROM cells WHERE task_key = ? AND failed = 0"
             if cell else "SELECT row, ended FROM results WHERE task_key = ? AND "
             "verdict != 'error'")
    args = (task_key,)
    if since is not None:    # the rows of earlier runs (a store kept across runs) stay unread
        query, args = query + " AND ended >= ?", (task_key, since)
    for raw, ended in conn.execute(query + " ORDER BY seq DESC", args).fetchall():
        if since is not None and (not isinstance(ended, float | int) or ended < since):
            continue
        if cell:
            row = cell_row(raw)
            if row is not None and not row.get("error"):
                return row
            continue
        result, _ = parse_row(raw)
        if result is not None and result.verdict != "error":
            return result
    return None


def _acquire(store, task_key, run_id, since, *, cell):
    host, pid = socket.gethostname(), os.getpid()
    with store.transaction() as conn:
        found = _stored(conn, task_key, since, cell=cell)
        if found is not None:
            return DONE, found
        lease = conn.execute("SELECT run_id, host, pid, expires FROM leases WHERE task_key = ?",
                             (task_key,)).fetchone()
        if lease is not None and _text(lease[0]) != run_id \
                and holder_alive(_text(lease[1]), lease[2], lease[3]):
            return BUSY, None
        conn.execute("INSERT OR REPLACE INTO leases VALUES (?,?,?,?,?)",
                     (task_key, run_id, host, pid, time.time() + LEASE_S))
    return MINE, None


def renew(store: ResultStore, run_id: str) -> None:
    """Push back the expiry of every lease ``run_id`` holds."""
    with store.transaction() as conn:
        conn.execute("UPDATE leases SET expires = ? WHERE run_id = ?",
                     (time.time() + LEASE_S, run_id))


class Heartbeat:
    """A daemon thread renewing ``run_id``'s leases every ``LEASE_S / 4`` seconds.

    It uses its own database connection (sqlite connections are per thread).
    """

    def __init__(self, directory: Path, run_id: str):
        self._store = ResultStore(directory)
        self._run_id = run_id
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="flbounds-leases",
                                        daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.wait(LEASE_S / 4):
            try:
                renew(self._store, self._run_id)
            except Exception:  # noqa: BLE001 - a missed beat only shortens the lease
                continue
        self._store.close()


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
