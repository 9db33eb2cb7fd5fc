"""Generate the performance page's measurements from the stored benchmark results.

``benchmarks/results/<name>.json`` (one file per benchmark, see :mod:`benchmarks._results`)
become ``reference/generated/performance-results.md``, which ``docs/performance.md`` includes:
the targets with their standing in each benchmark's latest run, the latest run against the
peers, the history of the peers runs and of the quick ledger's first and warm runs, where the
ledger's time goes (``task_times_<profile>.json`` of :mod:`benchmarks.task_times`: the longest
tasks and cells) and its scale-out by simulation (``scale_sim_<profile>[_whole].json`` of
:mod:`benchmarks.scale_sim`: the makespan on 1 .. 256 workers), and every other benchmark's
runs. Nothing on the page is typed by hand: a new ``--record`` run, or a new task-time or
simulation JSON, changes it at the next build.
"""

from __future__ import annotations

import importlib
from pathlib import Path

OUT = Path("reference") / "generated" / "performance-results.md"
#: the benchmark whose history and latest run get their own sections, and their order
PEERS, FIRST_WARM, WALL = "peers", "scale_check_wall_first", "scale_check_wall"
TARGET_N = 10000
#: prefixes of the ledger's task-time reports and their simulated scale-out (not run records)
TASK_TIMES, SCALE_SIM = "task_times_", "scale_sim_"
#: rows of the task-time table
TOP_TASKS = 15
#: the issue's target for the longest single task (seconds, full profile)
LONGEST_TARGET_S = 60.0
ALGORITHMS = (("fedavg", "FedAvg"), ("focus", "FOCUS"), ("sampler", "FedAvg + sampler"))


def fmt(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return "-".join(fmt(v) for v in value)
    return str(value).replace("|", "\\|").replace("\n", " ")


def table(rows: list[dict], columns: list[str] | None = None,
          header: dict[str, str] | None = None) -> list[str]:
    """A Markdown table of ``rows`` (columns: the union of their keys, in order of first
    appearance, unless given)."""
    if not rows:
        return ["(no rows)", ""]
    columns = columns or list(dict.fromkeys(key for row in rows for key in row))
    names = [(header or {}).get(c, c) for c in columns]
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt(row.get(c)) for c in columns) + " |" for row in rows]
    return [*lines, ""]


def host_text(run: dict) -> str:
    host = run.get("host") or {}
    parts = [host.get("cpu", "unknown CPU")]
    if host.get("cores"):
        parts.append(f"{host['cores']} cores")
    if host.get("memory_gib"):
        parts.append(f"{host['memory_gib']} GiB")
    if host.get("python"):
        parts.append(f"Python {host['python']}")
    return ", ".join(parts)


def run_title(run: dict) -> str:
    label = f" ({run['label']})" if run.get("label") else ""
    commit = f", commit `{run['commit']}`" if run.get("commit") else ""
    return f"{run['date']}{label}, {host_text(run)}{commit}"


def _matches(row: dict, where: dict) -> bool:
    return all(row.get(key) == value for key, value in where.items())


def _values(value) -> list[float]:
    values = value if isinstance(value, list) else [value]
    return [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]


def _meets(value: float, target: dict) -> bool:
    ok = True
    if "at_least" in target:
        ok &= value >= target["at_least"]
    if "at_most" in target:
        ok &= value <= target["at_most"]
    if "between" in target:
        low, high = target["between"]
        ok &= low <= value <= high
    return ok


def _threshold(target: dict) -> str:
    if "at_least" in target:
        return f">= {target['at_least']:g}"
    if "at_most" in target:
        return f"<= {target['at_most']:g}"
    low, high = target["between"]
    return f"{low:g} to {high:g}"


def _cell_name(row: dict) -> str:
    keys = ("kind", "algorithm", "p", "claim", "case", "tree", "workload")
    return " ".join(f"{k}={fmt(row[k])}" if k == "p" else fmt(row[k])
                    for k in keys if row.get(k) is not None) or "row"


def standing(target: dict, run: dict) -> tuple[str, str]:
    """(measured range, standing) of ``target`` on ``run``'s table."""
    rows = [r for r in run["tables"].get(target["table"], [])
            if _matches(r, target.get("where", {}))]
    cells = [(r, v) for r in rows for v in _values(r.get(target["column"]))]
    if not cells:
        return "not measured", "not measured"
    values = [v for _, v in cells]
    missed = sorted({_cell_name(r) for r, v in cells if not _meets(v, target)})
    measured = f"{min(values):.3g} to {max(values):.3g} ({len(cells)} values)"
    if not missed:
        return measured, "met"
    return measured, f"missed in {len(missed)} of {len({_cell_name(r) for r, _ in cells})}: " \
                     + "; ".join(missed)


