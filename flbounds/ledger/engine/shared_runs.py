"""Runs shared by the tasks of one check, kept beside its results store.

Two claims (or two cells of different claims) that repeat one deterministic computation (a
simulation keyed by its description and seed) can share it across the processes of a run:
:func:`stored` returns the value kept under the computation's key in the file the variable
``FLBOUNDS_SHARED_RUNS`` names, or computes it and keeps it there. ``flbounds check`` points
the variable at :data:`SHARED_RUNS_FILE` in its results folder for the length of the run
(:func:`share_runs`), as it does for the PEP solves (:mod:`.pep_solves`).

The value is a JSON value and is returned as JSON reads it back, whichever process computed
it (floats exactly), so a claim's numbers do not depend on which task ran first. The key is
the caller's: it must name everything the value depends on, the code included
(:func:`~flbounds.ledger.api.taskkey.code_digest` of the module that computes it), so a
changed helper is recomputed, never reused stale. Unset (a claim checked from Python, a
test), every call computes.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

#: the runs kept beside the results (:func:`stored`)
SHARED_RUNS_FILE = "shared_runs.sqlite"
#: the environment variable naming that file
SHARED_RUNS_ENV = "FLBOUNDS_SHARED_RUNS"


@contextlib.contextmanager
def share_runs(directory):
    """Within this block, :func:`stored` in this process and in the workers it starts keeps
    its values in ``directory`` (:data:`SHARED_RUNS_FILE`), unless the variable is set
    already (an empty value turns the sharing off). The variable is restored on exit."""
    if SHARED_RUNS_ENV in os.environ:
        yield
        return
    os.environ[SHARED_RUNS_ENV] = str(Path(directory) / SHARED_RUNS_FILE)
    try:
        yield
    finally:
        os.environ.pop(SHARED_RUNS_ENV, None)


def stored(key: str, compute: Callable[[], object]):
    """``compute()`` as JSON reads it back, or the value kept under ``key`` (module
    docstring). A file this process cannot read or write only loses the sharing."""
    if not isinstance(key, str) or not key:
        raise ValueError(f"key must be a non-empty str, got {key!r}")
    path = os.environ.get(SHARED_RUNS_ENV)
    if path:
        with contextlib.suppress(sqlite3.Error, OSError):
            if os.path.exists(path):
                with contextlib.closing(sqlite3.connect(path, timeout=60)) as db:
                    row = db.execute("SELECT value FROM runs WHERE key = ?", (key,)).fetchone()
                if row is not None:
                    return json.loads(row[0])
    text = json.dumps(compute(), default=_plain)
    if path:
        with contextlib.suppress(sqlite3.Error, OSError), \
                contextlib.closing(sqlite3.connect(path, timeout=60)) as db, db:
            db.execute("CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY, value TEXT)")
            db.execute("INSERT OR IGNORE INTO runs VALUES (?, ?)", (key, text))
    return json.loads(text)


def _plain(value):
    """NumPy arrays and scalars as the JSON values of their ``tolist()``."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"stored: a value of type {type(value).__name__} is not JSON")
