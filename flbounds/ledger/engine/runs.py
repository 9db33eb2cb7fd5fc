"""Simulation runs shared by the claims of one run, kept beside its results store.

Claims of one paper often repeat a run: the same simulation on the same draws (a sweep two
claims read differently, a Monte Carlo run two claims summarize). A claim, or a cell, asks
:func:`reused_run` for such a run by its description, a dict of JSON values naming
everything the run computes from (its parameters and the state of the generator its draws
come from). With ``FLBOUNDS_RUN_STORE`` naming a file (``flbounds check`` points it at
:data:`RUNS_FILE` in its results folder for the length of the run, :func:`share_runs`), the
first process to finish the run stores its arrays there, in one transaction, keyed by a
digest of the description and of the code that computes it
(:func:`~flbounds.ledger.api.taskkey.code_digest` of the module named); every process of the
run, or of a later run of the same code, reads them back instead of running it again. A
process that finds the run under way in another live process waits for it rather than
repeating it. The arrays are kept as ``np.save`` bytes (no pickle), and the caller always
receives what reads back, so its numbers are bit for bit the same whichever process ran
first. Without the variable every call computes; a store that cannot be read or written
(a Dask worker on another machine) only loses the reuse, never the run.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from ..api.result import to_jsonable
from ..api.taskkey import code_digest
from .liveness import holder_alive

__all__ = ["RUNS_FILE", "RUN_STORE_ENV", "reused_run", "run_key", "share_runs"]

#: the stored runs, beside the results
RUNS_FILE = "runs.sqlite"
#: the environment variable naming the file of stored runs
RUN_STORE_ENV = "FLBOUNDS_RUN_STORE"
#: seconds a process waits for a run another host holds (this host's holders are checked
#: by their process) before running it itself
WAIT_S = 900.0
#: seconds between two looks at a run under way elsewhere
POLL_S = 0.25

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY, description TEXT, arrays BLOB);
CREATE TABLE IF NOT EXISTS pending (key TEXT PRIMARY KEY, host TEXT, pid INTEGER,
                                    expires REAL);
"""


@contextlib.contextmanager
def share_runs(directory):
    """Within this block, the runs :func:`reused_run` computes in this process and in the
    workers it starts are kept in ``directory`` (:data:`RUNS_FILE`), unless
    ``FLBOUNDS_RUN_STORE`` is set already (an empty value turns the reuse off). The variable
    is restored on exit."""
    if RUN_STORE_ENV in os.environ:
        yield
        return
    os.environ[RUN_STORE_ENV] = str(Path(directory) / RUNS_FILE)
    try:
        yield
    finally:
        os.environ.pop(RUN_STORE_ENV, None)


def run_key(description: Mapping, code: str) -> str:
    """Digest of ``description`` (canonical JSON) and of the code of module ``code`` (the
    library and the module's in-tree imports)."""
    plain = json.dumps([to_jsonable(dict(description)), code, code_digest(code),
                        np.__version__], sort_keys=True)
    return hashlib.sha256(plain.encode()).hexdigest()


def reused_run(description: Mapping, compute: Callable[[], Mapping[str, np.ndarray]], *,
               code: str) -> dict[str, np.ndarray]:
    """The arrays of the run ``description`` names: stored ones, else ``compute()``'s.

    Parameters
    ----------
    description : mapping
        JSON values naming everything the run computes from (two runs with one description
        must give the same arrays).
    compute : callable
        Runs it: returns a mapping of names (str) to numeric arrays.
    code : str
        The module whose code computes the run (its digest joins the key).

    Returns
    -------
    dict of str to numpy.ndarray
        The arrays as they read back from storage, in the order ``compute`` named them.
    """
    if not isinstance(description, Mapping):
        raise ValueError(f"description must be a mapping of JSON values, got "
                         f"{type(description).__name__}")
    if not isinstance(code, str) or not code:
        raise ValueError(f"code must name a module, got {code!r}")
    path = os.environ.get(RUN_STORE_ENV)
    if not path:
        return _decoded(_encoded(compute()))
    key = run_key(description, code)
    deadline = None
    while True:
        stored, holder = _look(path, key)
        if stored is not None:
            return _decoded(stored)
        if holder is None:    # taken by this process (or the store cannot be used): run it
            break
        host, pid, expires = holder
        if not holder_alive(host, pid, expires):
            _release(path, key, host, pid)
            continue
        deadline = deadline or time.monotonic() + WAIT_S
        if time.monotonic() > deadline:
            break
        time.sleep(POLL_S)
    try:
        blob = _encoded(compute())
        _keep(path, key, description, blob)
    finally:
        _release(path, key, socket.gethostname(), os.getpid())
    return _decoded(blob)


def _encoded(arrays: Mapping[str, np.ndarray]) -> bytes:
    if not isinstance(arrays, Mapping) or not all(isinstance(k, str) for k in arrays):
        raise ValueError("compute must return a mapping of names (str) to arrays")
    buf = io.BytesIO()
    names = list(arrays)
    np.save(buf, np.array(json.dumps(names)), allow_pickle=False)
    for name in names:
        a = np.asarray(arrays[name])
        if a.dtype.kind not in "biuf":
            raise ValueError(f"compute must return numeric arrays; {name!r} is {a.dtype}")
        np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def _decoded(blob: bytes) -> dict[str, np.ndarray]:
    buf = io.BytesIO(blob)
    names = json.loads(str(np.load(buf, allow_pickle=False)))
    return {name: np.load(buf, allow_pickle=False) for name in names}


def _connect(path):
    db = sqlite3.connect(path, timeout=60, isolation_level=None)
    db.executescript(_SCHEMA)
    return db


def _look(path, key):
    """``(stored blob, None)``, ``(None, holder)`` when another process holds the run, or
    ``(None, None)``: this process now holds it (or the store is unusable)."""
    try:
        with contextlib.closing(_connect(path)) as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute("SELECT arrays FROM runs WHERE key = ?", (key,)).fetchone()
                if row is not None:
                    return bytes(row[0]), None
                held = db.execute("SELECT host, pid, expires FROM pending WHERE key = ?",
                                  (key,)).fetchone()
                if held is not None:
                    return None, tuple(held)
                db.execute("INSERT INTO pending VALUES (?, ?, ?, ?)",
                           (key, socket.gethostname(), os.getpid(), time.time() + WAIT_S))
                return None, None
            finally:
                db.execute("COMMIT")
    except sqlite3.Error:
        return None, None


def _keep(path, key, description, blob):
    try:
        with contextlib.closing(_connect(path)) as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT OR IGNORE INTO runs VALUES (?, ?, ?)",
                       (key, json.dumps(to_jsonable(dict(description)), sort_keys=True), blob))
            db.execute("DELETE FROM pending WHERE key = ?", (key,))
            db.execute("COMMIT")
    except sqlite3.Error:
        pass


def _release(path, key, host, pid):
    try:
        with contextlib.closing(_connect(path)) as db:
            db.execute("DELETE FROM pending WHERE key = ? AND host = ? AND pid = ?",
                       (key, host, pid))
    except sqlite3.Error:
        pass