def targets_section(results: dict) -> list[str]:
    rows = []
    for name, bench in results.items():
        if not bench.get("targets") or not bench["runs"]:
            continue
        latest = bench["runs"][-1]
        for target in bench["targets"]:
            measured, state = standing(target, latest)
            label = f" ({latest['label']})" if latest.get("label") else ""
            rows.append({"benchmark": f"`{name}`", "target": target["what"],
                         "threshold": f"`{target['column']}` {_threshold(target)}",
                         "latest run": f"{latest['date']}{label}", "measured": measured,
                         "standing": state})
    return ["## The targets in each benchmark's latest run", "",
            "Each target is judged on every matching cell of the benchmark's latest stored run "
            "(minimum over repeats where the target names it); each run's host and commit are "
            "in the sections below, with the history of earlier runs.", "", *table(rows)]


def peers_latest(bench: dict) -> list[str]:
    run = bench["runs"][-1]
    summary = run["tables"]["summary"]
    n = TARGET_N if any(r["N"] == TARGET_N for r in summary) else max(r["N"] for r in summary)
    cells = {(r["kind"], r["p"], r["algorithm"]): r for r in summary if r["N"] == n}
    rows = []
    for kind, p in dict.fromkeys((k, q) for k, q, _ in cells):
        row = {"problem": kind, "p": p}
        for algorithm, label in ALGORITHMS:
            e = cells.get((kind, p, algorithm))
            row[label] = "" if e is None else (
                f"{e['ratio_min']:.2f}-{e['ratio_median']:.2f}x {e['best_peer']} "
                f"(CPU {e['ratio_cpu_median']:.2f}x)")
        for algorithm, label in ALGORITHMS:
            e = cells.get((kind, p, algorithm))
            row[f"roofline {label}"] = "" if e is None else (
                f"{_two(e.get('roofline_cpu_1t'))} / {_two(e.get('roofline_2t'))}")
        fed = cells.get((kind, p, "fedavg"))
        row["FedAvg 2 threads"] = "" if fed is None or fed.get("ratio_2t") is None else (
            f"{fmt(fed['ratio_2t'])}x {fed.get('peer_2t', '')}")
        rows.append(row)
    machine = run.get("machine", {})
    roof = (f"roofline inputs measured in the run: dgemm {fmt(machine.get('dgemm_1t'))} "
            f"GFLOP/s and read {fmt(machine.get('read_1t'))} GB/s on one thread, dgemm "
            f"{fmt(machine.get('dgemm_2t'))} GFLOP/s on two")
    lines = ["## Against the peers: the latest run", "",
             f"`{bench['command']}`, {run_title(run)}; N = {n}, one thread unless marked; cells: "
             "flbounds / best peer, minimum-median over the interleaved repeats (wall time), "
             "and the median in CPU time; roofline: the fraction of min(dgemm, arithmetic "
             f"intensity x read bandwidth) reached, one thread (CPU time) / two threads; {roof}.",
             ""]
    if run.get("caveat"):
        lines += [f"Caveat: {run['caveat']}.", ""]
    lines += table(rows)
    if run.get("diagnosis"):
        lines += ["What limits each missed cell, as the run's profile diagnosed it:", ""]
        lines += [f"- {item}" for item in run["diagnosis"]] + [""]
    return lines


def _two(value) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else fmt(value)


def _range(rows: list[dict], column: str) -> str:
    values = [v for r in rows for v in _values(r.get(column))]
    return f"{min(values):.2f}-{max(values):.2f}" if values else ""


def peers_history(bench: dict) -> list[str]:
    rows = []
    for run in bench["runs"]:
        summary = run["tables"]["summary"]
        at_n = [r for r in summary if r["N"] == TARGET_N]
        machine = run.get("machine", {})
        rows.append({
            "date": run["date"], "run": run.get("label", ""), "CPU": run["host"].get("cpu"),
            "commit": run.get("commit"), "dgemm 1t": machine.get("dgemm_1t"),
            "read 1t": machine.get("read_1t"),
            "ratio p = 1": _range([r for r in at_n if r["p"] == 1], "ratio_min"),
            "ratio p = 0.1": _range([r for r in at_n if r["p"] == 0.1], "ratio_min"),
            "roofline 1t (CPU)": _range(at_n, "roofline_cpu_1t"),
            "roofline 2t": _range(at_n, "roofline_2t"), "caveat": run.get("caveat")})
    return ["## History of the runs against the peers", "",
            f"Every stored run of `{bench['command']}`, oldest first: the range over the nine "
            f"cells (three problems, three algorithms) at N = {TARGET_N} of the minimum ratio "
            "flbounds / best peer and of the roofline fractions; dgemm in GFLOP/s, read in "
            "GB/s, both measured in the run. Every cell of every run, with its timings per "
            "implementation, is in `benchmarks/results/peers.json`.", "", *table(rows)]


