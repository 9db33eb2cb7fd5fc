"""Claims split into cells (``claim(..., cells=dict(grid=..., run=...))``): the engine runs each
cell as a task; the claim's row equals the one-task run's bit for bit, with one or two
workers and on Dask; a run killed mid-grid and resumed recomputes only the missing cells; a
bad declaration raises ``ValueError`` naming ``cells``.

The claims are declared under ``testpaper`` in the ``ledger_sandbox`` (tests/flbounds/
conftest.py); the pool workers of two-worker runs are forked, so they see them too, from a
fresh interpreter (a test process may have other threads alive, and then cannot fork).
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import flbounds.ledger.api.registry as registry
from flbounds.ledger import Evidence, ResultStore, Tolerance, claim, run_claims
from flbounds.ledger.api.results import result
from flbounds.ledger.engine.tasks import execute
from flbounds.ledger.engine.workers import WorkerPool, can_fork

CLAIM = "testpaper.thm.grid"
#: provenance, not results: when and where a row was computed (a task run by the engine also
#: records the versions of the plugin it came from, which Claim.check leaves out)
TIMINGS = {"elapsed_s", "cpu_s", "started", "finished", "git_commit", "versions"}
SIZES = [1, 2, 3, 5, 8, 13]
RAN: list[int] = []          # sizes of the cells run in this process


def _grid(*, rng, n_draws, sizes):
    shift = float(rng.standard_normal())        # a draw every cell shares
    return [dict(n_draws=n_draws, size=s, shift=shift) for s in sizes]


def _cell(*, rng, n_draws, size, shift):
    RAN.append(size)
    x = rng.standard_normal((n_draws, size)) + shift
    return dict(size=size, mean=float(x.mean()) - shift, moments=np.array([x.var(), x.std()]),
                worst=float("inf") if size > 100 else float(np.abs(x).max()))


def _combine(*, rng, cells, n_draws, sizes):
    gaps = [abs(c["mean"]) for c in cells]
    se = [1 / np.sqrt(n_draws * c["size"]) for c in cells]
    return Evidence(measured=gaps, theoretical=[0.0] * len(gaps), relation="<=",
                    tolerance=Tolerance.mc(se, k=5, what="|mean|"),
                    details={"cells": cells, "after_grid": float(rng.random())})


def _declare_grid_claim():
    """Declare :data:`CLAIM` (under the paper ``testpaper``, declared by the caller)."""
    thm = result("testpaper.thm", ref="Theorem 1", title="a grid of cells",
                 parts={"mean": "the sample mean is centred"})
    claim(CLAIM, ref="Theorem 1", kind="statement", statement="The mean is centred.",
          expected="holds", result=thm, parts=("mean",),
          quick=dict(n_draws=400, sizes=SIZES),
          cells=dict(grid=_grid, run=_cell))(_combine)
    return registry.get(CLAIM)


@pytest.fixture
def grid_claim(ledger_sandbox):
    RAN.clear()
    return _declare_grid_claim()


def _bits(result) -> str:
    row = result if isinstance(result, dict) else result.to_dict()
    return json.dumps({k: v for k, v in row.items() if k not in TIMINGS}, sort_keys=True)


def _differences(a, b, path="") -> list[str]:
    """Where two rows (as :func:`_bits` reads them) differ, leaf by leaf, for the message."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b))
                for d in _differences(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r:.200} != {b!r:.200}"]


def _same_row(got, want) -> None:
    """Bit-identity of two rows, timings aside, naming every leaf that differs."""
    assert _bits(got) == _bits(want), "\n".join(
        _differences(json.loads(_bits(got)), json.loads(_bits(want))))


def test_the_one_task_run_combines_cells_keyed_by_their_parameters(grid_claim):
    one = grid_claim.check(seed=3)
    assert one.verdict == "holds" and len(one.details["cells"]) == len(SIZES)
    assert sorted(RAN) == SIZES
    cell = one.details["cells"][0]
    assert isinstance(cell["moments"], list) and cell["size"] == 1   # as JSON reads it back
    # a cell's numbers depend on its parameters only, not on the cells around it
    plan = grid_claim.cell_plan(3, "quick")
    assert grid_claim.run_cell(3, plan[4]) == one.details["cells"][4]
    assert grid_claim.check(seed=4).details["cells"][0] != cell
    assert _bits(execute(CLAIM, "quick", 3)) == _bits(one)


