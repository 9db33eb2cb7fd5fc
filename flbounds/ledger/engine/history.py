"""What a run reads from the stored history before it starts: each claim's last duration
in the run's profile (its place in the longest-first order) and the keys of the tasks
already finished (what ``--resume`` will not recompute).

A store keeps every row of every run, so it grows by one row per claim and run; parsing
every row into a :class:`~flbounds.ledger.api.result.CheckResult` (as
:meth:`ResultStore.load` does) costs time in proportion to the store's whole past, about
0.12 ms per row, twice per run (the progress bar and the runner). Here SQLite reads the
duration out of each row itself and the keys from their columns, which is about six times
faster. A store whose legacy ``results.jsonl`` is not imported yet, or an SQLite built
without its JSON functions, is read the slow way, with the same answer.
"""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from .store import ResultStore, StoreError


class History(NamedTuple):
    """The stored history a run schedules by."""

    #: claim id -> ``elapsed_s`` of its most recent stored row in the profile
    durations: dict[str, float]
    #: task keys of stored rows whose verdict is not ``error``
    finished: set[str]


def stored_history(store: ResultStore | None, profile: str) -> History:
    """The :class:`History` of ``store`` (an empty one for ``None`` or a missing store)
    for runs of ``profile``."""
    if store is None:
        return History({}, set())
    try:
        fast = _from_columns(store, profile)
    except (StoreError, sqlite3.Error):
        fast = None
    if fast is not None:
        return fast
    rows = store.load()
    return History({r.id: r.elapsed_s for r in rows if r.profile == profile},
                   {r.task_key for r in rows if r.verdict != "error"})


def _from_columns(store: ResultStore, profile: str) -> History | None:
    if not store._legacy_imported():
        return None
    conn = store.connect(create=False)
    if conn is None:
        return History({}, set())
    durations: dict[str, float] = {}
    # CAST: the row is stored as UTF-8 bytes, which newer SQLite would read as binary JSON
    for claim_id, elapsed in conn.execute(
            "SELECT claim_id, json_extract(CAST(row AS TEXT), '$.elapsed_s') FROM results "
            "WHERE profile = ? ORDER BY seq", (profile,)):
        if isinstance(elapsed, int | float) and claim_id is not None:
            durations[_text(claim_id)] = float(elapsed)
    finished = {_text(key) for (key,) in conn.execute(
        "SELECT DISTINCT task_key FROM results WHERE verdict != 'error' "
        "AND task_key IS NOT NULL")}
    return History(durations, finished)


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
