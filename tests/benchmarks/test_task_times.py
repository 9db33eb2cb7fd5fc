"""The task-time table of a results store: every task of a profile, longest first, its share,
its CPU seconds, its cells; usage errors exit 2 before anything is written."""

from __future__ import annotations

import json

import pytest

from benchmarks import task_times
from benchmarks.task_times import collect, max_overlap
from flbounds.ledger import ResultStore, run_claims, select

SPLIT = "fedals.thm41.bound"          # a claim split into cells


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    folder = tmp_path_factory.mktemp("times")
    run_claims(select(["focus.matrices", SPLIT]), store=ResultStore(folder), workers=1)
    return folder


def test_the_table_lists_every_task_longest_first_with_its_share(stored, tmp_path, capsys):
    report = collect(ResultStore(stored), "quick")
    tasks = report["tasks"]
    assert len(tasks) == len(select(["focus.matrices", SPLIT])) == report["claims"]
    walls = [t["wall_s"] for t in tasks]
    assert walls == sorted(walls, reverse=True)
    assert sum(t["share"] for t in tasks) == pytest.approx(1.0)
    assert tasks[-1]["cumulative_share"] == pytest.approx(1.0)
    assert all(t["cpu_s"] > 0 for t in tasks) and report["cpu_recorded"] == len(tasks)
    assert report["workers"] == 1 and report["profile"] == "quick"   # one task at a time
    [split] = [t for t in tasks if t["id"] == SPLIT]
    assert split["cells"] == len(split["cell_wall_s"]) > 1
    assert sum(split["cell_wall_s"]) <= split["wall_s"]           # plus the combine
    path = task_times.main(["--results", str(stored), "--profile", "quick",
                            "--out", str(tmp_path)])
    written = json.loads(path.read_text())
    assert written["host"] and written["date"] and written["commits"]
    assert tasks[0]["id"] in capsys.readouterr().out


def test_max_overlap_counts_the_tasks_that_ran_at_once():
    assert max_overlap([]) == 0
    assert max_overlap([(0, 2), (2, 3)]) == 1               # one ends as the next starts
    assert max_overlap([(0, 5), (1, 2), (1.5, 3), (4, 6)]) == 3


@pytest.mark.parametrize("argv, says", [
    (["--results", "/nonexistent"], "no results store"),
    (["--profile", "full"], "no rows of profile 'full'")])
def test_usage_errors_exit_2(stored, tmp_path, argv, says, capsys):
    argv = argv if argv[0] == "--results" else ["--results", str(stored), *argv]
    with pytest.raises(SystemExit) as err:
        task_times.main([*argv, "--out", str(tmp_path / "out")])
    assert err.value.code == 2 and says in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
