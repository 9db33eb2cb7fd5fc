"""The scale-out simulation on hand-made durations: list scheduling, its bounds, its input."""

from __future__ import annotations

import json

import pytest

from benchmarks import scale_sim
from benchmarks.scale_sim import lower_bound, makespan


def test_one_long_task_bounds_the_makespan():
    durations = [100.0] + [1.0] * 50
    for w in (2, 8, 64, 256):
        for order in scale_sim.POLICIES:
            assert makespan(durations, w, order=order) >= 100.0
    # with enough workers the long task, started first, is all that is left
    assert makespan(durations, 51, order="longest-first") == 100.0
    assert makespan(durations, 2, order="longest-first") == 100.0   # 50 s fit beside it


def test_one_worker_runs_everything_in_turn_and_many_workers_the_longest():
    durations = [3.0, 1.0, 4.0, 1.0, 5.0]
    for order in scale_sim.POLICIES:
        assert makespan(durations, 1, order=order) == sum(durations)
        assert makespan(durations, 5, order=order) == 5.0
        assert makespan(durations, 256, order=order) == 5.0


def test_longest_first_against_submission_order():
    """Submission order leaves the long task last, to run alone; longest first does not."""
    durations = [1.0, 1.0, 1.0, 1.0, 4.0]
    assert makespan(durations, 2, order="dask") == 6.0           # 1+1, 1+1, then 4
    assert makespan(durations, 2, order="longest-first") == 4.0  # 4 | 1+1+1+1
    # Graham's LPT example: 3,3,2,2,2 on 2 workers gives 7 against the optimum 6
    assert makespan([3, 3, 2, 2, 2], 2) == 7.0


def test_equal_tasks_take_ceil_n_over_w_rounds():
    for n, w in [(10, 3), (7, 7), (5, 8), (256, 16)]:
        assert makespan([2.0] * n, w) == 2.0 * -(-n // w)


def test_every_schedule_respects_the_lower_bound_and_overhead_adds_up():
    durations = [0.5, 7.0, 2.25, 3.0, 3.0, 0.1, 9.0, 1.0]
    for w in range(1, 12):
        for order in scale_sim.POLICIES:
            m = makespan(durations, w, order=order)
            assert lower_bound(durations, w) <= m <= sum(durations)
    assert makespan([1.0, 1.0], 1, overhead=0.5) == 3.0


@pytest.mark.parametrize("args, says", [
    (([-1.0], 2), "durations"), (([float("nan")], 2), "durations"), (([1.0], 0), "workers"),
    (([1.0], 2.0), "workers"), (([1.0], 2), "order")])
def test_bad_input_names_the_argument(args, says):
    kwargs = {"order": "random"} if says == "order" else {}
    with pytest.raises(ValueError, match=says):
        makespan(*args, **kwargs)


def _report(tasks):
    return {"profile": "quick", "host": "h", "date": "d", "workers": 2, "commits": {},
            "store": "s", "tasks": [dict(id=i, wall_s=w, cell_wall_s=c) for i, w, c in tasks]}


def test_cells_are_scheduled_alone_unless_whole(tmp_path):
    report = _report([("p.big", 100.0, [25.0] * 4), ("p.a", 10.0, []), ("p.b", 10.0, [])])
    split = scale_sim.simulate(report, max_workers=8)
    whole = scale_sim.simulate(report, whole=True, max_workers=8)
    assert split["units"] == 6 and whole["units"] == 3
    at8 = {r["workers"]: r for r in split["curve"]}[8]
    assert at8["longest-first_s"] == 25.0 and whole["curve"][7]["longest-first_s"] == 100.0
    assert whole["curve"][0]["longest-first_speedup"] == 1.0
    path = tmp_path / "times.json"
    path.write_text(json.dumps(report))
    out = scale_sim.main([str(path), "--out", str(tmp_path), "--max-workers", "4"])
    assert json.loads(out.read_text())["curve"][-1]["workers"] == 4
    assert not out.with_suffix(".md").exists()     # results are data: the table is printed


def test_the_cpu_clock_schedules_cpu_seconds_and_needs_them_all():
    report = _report([("p.big", 100.0, [25.0] * 4), ("p.a", 10.0, [])])
    report["tasks"][0].update(cpu_s=40.0, cell_cpu_s=[10.0] * 4)
    report["tasks"][1].update(cpu_s=4.0, cell_cpu_s=[])
    report["cpu_recorded"] = 2
    cpu = scale_sim.simulate(report, max_workers=2, clock="cpu")
    assert cpu["clock"] == "cpu" and cpu["total_s"] == 44.0 and cpu["longest_s"] == 10.0
    assert scale_sim.simulate(report, max_workers=2)["total_s"] == 110.0      # wall
    report["cpu_recorded"] = 1
    with pytest.raises(ValueError, match="clock"):
        scale_sim.simulate(report, clock="cpu")
    with pytest.raises(ValueError, match="clock"):
        scale_sim.simulate(report, clock="gpu")