def test_cells_as_tasks_give_the_one_task_row_bit_for_bit(grid_claim, tmp_path):
    one = grid_claim.check(seed=3)
    store = ResultStore(tmp_path)
    RAN.clear()
    [split] = run_claims([grid_claim], seed=3, workers=1, store=store)
    _same_row(split, one)
    assert sorted(RAN) == SIZES                  # each cell once, as a task of its own
    assert split.elapsed_s > 0 and split.cpu_s > 0
    cells = store.cell_records()
    assert sorted(r["index"] for r in cells) == list(range(len(SIZES)))
    assert {r["claim_key"] for r in cells} == {one.task_key}
    assert len({r["task_key"] for r in cells}) == len(SIZES)
    assert list(store.latest()) == [CLAIM]        # cells are not claim rows
    assert _bits(store.latest()[CLAIM]) == _bits(one)
    # without a store as well
    assert _bits(run_claims([grid_claim], seed=3, workers=1)[0]) == _bits(one)


# The claim reaches a two-worker pool's workers only if they are forked from a process that
# declared it; a process may fork only while no other thread is alive (forking.can_fork), and
# a test process is not one: a Dask client, for one, leaves its offload thread behind for the
# rest of the process. So the two-worker run is made in a fresh interpreter of its own.
TWO_WORKERS = '''
import json, sys
from pathlib import Path
import flbounds.ledger.api.registry as registry
registry._LOADED = True                    # this script's claim only, no plugins
from flbounds.ledger import ResultStore, paper, run_claims
from flbounds.ledger.engine.workers import WorkerPool
from tests.flbounds.ledger.test_cells import _declare_grid_claim

paper("testpaper", title="A paper the tests declare", source="arXiv:0000.00000",
      reference="T. Tester, 2026")
grid_claim = _declare_grid_claim()
folder = Path(sys.argv[1])
pool = WorkerPool(2, fork=True)
pool.start()
forked = [type(w.proc).__name__ for w in pool._idle]
[split] = run_claims([grid_claim], seed=3, store=ResultStore(folder), pool=pool)
print(json.dumps(dict(forked=forked, row=split.to_dict(),
                      cells=len(ResultStore(folder).cell_records()))))
'''


def _two_worker_run(tmp_path) -> dict:
    """The run of :data:`TWO_WORKERS` in a fresh interpreter: its forked workers' kinds, the
    claim's row and the number of stored cells."""
    script = tmp_path / "two_workers.py"
    script.write_text(TWO_WORKERS)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "store")], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="the sandbox's claims reach forked workers only (Linux)")
def test_two_workers_give_the_same_row(grid_claim, tmp_path):
    one = grid_claim.check(seed=3)
    run = _two_worker_run(tmp_path)
    assert run["forked"] == ["_Forked", "_Forked"]
    _same_row(run["row"], one)
    assert run["cells"] == len(SIZES)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="as the test above")
def test_two_workers_give_the_same_row_while_another_thread_is_alive(grid_claim, tmp_path):
    """The condition of a whole-suite run: a thread left alive in the test process by an
    earlier test (Dask's offload thread). A pool asked to fork here used to spawn its workers
    instead, without a word: they lacked the sandbox's claim, and every cell was an error."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, name="left-by-an-earlier-test", daemon=True)
    other.start()
    try:
        assert not can_fork()
        pool = WorkerPool(2, fork=True)
        with pytest.raises(RuntimeError, match=r"fork=True.*left-by-an-earlier-test"):
            pool.start()
        assert pool.capacity() == 2 and not pool._idle
        one = grid_claim.check(seed=3)
        run = _two_worker_run(tmp_path)
    finally:
        stop.set()
        other.join()
    assert run["forked"] == ["_Forked", "_Forked"]
    _same_row(run["row"], one)
    assert run["cells"] == len(SIZES)


def test_a_claim_no_fresh_worker_knows_is_refused_before_any_work(grid_claim, tmp_path):
    """A claim declared at run time (here, in this test module, which no plugin names) with a
    thread alive: the pool could only start workers afresh, which would not know it. The run
    is refused naming ``workers`` before anything is stored; one worker runs it here."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, name="left-by-an-earlier-test", daemon=True)
    other.start()
    store = ResultStore(tmp_path)
    try:
        with pytest.raises(ValueError, match=r"workers: claims declared at run time \("
                                             + CLAIM.replace(".", r"\.")):
            run_claims([grid_claim], seed=3, workers=2, store=store)
        assert not store.cell_records() and not store.latest()
        [row] = run_claims([grid_claim], seed=3, workers=1, store=store)
    finally:
        stop.set()
        other.join()
    assert row.verdict == grid_claim.check(seed=3).verdict