def first_warm_history(bench: dict, wall: dict | None) -> list[str]:
    columns = ["date", "run", "commit", "tree", "first_wall_s", "warm_wall_s", "wall_ratio",
               "first_cpu_s", "warm_cpu_s", "cpu_ratio", "compile_cpu_s", "as_expected"]
    rows = [{"date": run["date"], "run": run.get("label", ""), **row}
            for run in bench["runs"] for row in run["tables"]["pairs"]]
    lines = ["## The quick ledger: first run against warm run", "",
             f"`{bench['command']}`: the quick ledger with `--workers 2`, from an empty numba "
             "cache and at once again warm; seconds of wall and of CPU (user + system of the "
             "process tree). Runs on a loaded machine say so below; compare CPU ratios there.",
             "", *table(rows, columns)]
    caveats = [f"- {run['date']} ({run.get('label', '')}): {run['caveat']}"
               for run in bench["runs"] if run.get("caveat")]
    lines += caveats + ([""] if caveats else [])
    if wall:
        lines += ["### The whole ledger", "", f"`{wall['command']}`:", ""]
        for run in wall["runs"]:
            lines += [run_title(run) + ":", "", *table(run["tables"]["results"])]
    return lines


def other_benchmarks(results: dict, skip: set[str]) -> list[str]:
    lines = ["## Other benchmarks", ""]
    for name, bench in results.items():
        if name in skip:
            continue
        command = f"`{bench['command']}`" if bench.get("command") else "measured by hand"
        lines += [f"### {bench['title']}", "", f"{command}; stored in "
                  f"`benchmarks/results/{name}.json`.", ""]
        for run in bench["runs"]:
            lines += [f"{run_title(run)}:", ""]
            if run.get("caveat"):
                lines += [f"Caveat: {run['caveat']}.", ""]
            for table_name, rows in run["tables"].items():
                if len(run["tables"]) > 1:
                    lines += [f"`{table_name}`:", ""]
                lines += table(rows)
        units = bench.get("units") or {}
        if units:
            lines += ["Units: " + "; ".join(f"`{k}` {v}" for k, v in units.items()) + ".", ""]
    return lines


def _profile_order(name: str, prefix: str) -> tuple:
    """Full before quick, the split schedule before the one-task-per-claim one."""
    rest = name[len(prefix):]
    return (not rest.startswith("full"), rest.endswith("_whole"), rest)


def _longest_unit(task: dict) -> float:
    return max(task.get("cell_wall_s") or [task["wall_s"]])


