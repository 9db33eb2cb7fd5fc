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