def test_dask_gives_the_same_row(grid_claim):
    distributed = pytest.importorskip("distributed")
    one = grid_claim.check(seed=3)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        [split] = run_claims([grid_claim], seed=3, scheduler=client)
    _same_row(split, one)


def test_resume_reuses_stored_cells_and_a_failed_cell_fails_the_claim(grid_claim, tmp_path,
                                                                        monkeypatch):
    one = grid_claim.check(seed=3)
    store = ResultStore(tmp_path)
    real = grid_claim.cells.run

    def flaky(*, rng, size, **rest):
        if size == 5:
            raise RuntimeError("cell down")
        return real(rng=rng, size=size, **rest)

    broken = dataclasses.replace(grid_claim, cells=grid_claim.cells._replace(run=flaky))
    monkeypatch.setitem(registry._REGISTRY, CLAIM, broken)
    RAN.clear()
    [failed] = run_claims([broken], seed=3, workers=1, store=store)
    assert failed.verdict == "error" and "cell 3 of 6 failed" in failed.reason
    assert failed.task_key == one.task_key       # the claim's own key, as its row would have
    assert "cell down" in failed.reason
    monkeypatch.setitem(registry._REGISTRY, CLAIM, grid_claim)
    RAN.clear()
    [resumed] = run_claims([grid_claim], seed=3, workers=1, store=store, resume=True)
    assert RAN == [5]                            # only the cell that failed
    assert _bits(resumed) == _bits(one)
    RAN.clear()
    [again] = run_claims([grid_claim], seed=3, workers=1, store=store, resume=True)
    assert RAN == [] and _bits(again) == _bits(one)


# --- a run killed mid-grid ---------------------------------------------------------------

SCRIPT = '''
import sys, time
from pathlib import Path
import numpy as np
import flbounds.ledger.api.registry as registry
registry._LOADED = True                    # this script's claim only, no plugins
import flbounds.ledger.api.registry as registry
from flbounds.ledger import Evidence, ResultStore, Tolerance, claim, paper, run_claims, select
from flbounds.ledger.api.results import result

folder, log, resume = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "resume"
paper("testpaper", title="A paper the tests declare", source="arXiv:0000.00000",
      reference="T. Tester, 2026")
thm = result("testpaper.thm", ref="Theorem 1", title="a grid of cells",
             parts={"mean": "the sample mean is centred"})

def grid(*, rng, sizes):
    return [dict(size=s) for s in sizes]

def cell(*, rng, size):
    with open(log, "a") as fh:
        fh.write(f"{size}\\n")
    time.sleep(0.15)
    return dict(size=size, mean=float(rng.standard_normal(size * 100).mean()))

@claim("testpaper.thm.grid", ref="Theorem 1", kind="statement", statement="centred",
       expected="holds", result=thm, parts=("mean",), quick=dict(sizes=list(range(1, 13))),
       cells=dict(grid=grid, run=cell))
def combined(*, rng, cells, sizes):
    return Evidence([abs(c["mean"]) for c in cells], [0.0] * len(cells), "<=",
                    Tolerance.mc([1 / np.sqrt(100 * c["size"]) for c in cells], k=5),
                    details={"cells": cells})

run_claims(select(["testpaper"]), seed=1, workers=1, store=ResultStore(folder),
           resume=resume)
'''


