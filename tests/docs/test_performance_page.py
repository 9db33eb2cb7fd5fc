"""The performance page's generator: a target's standing is computed from the stored runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "_ext"))
performance_page = pytest.importorskip("performance_page")


def _bench(values):
    rows = [{"kind": k, "p": 1, "N": 10000, "ratio_min": v} for k, v in values.items()]
    return {"title": "t", "command": "c", "units": {}, "runs": [
        {"date": "2026-01-01", "host": {"cpu": "old"}, "commit": None, "tables": {"s": [
            {"kind": "ridge", "p": 1, "N": 10000, "ratio_min": 0.1}]}},
        {"date": "2026-01-02", "host": {"cpu": "x", "cores": 2}, "commit": "abc1234",
         "tables": {"s": rows}}],
        "targets": [{"what": "ratio", "table": "s", "column": "ratio_min",
                     "where": {"N": 10000}, "at_least": 3.0}]}


def test_a_target_is_judged_on_the_latest_run_cell_by_cell():
    bench = _bench({"ridge": 3.5, "logistic": 2.9})
    measured, standing = performance_page.standing(bench["targets"][0], bench["runs"][-1])
    assert measured == "2.9 to 3.5 (2 values)"
    assert standing == "missed in 1 of 2: logistic p=1"
    met = _bench({"ridge": 3.5, "logistic": 3.0})
    assert performance_page.standing(met["targets"][0], met["runs"][-1])[1] == "met"
    page = performance_page.render({"x": met})
    assert "| `x` | ratio | `ratio_min` >= 3 | 2026-01-02 | 3 to 3.5 (2 values) | met |" in page
    assert performance_page.run_title(met["runs"][-1]) == "2026-01-02, x, 2 cores, commit `abc1234`"


def test_the_page_renders_every_stored_benchmark():
    stored = pytest.importorskip("benchmarks._results").load_all()
    page = performance_page.render(stored)
    for name, bench in stored.items():
        assert bench["title"] in page or name in ("peers", "scale_check_wall_first",
                                                  "scale_check_wall")
    assert "History of the runs against the peers" in page


def _times(profile):
    tasks = [{"id": "a.split", "task": "claim", "wall_s": 30.0, "cpu_s": 25.0, "verdict": "holds",
              "cells": 3, "cell_wall_s": [12.0, 10.0, 8.0], "cell_cpu_s": [9.0, 8.0, 8.0],
              "share": 0.6, "cpu_share": 25 / 45, "cumulative_share": 0.6},
             {"id": "b.whole", "task": "claim", "wall_s": 20.0, "cpu_s": 20.0,
              "verdict": "holds", "cells": 0, "cell_wall_s": [], "cell_cpu_s": [],
              "share": 0.4, "cpu_share": 20 / 45, "cumulative_share": 1.0}]
    return {"title": f"Task times of the {profile} ledger", "machine": "m", "host": "h",
            "date": "2026-01-01T00:00:00+00:00", "store": "s", "profile": profile,
            "commits": {"abc1234": 2}, "source_commit": "", "workers": 2, "tasks_count": 2,
            "claims": 2, "attacks": 0, "cpu_recorded": 2, "task_wall_s": 50.0,
            "task_cpu_s": 45.0, "span_s": 31.0, "tasks": tasks}


def test_task_times_and_the_simulated_curve_are_rendered_from_their_json():
    """The ledger's task-time report and its scale-out simulation (benchmarks.task_times,
    benchmarks.scale_sim) get their own sections, the longest unit named (a cell of a split
    claim), and are not mistaken for run records."""
    scale_sim = pytest.importorskip("benchmarks.scale_sim")
    times = _times("quick")
    sim = scale_sim.simulate(times, max_workers=4)
    whole = scale_sim.simulate(times, whole=True, max_workers=4)
    page = performance_page.render({"task_times_quick": times, "scale_sim_quick": sim,
                                    "scale_sim_quick_whole": whole})
    assert "## Where the ledger's time goes" in page
    assert "longest unit 20.0 s (`b.whole`)" in page
    assert "| `a.split` | 30 | 60.0% | 60.0% | 25 | 3 | 12 | holds |" in page
    assert "## Scale-out by simulation" in page
    assert page.index(sim["title"]) < page.index(whole["title"])
    # 4 units (3 cells + 1 task), longest first on 2 workers: 20 + 8 | 12 + 10 -> 28 s of 50
    assert "| 2 | 28 | 1.79 | " in page
    # one task per claim: 30 | 20 -> 30 s
    assert "| 2 | 30 | 1.67 | " in page
