"""Apply one planted bug to a scratch copy of the tree and run the affected papers' claims.

The copy (``flbounds/``, ``verify/``, ``paper_checks/``, ``figures/``, ``pyproject.toml``) is
the working directory of ``python -m flbounds check``, so its packages come first on
``sys.path`` and shadow the installed ones (checked by :func:`shadowing_paths`). Every
mutant gets a fresh copy in the same place and a fresh results directory. The numba cache
lives next to the copy, in one directory per scratch area: the kernel cache directory is
keyed by a digest of every kernel source, so an untouched kernel set reuses its compiled
code while a mutated kernel (a new digest) compiles afresh and leaves no code behind for
the next mutant.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from .catalogue import MUTANTS, Mutant

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("flbounds", "verify", "paper_checks", "figures", "pyproject.toml")
PAPERS = ("fedals", "focus", "kvib", "safari", "subtrunc")
TAIL_CHARS = 2000
CHEAP_S = 1.0  # claims faster than this (unmutated, quick) run in the first stage
TIMINGS = Path(__file__).with_name("timings.json")


class Outcome(NamedTuple):
    """One mutant against one paper's quick claims."""

    mutant: str
    paper: str
    status: str  # "killed", "crashed", "survived"
    killers: tuple[str, ...]  # claims whose verdict left its expectation (not errors)
    crashes: tuple[str, ...]  # claims that errored
    n_claims: int
    returncode: int
    stderr_tail: str
    reasons: tuple[str, ...] = ()  # "claim: reason" of the claims that errored


def select(paper: str | None = None, only: str | None = None,
           mutants: tuple[Mutant, ...] = MUTANTS) -> list[Mutant]:
    """Mutants affecting ``paper`` whose id matches ``only`` (glob or dotted prefix)."""
    if paper is not None and paper not in PAPERS:
        raise ValueError(f"paper must be one of {PAPERS}, got {paper!r}")
    chosen = [m for m in mutants if paper is None or paper in m.papers]
    if only is not None:
        pats = [p for p in only.split(",") if p]
        chosen = [m for m in chosen if any(fnmatch.fnmatchcase(m.id, p) or m.id == p
                                           or m.id.startswith(p + ".") for p in pats)]
    if not chosen:
        raise ValueError(f"no mutant matches paper={paper!r}, only={only!r}")
    return chosen


def copy_tree(dest: Path, root: Path = ROOT) -> None:
    """Fresh copy of the sources into ``dest`` (mtimes kept, bytecode caches left out)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCES:
        src = root / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        else:
            shutil.copy2(src, dest / name)


def apply(mutant: Mutant, tree: Path) -> None:
    """Replace the mutant's snippet in ``tree``; it must occur exactly once."""
    path = tree / mutant.path
    text = path.read_text()
    count = text.count(mutant.old)
    if count != 1:
        raise ValueError(f"{mutant.id}: snippet occurs {count} times in {mutant.path}")
    path.write_text(text.replace(mutant.old, mutant.new))


def child_env(scratch: Path) -> dict[str, str]:
    """Environment of the child runs: a per-scratch numba cache, no inherited import path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    env["NUMBA_CACHE_DIR"] = str(scratch / "numba-cache")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def shadowing_paths(tree: Path, env: dict[str, str]) -> dict[str, str]:
    """Where the child imports ``flbounds``, ``verify`` and ``paper_checks`` from."""
    code = ("import json, flbounds, verify, paper_checks; print(json.dumps({m.__name__: "
            "m.__file__ for m in (flbounds, verify, paper_checks)}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def check_shadowing(tree: Path, env: dict[str, str]) -> None:
    """Raise unless every package the claims run comes from ``tree``."""
    for name, file in shadowing_paths(tree, env).items():
        if not Path(file).resolve().is_relative_to(tree.resolve()):
            raise RuntimeError(f"{name} imported from {file}, not from the copy {tree}")


def run_claims(tree: Path, env: dict[str, str], patterns: list[str], workers: int,
               out_dir: Path, timeout: float) -> tuple[list[dict], int, str]:
    """``python -m flbounds check PATTERNS --profile quick`` in ``tree``; (rows, rc, stderr)."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    json_path = out_dir / "out.json"
    cmd = [sys.executable, "-m", "flbounds", "check", *patterns, "--profile", "quick",
           "--workers", str(workers), "--json", str(json_path), "--results",
           str(out_dir / "results"), "--quiet"]
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True,
                              timeout=timeout)
        rc, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, err = -1, f"timeout after {timeout} s\n{exc.stderr or ''}"
    rows = json.loads(json_path.read_text()) if json_path.exists() else []
    return rows, rc, err[-TAIL_CHARS:] if isinstance(err, str) else ""


def classify(mutant_id: str, paper: str, rows: list[dict], rc: int, err: str) -> Outcome:
    """Killed: a claim's verdict left its expectation; crashed: only errors (or no output)."""
    off = [r for r in rows if r["verdict"] != r["expected"]]
    killers = tuple(r["id"] for r in off if r["verdict"] != "error")
    crashes = tuple(r["id"] for r in off if r["verdict"] == "error")
    if killers:
        status = "killed"
    elif crashes or not rows or rc not in (0, 1):
        status = "crashed"
    else:
        status = "survived"
    reasons = tuple(f"{r['id']}: {(r.get('reason') or '')[:300]}" for r in off
                    if r["verdict"] == "error")
    return Outcome(mutant_id, paper, status, killers, crashes, len(rows), rc,
                   "" if status == "survived" else err, reasons)


def paper_claims(tree: Path, env: dict[str, str], paper: str) -> list[str]:
    """Ids of ``paper``'s claims as registered in ``tree``."""
    out = subprocess.run([sys.executable, "-m", "flbounds", "list", paper], cwd=tree, env=env,
                         check=True, capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines()
            if line.startswith("  ") and line.split()[0].startswith(paper + ".")]


def tiers(ids: list[str], timings: dict[str, float]) -> list[list[str]]:
    """The claims in two runs: those known to take under ``CHEAP_S`` seconds, then the rest
    (slow or new claims). A mutant killed by the first run skips the second."""
    cheap = [c for c in ids if timings.get(c, CHEAP_S) < CHEAP_S]
    rest = [c for c in ids if c not in cheap]
    return [t for t in (cheap, rest) if t]


def run_mutant(mutant: Mutant, paper: str, scratch: Path, *, workers: int = 1,
               claims: list[str] | None = None, timeout: float = 3600.0,
               root: Path = ROOT, staged: bool = True) -> Outcome:
    """Copy, patch, run ``paper``'s quick claims (or ``claims``), classify. With ``staged``
    the cheap claims run first and the rest only if none of those killed the mutant."""
    tree = scratch / "tree"
    copy_tree(tree, root)
    apply(mutant, tree)
    env = child_env(scratch)
    check_shadowing(tree, env)
    if claims:
        stages = [claims]
    elif staged:
        stages = tiers(paper_claims(tree, env, paper), load_timings())
    else:
        stages = [[paper]]
    rows, rc, err = [], 0, ""
    for stage in stages:
        got, rc_stage, err_stage = run_claims(tree, env, stage, workers, scratch / "run",
                                              timeout)
        rows += got
        rc = rc if rc not in (0, 1) else max(rc, rc_stage) if rc_stage >= 0 else rc_stage
        err += err_stage
        outcome = classify(mutant.id, paper, rows, rc, err[-TAIL_CHARS:])
        if outcome.status == "killed":
            break
    return outcome


def load_timings() -> dict[str, float]:
    """Quick-profile seconds per claim from an unmutated run (``timings.json``)."""
    return json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