def _script_run(script: Path, folder: Path, log: Path, mode: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.Popen([sys.executable, str(script), str(folder), str(log), mode],
                            env=env, stderr=subprocess.PIPE, start_new_session=True)


def _logged(log: Path) -> list[int]:
    return [int(x) for x in log.read_text().split()] if log.exists() else []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SIGKILL of a process group")
def test_a_run_killed_mid_grid_resumes_with_the_missing_cells_only(tmp_path):
    script = tmp_path / "grid_plugin.py"
    script.write_text(SCRIPT)
    reference = tmp_path / "reference"
    assert _script_run(script, reference, tmp_path / "ref.log", "run").wait(timeout=300) == 0
    folder, first, second = tmp_path / "killed", tmp_path / "first.log", tmp_path / "second.log"
    run = _script_run(script, folder, first, "run")
    deadline = time.monotonic() + 300
    while len(_logged(first)) < 5 and time.monotonic() < deadline:   # mid-grid
        time.sleep(0.02)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    stored = {r["cell"]["size"] for r in ResultStore(folder).cell_records()}
    assert 4 <= len(stored) < 12 and ResultStore(folder).load() == []
    resumed = _script_run(script, folder, second, "resume")
    assert resumed.wait(timeout=300) == 0, resumed.stderr.read()
    assert sorted(_logged(second)) == sorted(set(range(1, 13)) - stored)
    [row] = ResultStore(folder).load()
    [ref] = ResultStore(reference).load()
    assert row.verdict == "holds" and _bits(row) == _bits(ref)


# --- declarations -------------------------------------------------------------------------

def _declare(cells, func=_combine, quick=None):
    thm = result("testpaper.bad", ref="Theorem 2", title="bad cells",
                 parts={"mean": "the sample mean is centred"})
    return claim("testpaper.bad.grid", ref="Theorem 2", kind="statement", statement="-",
                 expected="holds", result=thm, parts=("mean",),
                 quick=quick or dict(n_draws=10, sizes=[1, 2]), cells=cells)(func)


def _no_rng(*, n_draws, size, shift):
    return {}


def _no_cells(*, rng, n_draws, sizes):
    return Evidence(0.0, 1.0, "<=", Tolerance.exact())


@pytest.mark.parametrize("cells, func, says", [
    ("grid", _combine, "cells must be dict"),
    (dict(grid=_grid), _combine, "cells must be dict"),
    (dict(grid=_grid, run=_cell, combine=_combine), _combine, "cells must be dict"),
    (dict(grid=_grid, run=3), _combine, r"cells\['run'\] must be a function"),
    (dict(grid=_grid, run=_no_rng), _combine, r"cells\['run'\] must be a function"),
    (dict(grid=_grid, run=_cell), _no_cells, "keyword argument 'cells'")])
def test_a_bad_cell_declaration_names_the_argument(ledger_sandbox, cells, func, says):
    with pytest.raises(ValueError, match=says):
        _declare(cells, func)


@pytest.mark.parametrize("grid, says", [
    (lambda *, rng, n_draws, sizes: [], "non-empty list"),
    (lambda *, rng, n_draws, sizes: [dict(size=1)] * 2, "twice"),
    (lambda *, rng, n_draws, sizes: [dict(size=object())], "not JSON"),
    (lambda *, rng, n_draws, sizes: ["size"], "dict with str keys")])
def test_a_malformed_grid_is_an_error_naming_cells(ledger_sandbox, grid, says):
    _declare(dict(grid=grid, run=_cell))
    c = registry.get("testpaper.bad.grid")
    with pytest.raises(ValueError, match=f"cells: .*{says}"):
        c.cell_plan(0, "quick")
    row = c.check(seed=0)
    assert row.verdict == "error" and "cells:" in row.reason and says in row.reason
    [ran] = run_claims([c], seed=0, workers=1)        # the engine runs it as one task
    assert ran.verdict == "error" and says in ran.reason


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="as the kill test")
def test_two_runs_into_one_store_compute_each_cell_once(tmp_path):
    script = tmp_path / "grid_plugin.py"
    script.write_text(SCRIPT)
    folder, logs = tmp_path / "shared", [tmp_path / "a.log", tmp_path / "b.log"]
    # with --resume, as two runs meant to share one store (without it, a run recomputes
    # what was stored before it began)
    runs = [_script_run(script, folder, log, "resume") for log in logs]
    for run in runs:
        assert run.wait(timeout=300) == 0, run.stderr.read()
    assert sorted(_logged(logs[0]) + _logged(logs[1])) == list(range(1, 13))
    rows = ResultStore(folder).load()
    assert rows and len({_bits(r) for r in rows}) == 1 and rows[0].verdict == "holds"
