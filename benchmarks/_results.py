"""Benchmark results as data: ``benchmarks/results/<name>.json``, one file per benchmark.

A file holds what the benchmark measures and how to read it (``title``, ``command``,
``units`` per column, the ``targets`` it is judged against) and its ``runs``, oldest first.
A run is one record: ``date``, ``host`` (CPU, cores, memory, Python), ``commit`` (the tree
measured; null where it was not recorded), ``profile``, an optional ``label`` and ``caveat``
(what a reader must know to compare it with other runs), ``machine`` (rates measured in the
same run, e.g. the roofline's), and ``tables``: named lists of rows, each row a flat mapping
of column to value. The documentation's performance page is generated from these files.

``python -m benchmarks NAME --record`` (the benchmarks that take it) appends its run here.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = RESULTS.parent.parent


def host() -> dict:
    """The machine a run measured: CPU (model, family, model number, L1d), cores, memory,
    Python."""
    from benchmarks._common import _cpu_description

    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"cpu": _cpu_description(), "cores": os.cpu_count(), "memory_gib": round(mem),
            "python": platform.python_version()}


def commit(root: Path = ROOT) -> str | None:
    """The short commit of the tree measured, with ``+changes`` when files differ from it;
    None outside a git checkout."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=30)
    try:
        head = git("rev-parse", "--short", "HEAD")
        if head.returncode != 0:
            return None
        dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+changes" if dirty else "")


def run_record(tables: dict[str, list[dict]], *, profile: str | None = None,
               machine: dict | None = None, label: str | None = None,
               caveat: str | None = None) -> dict:
    """One run, stamped with today's date, this host and the commit measured."""
    run = {"date": datetime.date.today().isoformat(), "host": host(), "commit": commit(),
           "profile": profile}
    if label:
        run["label"] = label
    if caveat:
        run["caveat"] = caveat
    if machine:
        run["machine"] = machine
    run["tables"] = tables
    return run


def load(name: str, folder: Path | None = None) -> dict:
    return json.loads((Path(folder or RESULTS) / f"{name}.json").read_text(encoding="utf-8"))


def load_all(folder: Path | None = None) -> dict[str, dict]:
    """Every stored benchmark, by name."""
    return {path.stem: json.loads(path.read_text(encoding="utf-8"))
            for path in sorted(Path(folder or RESULTS).glob("*.json"))}


def append(name: str, run: dict, *, title: str, command: str, units: dict[str, str],
           targets: list[dict] | None = None, folder: Path | None = None) -> Path:
    """Add ``run`` to ``<folder>/<name>.json`` (created with the benchmark's description on
    its first run; the description is refreshed from the caller's on every run)."""
    path = Path(folder or RESULTS) / f"{name}.json"
    stored = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"runs": []}
    stored.update(benchmark=name, title=title, command=command, units=units,
                  targets=targets if targets is not None else stored.get("targets", []))
    stored["runs"] = [*stored["runs"], run]
    order = ("benchmark", "title", "command", "units", "targets", "runs")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps({key: stored[key] for key in order}) + "\n", encoding="utf-8")
    return path


def dumps(value, indent: int = 0) -> str:
    """JSON with one table row per line (diffs of a new run stay readable)."""
    pad = " " * indent
    if isinstance(value, dict) and value and not _is_row(value):
        items = [f'{pad} {json.dumps(key)}: {dumps(item, indent + 1).lstrip()}'
                 for key, item in value.items()]
        return pad + "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and value and not all(_is_scalar(v) for v in value):
        items = [dumps(item, indent + 1) for item in value]
        return pad + "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return pad + json.dumps(value, default=float)


def _is_scalar(value) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _is_row(value: dict) -> bool:
    return all(_is_scalar(v) or (isinstance(v, list) and all(map(_is_scalar, v)))
               for v in value.values())
