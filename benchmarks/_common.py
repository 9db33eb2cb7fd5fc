"""Shared plumbing of the benchmarks: arguments, timing, machine line, Markdown and JSON."""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from flbounds.ledger.engine.outputs import OutputError, output_folder

DEFAULT_OUT = Path("flbounds-results") / "benchmarks"
OUT_HELP = f"output folder (default: {DEFAULT_OUT})"
PROFILE_HELP = "quick: CI-sized, minutes; full: paper-sized"


def out_folder(text: str) -> Path:
    """argparse type of ``--out``: a folder that exists or can be made, and is writable;
    checked when the arguments are parsed, before any work (nothing is created)."""
    try:
        return output_folder(text, "--out")
    except OutputError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--out: ")) from None


def prog() -> str | None:
    """The usage line's command: ``python -m benchmarks NAME`` under the runner (which sets
    ``sys.argv[0]`` so), ``python -m benchmarks.NAME`` for a module run directly (whose
    ``argv[0]`` is its file path), else argparse's default."""
    first = sys.argv[0]
    if first.startswith("python -m benchmarks"):
        return first
    path = Path(first)
    if path.suffix == ".py" and path.parent.name == "benchmarks":
        return f"python -m benchmarks.{path.stem}"
    return None


def parse_args(argv, description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=prog(), description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=out_folder, default=str(DEFAULT_OUT), help=OUT_HELP)
    parser.add_argument("--profile", choices=("quick", "full"), default="quick",
                        help=PROFILE_HELP)
    return parser.parse_args(argv)


def rounding_tolerance(rounds: int, local_steps: int, width: int, scale: float) -> float:
    """How far two implementations of the same rounds may drift apart by rounding alone: each
    gradient entry sums at most ``width`` products whose rounding (eps each) may differ; with a
    step at most 1/L on a convex problem a local GD step is non-expansive, so the differences
    add over ``rounds * local_steps`` steps, relative to the iterates' size ``scale``."""
    return rounds * local_steps * width * float(np.finfo(float).eps) * scale


def check_approaches(problem, trace, what: str) -> float:
    """``||x_R - x*|| / ||x_0 - x*||`` of a run's trace (rounds + 1, d); AssertionError naming
    ``what`` unless the trace is finite and the ratio at most 1: the run does not move away
    from x* (FedAvg heads for a biased point near it; the check catches unstable steps, not
    slow convergence). A diverging run is not worth timing, and a comparison with another
    implementation within a tolerance relative to the iterates' size would pass it vacuously."""
    trace = np.asarray(trace, dtype=float)
    x_star = np.asarray(problem.x_star, dtype=float)
    start, end = (float(np.linalg.norm(trace[i] - x_star)) for i in (0, -1))
    ratio = end / start if start > 0 else (0.0 if end == 0 else np.inf)
    if not (np.all(np.isfinite(trace)) and ratio <= 1.0):
        raise AssertionError(f"{what} moves away from x* (distance ratio {ratio:.3g} after "
                             f"{len(trace) - 1} rounds): its step is unstable")
    return ratio


def best_time(fn: Callable[[], object], *, repeat: int = 3, min_time: float = 0.2) -> float:
    """Best wall time of one call of ``fn`` over ``repeat`` batches of at least ``min_time``."""
    best = float("inf")
    for _ in range(repeat):
        calls, start = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time:
                break
        best = min(best, elapsed / calls)
    return best


def _status_kib(field):
    """A ``/proc/self/status`` memory field in KiB (VmHWM: peak, VmRSS: current)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def peak_rss_mib(fn) -> float | None:
    """Peak resident memory added by one call of ``fn`` (None where Linux's reset of the
    high-water mark is unavailable)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return None
    before = _status_kib("VmRSS")
    fn()
    return max(0, _status_kib("VmHWM") - before) / 1024


def _cpu_description() -> str:
    """The CPU's model name, family and model numbers and its L1 data cache: cloud CPUs
    often report a bare "AMD EPYC", and the same VM can move between hosts of different
    generations (2026-11-28: a run on a family-26 host gave ratios against the peers unlike
    the day's earlier runs, which had not recorded the family)."""
    fields = {}
    try:
        with open("/proc/cpuinfo", errors="replace") as fh:
            for line in fh:
                if not line.strip():
                    break                       # the first processor's block is enough
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return "unknown CPU"
    cpu = fields.get("model name", "unknown CPU")
    if "cpu family" in fields and "model" in fields:
        cpu += f" (family {fields['cpu family']} model {fields['model']}"
        l1d = _l1_data_cache()
        cpu += f", L1d {l1d})" if l1d else ")"
    return cpu


def _l1_data_cache() -> str | None:
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            if (index / "level").read_text().strip() == "1" and \
                    (index / "type").read_text().strip() == "Data":
                return (index / "size").read_text().strip()
        except OSError:
            continue
    return None


def machine_line() -> str:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{datetime.date.today().isoformat()}, {_cpu_description()}, {os.cpu_count()} "
            f"cores, {mem:.0f} GiB, Python {platform.python_version()}")


def markdown_table(rows: list[dict], columns: list[str]) -> str:
    def cell(v):
        if v is None:
            return "-"
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def write(out_dir: Path, name: str, title: str, rows: list[dict], columns: list[str],
          notes: str = "", *, table: str = "results", units: dict[str, str] | None = None,
          profile: str | None = None, record: bool = False, command: str | None = None,
          targets: list[dict] | None = None) -> list[Path]:
    """Write ``<name>.md`` (title, machine line, table, notes) and ``<name>.json`` (the run's
    record: date, host, commit, units and the rows as ``tables[table]``, see
    :mod:`benchmarks._results`); with ``record``, also append the run to
    ``benchmarks/results/<name>.json``."""
    from benchmarks import _results

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    md = f"## {title}\n\n{machine_line()}\n\n{markdown_table(rows, columns)}"
    if notes:
        md += f"\n{notes.strip()}\n"
    md_path, json_path = out_dir / f"{name}.md", out_dir / f"{name}.json"
    md_path.write_text(md, encoding="utf-8")
    run = _results.run_record({table: rows}, profile=profile)
    json_path.write_text(_results.dumps({"benchmark": name, "title": title,
                                         "units": units or {}, **run}) + "\n",
                         encoding="utf-8")
    paths = [md_path, json_path]
    if record:
        paths.append(_results.append(name, run, title=title, units=units or {},
                                     command=command or f"python -m benchmarks {name}",
                                     targets=targets))
    return paths
