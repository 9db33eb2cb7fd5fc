"""The stored benchmark results (``benchmarks/results/*.json``): every file follows the schema
the performance page reads, and ``--record`` appends a run to it."""

from __future__ import annotations

import datetime
import json
import os

import pytest

from benchmarks import _peers_record, _results, scale_check_wall
from benchmarks import _peers_report as report

STORED = _results.load_all()
#: snapshots of one run's task times and of its simulated scale-out (benchmarks.task_times,
#: benchmarks.scale_sim), not run histories: their own shape, checked below
SNAPSHOTS = ("task_times_", "scale_sim_")
HISTORIES = {name: bench for name, bench in STORED.items() if not name.startswith(SNAPSHOTS)}


def test_the_results_are_data_not_prose():
    assert STORED, "no stored benchmark results"
    assert sorted(p.suffix for p in _results.RESULTS.iterdir() if p.is_file()) == \
        [".json"] * len(STORED)


@pytest.mark.parametrize("name", sorted(n for n in STORED if n.startswith(SNAPSHOTS)))
def test_a_stored_snapshot_has_its_fields(name):
    snap = STORED[name]
    assert snap["title"]
    if name.startswith("task_times_"):
        assert snap["profile"] and snap["host"] and snap["claims"] and snap["tasks"]
    else:                                   # units: how many tasks the schedule places
        assert snap["curve"] and snap["longest_s"] > 0 and snap["total_s"] >= snap["longest_s"]


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_a_stored_benchmark_follows_the_schema(name):
    bench = STORED[name]
    assert bench["benchmark"] == name and bench["title"]
    assert isinstance(bench["units"], dict) and bench["runs"]
    for run in bench["runs"]:
        datetime.date.fromisoformat(run["date"])
        assert {"cpu", "cores"} <= set(run["host"]) and "commit" in run
        assert run["tables"] and all(
            isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows)
            for rows in run["tables"].values())
    for target in bench["targets"]:
        assert {"what", "table", "column"} <= set(target)
        assert {"at_least", "at_most", "between"} & set(target)
        latest = bench["runs"][-1]["tables"].get(target["table"], [])
        assert any(target["column"] in row for row in latest), target


def test_record_appends_a_run_with_host_date_and_commit(tmp_path, monkeypatch):
    row = {"profile": "quick", "workers": 2, "claims": 3, "wall_s": 1.5, "cpu_s": 2.0,
           "task_s": 1.0, "as_expected": 3, "verdicts": "holds 3", "peak_rss_mib": 10.0,
           "exit": 0}
    monkeypatch.setattr(scale_check_wall, "run_check", lambda *a, **k: dict(row))
    monkeypatch.setattr(_results, "RESULTS", tmp_path / "results")
    for _ in range(2):
        scale_check_wall.main(["--record", "--pattern", "focus.lemma4.consensus",
                               "--out", str(tmp_path / "out")])
    stored = json.loads((tmp_path / "results" / "scale_check_wall.json").read_text())
    assert len(stored["runs"]) == 2 and stored["units"]["wall_s"] == "s"
    run = stored["runs"][-1]
    assert run["date"] == datetime.date.today().isoformat()
    assert run["tables"]["results"][0]["wall_s"] == 1.5
    assert run["host"]["cores"] and "commit" in run
    out = json.loads((tmp_path / "out" / "scale_check_wall.json").read_text())
    assert out["tables"] == run["tables"]


def check_the_record(data, folder):
    """``peers --record`` appends one run per call to peers.json: dated, with host and
    commit, the summary's ratios and every timing as numbers, units and the targets (called
    by tests/benchmarks/test_peers.py with the data of a tiny real run)."""
    for _ in range(2):
        path = _peers_record.append(data, folder)
    stored = json.loads(path.read_text())
    assert path.name == "peers.json" and len(stored["runs"]) == 2
    assert {t["column"] for t in stored["targets"]} >= {"ratio_min", "roofline_cpu_1t"}
    run = stored["runs"][-1]
    assert set(run) >= {"date", "host", "commit", "profile", "machine", "tables"}
    assert run["host"]["cores"] == os.cpu_count()
    summary, timings = run["tables"]["summary"], run["tables"]["timings"]
    assert len(summary) == len(data["summary"]) and timings
    assert all(isinstance(e["ratio_min"], float) for e in summary)
    assert set(stored["units"]) >= {"ratio_min", "rounds_s_median"}
    assert _results.load_all(folder)["peers"] == stored


def test_a_report_row_becomes_numbers():
    row = _peers_record.as_data({"ratio_2t": "1.83-1.84 vs jax", "wall_per_cpu": "1.00 / 0.98",
                                 "spread": "6% (noisy)", "max_diff": "8.9e-16 <= 1.5e-10",
                                 "peak_MiB": "XLA (untraced)", "ratio_min": 2.5})
    assert row == {"ratio_2t": [1.83, 1.84], "peer_2t": "jax", "wall_per_cpu": [1.0, 0.98],
                   "spread": 0.06, "noisy": True, "max_diff": 8.9e-16, "tolerance": 1.5e-10,
                   "peak_MiB": None, "ratio_min": 2.5}
    busy = _peers_record.as_data({"ratio_2t": report.BUSY, "roofline_2t": report.BUSY})
    assert busy["ratio_2t"] is None and busy["roofline_2t"] is None
    assert busy["note_2t"] == report.BUSY
