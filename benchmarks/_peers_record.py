"""The peers benchmark's run as data: the record ``--record`` appends to
``benchmarks/results/peers.json`` (see :mod:`benchmarks._results`), with the units of its
columns and the issue's targets."""

from __future__ import annotations

import re

from benchmarks import _results
from benchmarks._peers_report import (
    TARGET_N,
    TARGET_RATIO,
    TARGET_ROOF,
    detail_rows,
    diagnose,
    missed,
)

NAME = "peers"
TITLE = ("flbounds against its strongest peers (JAX, batched NumPy, the per-client loop), "
         "with the roofline measured in the same run")
COMMAND = "python -m benchmarks peers --record"
UNITS = {
    "N": "clients", "p": "participation probability", "threads": "threads",
    "flbounds_rounds_s": "rounds/s (median, wall)", "peer_rounds_s": "rounds/s (median, wall)",
    "best_peer": "the peer with the highest median rate",
    "ratio_min": "flbounds / best peer (min over the repeats, wall)",
    "ratio_median": "flbounds / best peer (median over the repeats, wall)",
    "ratio_cpu_median": "flbounds / best peer (median, CPU time)",
    "wall_per_cpu": "wall / CPU time [flbounds, peer]",
    "ratio_2t": "flbounds / best peer on 2 threads [min, max]",
    "peer_2t": "the best peer on 2 threads", "gflops_1t": "GFLOP/s (useful flop)",
    "roofline_1t": "fraction of min(dgemm, intensity x read), wall, 1 thread",
    "roofline_cpu_1t": "fraction of the roofline, CPU time, 1 thread",
    "roofline_2t": "fraction of the 2-thread roofline",
    "peak_mib_flbounds": "MiB (tracemalloc peak of one call)",
    "peak_mib_peer": "MiB (null: XLA, whose allocations are not traced)",
    "peak_MiB": "MiB (null: XLA, untraced)", "rounds_s_min": "rounds/s",
    "rounds_s_median": "rounds/s", "cpu_rounds_s_median": "rounds/s (CPU time)",
    "spread": "median / min - 1 of the repeats' rates", "max_diff": "max |x_peer - x_flbounds|",
    "tolerance": "the derived rounding tolerance of max_diff",
    "checked_round": "the round compared", "dgemm_1t": "GFLOP/s", "dgemm_2t": "GFLOP/s",
    "read_1t": "GB/s", "read_2t": "GB/s", "load1": "1-minute load average",
    "free_speedup": "2-thread speed-up of a compute loop (two free cores: about 2)",
}
TARGETS = [
    {"what": f"flbounds / best peer, 1 thread, N = {TARGET_N}, p = {p:g}",
     "table": "summary", "column": "ratio_min", "where": {"N": TARGET_N, "p": p},
     "at_least": ratio} for p, ratio in TARGET_RATIO.items()
] + [
    {"what": f"fraction of the roofline, 1 thread (CPU time), N = {TARGET_N}", "table": "summary",
     "column": "roofline_cpu_1t", "where": {"N": TARGET_N}, "at_least": TARGET_ROOF},
    {"what": f"fraction of the roofline, 2 threads, N = {TARGET_N}", "table": "summary",
     "column": "roofline_2t", "where": {"N": TARGET_N}, "at_least": TARGET_ROOF},
]
_RATIO_2T = re.compile(r"([\d.]+)-([\d.]+) vs (\S+)")


def as_data(row: dict) -> dict:
    """A report row with its text cells split into numbers: ``ratio_2t`` "a-b vs peer" into
    [a, b] and ``peer_2t`` (a cell not timed: null, with its reason in ``note_2t``),
    ``wall_per_cpu`` "a / b" into [a, b], "12% (noisy)" into 0.12 and ``noisy``, "d <= t"
    into ``max_diff`` d and ``tolerance`` t, an untraced peak into null."""
    row = dict(row)
    if isinstance(row.get("ratio_2t"), str):
        text, found = row["ratio_2t"], _RATIO_2T.match(row["ratio_2t"])
        row["ratio_2t"] = [float(found[1]), float(found[2])] if found else None
        row["peer_2t"] = found[3] if found else None
        if not found:
            row["note_2t"] = text
    if isinstance(row.get("wall_per_cpu"), str) and " / " in row["wall_per_cpu"]:
        row["wall_per_cpu"] = [float(v) for v in row["wall_per_cpu"].split(" / ")]
    for key in ("peak_mib_peer", "peak_MiB", "roofline_2t"):
        if isinstance(row.get(key), str):
            try:
                row[key] = float(row[key])
            except ValueError:
                row[key] = None
    if isinstance(row.get("spread"), str):
        found = re.match(r"(-?\d+)%( \(noisy\))?", row["spread"])
        if found:
            row["spread"], row["noisy"] = int(found[1]) / 100, bool(found[2])
    if isinstance(row.get("max_diff"), str) and "<=" in row["max_diff"]:
        diff, tol = row["max_diff"].split("<=")
        row["max_diff"], row["tolerance"] = float(diff), float(tol)
    return row


def run_record(data: dict) -> dict:
    """The record of one run from ``_peers_report.render``'s data."""
    children, machine, summary = data["children"], data["machine"], data["summary"]
    diagnosis = [diagnose(e, children[0]["profiles"], machine, summary).removeprefix("- ")
                 for e in missed(summary)] if children and children[0]["threads"] == 1 else []
    after = machine.get("after", {})
    stored_machine = {k: v for k, v in machine.items() if k != "after"}
    stored_machine.update(free_speedup_end=after.get("free_speedup"),
                          load1_end=after.get("load1"))
    for child in children:
        stored_machine[f"max_rss_mib_{child['threads']}t"] = round(child["max_rss_mib"])
    run = _results.run_record(
        {"summary": [as_data(e) for e in summary],
         "timings": [as_data(r) for r in detail_rows(children)]},
        profile=data["profile"], machine=stored_machine)
    if diagnosis:
        run["diagnosis"] = diagnosis
    return run


def append(data: dict, folder=None):
    return _results.append(NAME, run_record(data), title=TITLE, command=COMMAND, units=UNITS,
                           targets=TARGETS, folder=folder)
