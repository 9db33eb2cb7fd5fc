"""The peers benchmark harness on tiny sizes: peers compute flbounds' iterates, the free-core
rule marks 2-thread cells, the tables have their columns. No timing is asserted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks import _peer_jax as pj
from benchmarks import _peer_numpy as pn
from benchmarks import _peers_report as report
from benchmarks import _peers_run as run
from benchmarks import _roofline as roofline
from benchmarks import peers
from tests.benchmarks.test_results import check_the_record

TINY = run.Settings(sizes=(10,), work=30, loop_work=10, min_block=1e-4, repeats=2,
                    kinds=("ridge",))
MACHINE = {"dgemm_1t": 50.0, "read_1t": 10.0, "free": False, "free_speedup": 1.0,
           "load1": 1.0, "after": {"free_speedup": 1.0, "load1": 1.0}}


def _case(kind, algorithm, n=10, p=0.5, rounds=6):
    problem = run.make_problem(kind, n)
    return run.make_case(kind, algorithm, problem, p, rounds)


@pytest.mark.parametrize("kind", run.KINDS)
@pytest.mark.parametrize("algorithm", run.ALGORITHMS)
@pytest.mark.parametrize("p", [1.0, 0.5])
def test_numpy_peers_agree_with_flbounds(kind, algorithm, p):
    case = _case(kind, algorithm, p=p)
    reference = run.flbounds_run(case, 6)
    for peer in run.NUMPY_PEERS:
        x = run.numpy_run(case, peer, 6)
        tol = run.tolerance(kind, 6, 1.0 + np.max(np.abs(reference[6])))
        assert np.max(np.abs(x - reference[6])) <= tol, peer


def test_blocked_einsum_with_small_blocks_agrees(monkeypatch):
    case = _case("ridge", "focus", n=20, p=1.0)
    monkeypatch.setattr(pn, "BLOCK_BYTES", 3 * (case.data.a[0].nbytes + case.data.b[0].nbytes))
    assert pn.block_size(case.data) == 3
    reference = run.flbounds_run(case, 6)[6]
    x = run.numpy_run(case, "einsum-blocked", 6)
    assert np.max(np.abs(x - reference)) <= run.tolerance("ridge", 6, 1 + np.abs(reference).max())


@pytest.mark.skipif(not pj.available(), reason="JAX (extra 'bench') not installed")
@pytest.mark.parametrize("kind", run.KINDS)
@pytest.mark.parametrize("algorithm", run.ALGORITHMS)
def test_jax_peer_agrees_with_flbounds(kind, algorithm):
    case = _case(kind, algorithm, p=0.5)
    reference = run.flbounds_run(case, 6)[6]
    fn = pj.runner(algorithm, kind, case.data.lam, case.step, run.TAU, case.prob, case.data.a,
                   case.data.b, case.masks[:6], np.zeros(case.data.a.shape[-1]))
    assert np.max(np.abs(fn() - reference)) <= run.tolerance(kind, 6,
                                                            1 + np.abs(reference).max())


@pytest.mark.parametrize("kind", run.KINDS)
@pytest.mark.parametrize("algorithm", run.ALGORITHMS)
@pytest.mark.parametrize("p", [1.0, 0.1])
def test_every_timed_run_converges(kind, algorithm, p):
    """The cases' steps keep every run contracting toward x*, at a size where FOCUS's sum
    over N clients matters (FOCUS at FedAvg's step 1/(2L) fails here)."""
    case = _case(kind, algorithm, n=200, p=p, rounds=40)
    ratio = run.check_converging(case, run.flbounds_run(case, 40))
    assert ratio < 0.9


def test_a_diverging_run_is_not_timed():
    case = _case("quadratic", "focus", n=200, p=1.0, rounds=40)
    unstable = case._replace(step=run.step_of("fedavg", case.problem))
    with pytest.raises(AssertionError, match="moves away from x"):
        run.check_converging(unstable, run.flbounds_run(unstable, 40))


def test_a_settled_run_is_compared_where_it_still_moves():
    """FOCUS at N = 100, p = 0.1 reaches x* to the last digit within a timed call's 1000
    rounds: there a peer with one local step fewer, or x* itself, agrees with the last
    iterate; at :func:`check_round` both are rejected."""
    case = _case("quadratic", "focus", n=100, p=0.1, rounds=1000)
    reference = run.flbounds_run(case, 1000)
    at = run.check_round(case, reference)
    assert at < 1000
    x0 = np.zeros(case.data.a.shape[-1])
    wrong = {"one step fewer": lambda r: pn.focus_batched(case.data, case.masks[:r], case.step,
                                                          run.TAU - 1, x0, None),
             "x*": lambda r: np.asarray(case.problem.x_star, dtype=float)}
    for name, fn in wrong.items():
        run.agreement(case, {name: (lambda fn=fn: fn(1000), 1000)}, reference)   # vacuous
        with pytest.raises(AssertionError, match="disagrees"):
            run.agreement(case, {name: (lambda fn=fn: fn(at), at)}, reference)
    right = {peer: (lambda peer=peer: run.numpy_run(case, peer, at), at)
             for peer in ("einsum", "einsum-blocked")}
    run.agreement(case, right, reference)


def test_agreement_rejects_a_peer_computing_something_else():
    case = _case("quadratic", "fedavg")
    reference = run.flbounds_run(case, 6)
    wrong = case._replace(step=case.step * 1.01)
    impls = {"einsum": (lambda: run.numpy_run(wrong, "einsum", 6), 6)}
    with pytest.raises(AssertionError, match="disagrees"):
        run.agreement(case, impls, reference)


def test_busy_machine_marks_two_thread_cells(monkeypatch):
    monkeypatch.setattr(run, "two_free_cores", lambda: (False, 1.1, 4.0))
    rows = run.bench_case(_case("ridge", "fedavg"), TINY, threads=2)
    assert [r["status"] for r in rows] == ["busy"]
    one = run.bench_case(_case("ridge", "fedavg"), TINY, threads=1)
    children = [{"threads": 1, "rows": one, "profiles": [], "jax": pj.available(),
                 "max_rss_mib": 1.0},
                {"threads": 2, "rows": rows, "profiles": [], "jax": pj.available(),
                 "max_rss_mib": 1.0}]
    (entry,) = report.summarize(children, MACHINE)
    assert entry["ratio_2t"] == report.BUSY and entry["roofline_2t"] == report.BUSY


@pytest.mark.parametrize("speedups, free, calls", [((1.2, 1.9, 1.0), True, 2),
                                                    ((1.2, 1.3, 1.4), False, 3),
                                                    ((1.95,), True, 1)])
def test_free_cores_take_the_best_of_a_few_measurements(monkeypatch, speedups, free, calls):
    seen = iter(speedups)
    count = []
    monkeypatch.setattr(roofline.numba.config, "NUMBA_NUM_THREADS", 2)
    monkeypatch.setattr(roofline.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(roofline, "parallel_speedup", lambda: count.append(1) or next(seen))
    got, best, _ = roofline.two_free_cores()
    assert (got, best, len(count)) == (free, max(speedups[:calls]), calls)


def test_a_core_lost_during_the_timing_marks_the_cell_busy(monkeypatch):
    """Two free cores before the timing and not after: the cell's 2-thread figures are not
    reported (a hypervisor may take the second core for seconds at a time)."""
    checks = iter([(True, 2.0, 0.1), (False, 1.1, 1.0)])
    monkeypatch.setattr(run, "two_free_cores", lambda: next(checks))
    rows = run.bench_case(_case("ridge", "fedavg"), TINY, threads=2)
    assert [(r["impl"], r["status"]) for r in rows] == [("all", "busy")]
    assert rows[0]["free_speedup"] == 2.0 and rows[0]["free_speedup_after"] == 1.1


def test_free_cores_allow_two_thread_timing(monkeypatch):
    monkeypatch.setattr(run, "two_free_cores", lambda: (True, 2.0, 0.1))
    rows = run.bench_case(_case("ridge", "fedavg"), TINY, threads=2)
    assert {r["impl"] for r in rows} >= {"flbounds", "einsum", "einsum-blocked"}
    assert "loop" not in {r["impl"] for r in rows}


def test_harness_produces_tables_with_their_columns(tmp_path):
    rows, profiles = run.run_all(TINY, 1)
    expected = {"flbounds", "einsum", "einsum-blocked", "loop"} | ({"jax"} if pj.available()
                                                                  else set())
    assert {r["impl"] for r in rows} == expected
    assert {(r["algorithm"], r["p"]) for r in rows} == {
        (a, p) for a in run.ALGORITHMS for p in run.FRACTIONS}
    child = {"threads": 1, "rows": rows, "profiles": profiles, "jax": pj.available(),
             "max_rss_mib": 1.0}
    markdown, data = report.render([child], MACHINE, "quick")
    header = "| " + " | ".join(report.SUMMARY_COLUMNS) + " |"
    assert header in markdown
    assert "| " + " | ".join(report.DETAIL_COLUMNS) + " |" in markdown
    assert len(data["summary"]) == len(run.ALGORITHMS) * len(run.FRACTIONS)
    assert "### Missed targets" in markdown
    assert "Columns: `flbounds_rounds_s`" in markdown and "1/(N L) for FOCUS" in markdown
    section = report.readme_section(data)
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\n## Benchmarks\n\ntext\n\n## Layout\n")
    report.update_readme(readme, section)
    report.update_readme(readme, section)
    text = readme.read_text()
    assert text.count(report.BEGIN) == 1 and "FedAvg roofline wall / CPU" in text
    assert text.index(report.END) < text.index("## Layout")
    assert "benchmarks/results/peers.json" in text and "PEERS-" not in text
    check_the_record(data, tmp_path / "results")  # --record's data, from this run's tables


def test_without_jax_the_column_says_not_installed():
    child = {"threads": 1, "rows": [], "profiles": [], "jax": False, "max_rss_mib": 1.0}
    assert {"kind": "all", "threads": 1, "impl": "jax",
            "rounds_s_min": report.NO_JAX} in report.detail_rows([child])


@pytest.mark.parametrize("argv", [["--sizes", "0"], ["--sizes", "abc"], ["--repeats", "-1"],
                                  ["--min-block", "0"], ["--min-block", "nan"],
                                  ["--kinds", "cubic"], ["--threads", "3"]])
def test_bad_arguments_exit_2_before_work(argv, tmp_path, capsys):
    with pytest.raises(SystemExit) as err:
        peers.main([*argv, "--out", str(tmp_path / "out")])
    assert err.value.code == 2
    assert not (tmp_path / "out").exists()
    assert "_positive" not in capsys.readouterr().err


def test_an_unwritable_out_is_a_usage_error_before_any_work(tmp_path, monkeypatch, capsys):
    from benchmarks import __main__ as bench_main
    monkeypatch.setattr(peers, "spawn", lambda *a, **k: pytest.fail("work started"))
    blocker = tmp_path / "file"
    blocker.write_text("")
    for entry in (lambda argv: peers.main(argv), lambda argv: bench_main.main(["peers", *argv])):
        with pytest.raises(SystemExit) as err:
            entry(["--out", str(blocker / "sub"), "--sizes", "10", "--threads", "1"])
        assert err.value.code == 2
        assert "expected a folder" in capsys.readouterr().err


def test_help_of_one_benchmark_lists_its_own_options(capsys):
    from benchmarks import __main__ as bench_main
    with pytest.raises(SystemExit) as err:
        bench_main.main(["peers", "--help"])
    assert err.value.code == 0
    assert "--sizes" in capsys.readouterr().out
    assert bench_main.main(["--help"]) == 0
    assert "peers" in capsys.readouterr().out


def test_help_needs_no_output_folder_and_an_unusable_default_is_a_usage_error(
        tmp_path, monkeypatch, capsys):
    from benchmarks import __main__ as bench_main
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(bench_main, "DEFAULT_OUT", blocker / "out")
    monkeypatch.setattr(peers, "main", lambda argv: pytest.fail("work started"))
    assert bench_main.main(["--help"]) == 0
    with pytest.raises(SystemExit) as err:
        bench_main.main(["peers"])
    assert err.value.code == 2 and "expected a folder" in capsys.readouterr().err


def test_intensity_matches_the_documented_counts():
    from benchmarks._roofline import flops_bytes, intensity, roofline
    assert flops_bytes("ridge", 50, 20, 5) == (20000.0, 8160.0)
    assert intensity("quadratic", 16, 0, 5) == pytest.approx(2560 / 2176)
    assert roofline(2.0, 50.0, 10.0) == 20.0 and roofline(10.0, 50.0, 10.0) == 50.0


def test_scale_kernels_marks_two_thread_cells_when_busy(monkeypatch):
    from benchmarks import focus_rounds, scale_kernels
    from flbounds.algorithms import fedavg
    from flbounds.problems import random_ridge
    monkeypatch.setattr(scale_kernels, "two_free_cores", lambda: (False, 1.0, 3.0))
    monkeypatch.setattr(scale_kernels, "best_time", lambda fn, **kw: (fn(), 1.0)[1])
    rng = np.random.default_rng(0)
    problem = random_ridge(rng, 6, focus_rounds.SAMPLES, focus_rounds.DIM, lam=focus_rounds.LAM)
    plan = np.ones((3, 6), dtype=bool)
    row = scale_kernels.bench_case("FedAvg", fedavg, focus_rounds.loop_fedavg, problem, plan)
    assert row["rounds_s_2t"] == row["speedup_2t"] == scale_kernels.BUSY
    assert isinstance(row["rounds_s_1t"], float) and row["max_abs_diff"] < 1e-10
    fits = scale_kernels.exponents([dict(row, N=n) for n in (10, 100)])
    assert fits[0]["exponent_2t"] == scale_kernels.BUSY


def test_focus_rounds_steps_converge_where_the_fedavg_step_diverges():
    from benchmarks import focus_rounds
    from benchmarks._common import check_approaches
    from flbounds.algorithms import focus
    from flbounds.problems import random_ridge
    problem = random_ridge(np.random.default_rng(0), 3000, focus_rounds.SAMPLES,
                           focus_rounds.DIM, lam=focus_rounds.LAM, heterogeneity=0.5)
    plan = np.random.default_rng(1).random((30, 3000)) < focus_rounds.P
    trace = focus(problem, plan, step=focus_rounds.step_for("FOCUS", problem),
                  local_steps=focus_rounds.TAU).x
    assert check_approaches(problem, trace, "FOCUS") < 1.0
    unstable = focus(problem, plan, step=focus_rounds.step_for("FedAvg", problem),
                     local_steps=focus_rounds.TAU).x
    with pytest.raises(AssertionError, match="moves away"):
        check_approaches(problem, unstable, "FOCUS at FedAvg's step")


def test_focus_rounds_comparison_fails_on_a_different_loop():
    from benchmarks import focus_rounds as fr
    from flbounds.algorithms import fedavg
    from flbounds.problems import random_ridge
    problem = random_ridge(np.random.default_rng(0), 20, fr.SAMPLES, fr.DIM, lam=fr.LAM,
                           heterogeneity=0.5)
    plan = np.random.default_rng(1).random((30, 20)) < 0.5
    x = fedavg(problem, plan, step=fr.STEP, local_steps=fr.TAU).x[-1]
    fr.check_same(float(np.max(np.abs(x - fr.loop_fedavg(problem, plan, np.zeros(fr.DIM))))),
                  30, x, "same loop")
    other = fr.loop_fedavg(problem, plan, np.zeros(fr.DIM), step=fr.STEP * 1.01)
    with pytest.raises(AssertionError, match="differ"):
        fr.check_same(float(np.max(np.abs(x - other))), 30, x, "other step")


def test_kvib_solver_rows_exercise_the_clipping():
    from benchmarks.kvib_solver import solver_rows
    rows = solver_rows([1000], np.random.default_rng(0))
    assert rows[0]["clipped"] >= 1 and rows[0]["max_abs_diff"] < 1e-12


def test_pep_sizes_scenario_row_uses_focus_rates_step_and_weight():
    from benchmarks.pep_sizes import _printed_step
    from flbounds.ledger import bounds
    from flbounds.pep import focus_rate
    from verify.focus.pep_conditions import thm1a_lyapunov_weight
    p = np.linspace(0.3, 0.9, 2)
    step = _printed_step("focus.thm1a", p, 3, mu=1.0)
    weight = thm1a_lyapunov_weight(1.0, 2.0, 2, step)
    one = focus_rate(1.0, 2.0, p, 3, step, consensus_weight=weight)
    assert step == bounds.get("focus.thm1a").evaluate(mu=1.0, L=2.0, p=p, tau=3).step
    assert one.params["consensus_weight"] == weight


def test_check_approaches_from_the_optimum_itself():
    from types import SimpleNamespace

    from benchmarks._common import check_approaches
    at_zero = SimpleNamespace(x_star=np.zeros(2))
    assert check_approaches(at_zero, np.zeros((3, 2)), "stays") == 0.0
    with pytest.raises(AssertionError, match="moves away"):
        check_approaches(at_zero, np.array([[0.0, 0.0], [1.0, 0.0]]), "leaves")
    with pytest.raises(AssertionError, match="moves away"):
        check_approaches(SimpleNamespace(x_star=np.ones(2)),
                         np.array([[0.0, 0.0], [np.nan, 1.0]]), "NaN")


def test_a_run_settled_from_round_one_is_checked_at_round_one():
    case = _case("quadratic", "fedavg")
    trace = np.zeros((7, case.data.a.shape[-1]))
    trace[1:] = 1.0
    assert run.check_round(case, trace) == 1
    trace[1:] = np.arange(1, 7)[:, None]        # still moving at the end: the last round
    assert run.check_round(case, trace) == 6


def test_the_machine_line_names_the_cpu_generation(monkeypatch, tmp_path):
    """A bare "AMD EPYC" hides the host's generation; the line adds family, model and L1d."""
    from benchmarks import _common

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\ncpu family\t: 26\nmodel\t\t: 2\n"
                       "model name\t: AMD EPYC\n\nprocessor\t: 1\nmodel name\t: other\n")
    real_open = open
    monkeypatch.setattr("builtins.open", lambda path, *a, **k: real_open(
        cpuinfo if path == "/proc/cpuinfo" else path, *a, **k))
    monkeypatch.setattr(_common, "_l1_data_cache", lambda: "48K")
    assert ", AMD EPYC (family 26 model 2, L1d 48K), " in _common.machine_line()
    monkeypatch.setattr(_common, "_l1_data_cache", lambda: None)
    assert _common._cpu_description() == "AMD EPYC (family 26 model 2)"


def test_the_readme_table_needs_a_complete_run(tmp_path, monkeypatch, capsys):
    """--record from a partial run would replace the README's table with a few cells: a usage
    error before any work, and nothing written."""
    monkeypatch.setattr(peers, "spawn", lambda *a, **k: pytest.fail("work started"))
    monkeypatch.setattr(peers, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(peers, "README", tmp_path / "README.md")
    with pytest.raises(SystemExit) as err:
        peers.main(["--record", "--sizes", "100", "--kinds", "ridge", "--threads", "1",
                    "--out", str(tmp_path / "out")])
    assert err.value.code == 2
    message = capsys.readouterr().err
    assert "N = 10000" in message and "kind quadratic" in message and "2 threads" in message
    assert not (tmp_path / "results").exists() and not (tmp_path / "README.md").exists()
    assert peers.readme_gaps((100, 1000, 10000), run.KINDS, (1, 2)) == []


def test_readme_only_refuses_an_incomplete_stored_run(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    rows = [{"kind": "ridge", "N": 100, "impl": "flbounds"}]
    (out / "peers.json").write_text(json.dumps({"children": [{"threads": 1, "rows": rows}],
                                                "machine": {}, "profile": "quick"}))
    with pytest.raises(SystemExit) as err:
        peers.main(["--record-only", "--out", str(out)])
    assert err.value.code == 2
    assert "not a complete run" in capsys.readouterr().err


def test_a_run_without_jax_says_its_ratios_are_against_numpy_only():
    assert report._jax_notice([{"threads": 1, "jax": True}]) == ""
    assert "not against the strongest peer" in report._jax_notice(
        [{"threads": 1, "jax": False}])


@pytest.mark.parametrize("n_small, says", [(100, "memory traffic not separated"),
                                           (10, "minus N = 10")])
def test_the_profile_line_separates_memory_traffic_only_with_two_sizes(n_small, says):
    entry = {"kind": "ridge", "algorithm": "fedavg", "p": 1.0, "N": 100, "ratio_median": 2.0,
             "best_peer": "jax", "ratio_cpu_median": 2.0, "roofline_cpu_1t": 0.3,
             "roofline_1t": 0.3, "wall_per_cpu": "1.00 / 1.00", "flbounds_rounds_s": 1e4,
             "participants": 100.0}
    fit = {"per_client_s": 1e-6, "gradient_s": 1.6e-7, "fixed_s": 2e-7}
    prof = {"kind": "ridge", "p": 1.0, "n_small": n_small, "n_large": 100,
            "fits": {"small": fit, "large": fit}}
    assert says in report.diagnose(entry, [prof], {"dgemm_1t": 50.0})