def task_times_section(reports: dict[str, dict]) -> list[str]:
    """The longest tasks of each recorded ledger (:mod:`benchmarks.task_times`)."""
    lines = ["## Where the ledger's time goes", "",
             "`python -m flbounds check --profile P --workers 2`, then `python -m benchmarks "
             "task_times --profile P` reads the results store: every claim's and attack's wall "
             "and CPU seconds, and those of each cell of a claim split into cells (a split "
             "claim's wall time spans its cells, which run side by side). Sorted by wall time, "
             "longest first, with each task's share of the summed task time; *longest unit* "
             "is the longest single task the scheduler sees (a cell for a split claim), "
             f"against the target of at most {LONGEST_TARGET_S:g} s at the full profile.", ""]
    for name in sorted(reports, key=lambda n: _profile_order(n, TASK_TIMES)):
        report = reports[name]
        tasks = report.get("tasks") or []
        if not tasks:
            continue
        units = max(tasks, key=_longest_unit)
        span = report.get("span_s")
        lines += [f"### {report['title']}", "",
                  f"{report.get('machine') or report.get('date', '') + ', ' + report['host']}; "
                  f"{report['tasks_count']} tasks ({report['claims']} claims, "
                  f"{report['attacks']} attacks), at most {report['workers']} at once; "
                  f"summed task time {report['task_wall_s']:.1f} s wall, "
                  f"{report['task_cpu_s']:.1f} s CPU ({report['cpu_recorded']} tasks with CPU "
                  "recorded); first start to last end "
                  + (f"{span:.1f} s" if isinstance(span, int | float) else "not recorded")
                  + f"; longest unit {_longest_unit(units):.1f} s (`{units['id']}`); "
                  f"commit(s) {', '.join(f'`{c}`' for c in report.get('commits', {}))}; "
                  f"stored in `benchmarks/results/{name}.json`.", ""]
        if "quick" in report["profile"]:
            lines += ["A quick-profile record: its times show the shape of the ledger, not "
                      "the full profile's durations the targets are about. Wall time above "
                      "CPU time means a loaded machine.", ""]
        rows = [{"task": f"`{t['id']}`", "wall s": t["wall_s"],
                 "share": f"{t['share']:.1%}", "cumulative": f"{t['cumulative_share']:.1%}",
                 "CPU s": t["cpu_s"], "cells": t.get("cells") or "",
                 "longest cell s": max(t["cell_wall_s"]) if t.get("cell_wall_s") else "",
                 "verdict": t.get("verdict")} for t in tasks[:TOP_TASKS]]
        rest = tasks[TOP_TASKS:]
        if rest:
            rows.append({"task": f"{len(rest)} more", "wall s": sum(t["wall_s"] for t in rest),
                         "share": f"{sum(t['share'] for t in rest):.1%}",
                         "CPU s": sum(t["cpu_s"] for t in rest)})
        lines += table(rows)
    return lines


def scale_sim_section(results: dict[str, dict]) -> list[str]:
    """The simulated makespan on W workers (:mod:`benchmarks.scale_sim`), powers of two."""
    lines = ["## Scale-out by simulation", "",
             "`python -m benchmarks scale_sim benchmarks/results/task_times_P.json` (and "
             "`--whole`: one task per claim, the ledger before cells) replays the recorded "
             "durations on W = 1 .. 256 workers under the runner's longest-first order and "
             "under a Dask-like first-free-worker order. Speed-up: the summed task time over "
             "the makespan; the bound is max(total / W, longest unit), which no schedule "
             "beats, so the longest unit caps the speed-up. A model of the schedule, not a "
             "measurement: start-up, compilation and storage are not modelled.", ""]
    for name in sorted(results, key=lambda n: _profile_order(n, SCALE_SIM)):
        result = results[name]
        source = result.get("source") or {}
        lines += [f"### {result['title']}", "",
                  f"{result['units']} units, total {result['total_s']:.1f} s, longest "
                  f"{result['longest_s']:.1f} s (`{result['longest_id']}`), overhead "
                  f"{result.get('overhead_s', 0):g} s per task; durations recorded "
                  f"{source.get('date', '')} on {source.get('host', '')}; stored in "
                  f"`benchmarks/results/{name}.json`.", ""]
        rows = [{"W": r["workers"], "longest-first s": r["longest-first_s"],
                 "speed-up": f"{r['longest-first_speedup']:.2f}", "dask s": r["dask_s"],
                 "dask speed-up": f"{r['dask_speedup']:.2f}", "bound s": r["lower_bound_s"],
                 "max speed-up": f"{r['max_speedup']:.2f}"}
                for r in result["curve"] if r["workers"] & (r["workers"] - 1) == 0]
        lines += table(rows)
    return lines


def render(results: dict) -> str:
    times = {k: v for k, v in results.items() if k.startswith(TASK_TIMES)}
    sims = {k: v for k, v in results.items() if k.startswith(SCALE_SIM)}
    results = {k: v for k, v in results.items() if k not in times and k not in sims}
    lines = [*targets_section(results)]
    if PEERS in results:
        lines += peers_latest(results[PEERS]) + peers_history(results[PEERS])
    if FIRST_WARM in results:
        lines += first_warm_history(results[FIRST_WARM], results.get(WALL))
    if times:
        lines += task_times_section(times)
    if sims:
        lines += scale_sim_section(sims)
    lines += other_benchmarks(results, {PEERS, FIRST_WARM, WALL})
    return "\n".join(lines)


def generate(srcdir: Path) -> Path:
    stored = importlib.import_module("benchmarks._results").load_all()
    path = Path(srcdir) / OUT
    path.parent.mkdir(parents=True, exist_ok=True)
    text = render(stored)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


def _on_init(app):
    generate(Path(app.srcdir))


def setup(app):
    app.connect("builder-inited", _on_init)
    return {"parallel_read_safe": True, "version": "1"}
