"""The documentation site, built once per test run into a temporary folder.

The build runs in a child process (the gallery executes its examples there, one of which
declares a toy paper in that process's registry) on a copy of ``docs/`` without its generated
pages, so a stale page left by an earlier build in the working tree cannot hide a broken one.
Under pytest-xdist the workers share one build: the first to take the lock builds, the others
read the result it recorded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: the import names of the ``docs`` extra of pyproject.toml
DOCS_PACKAGES = ("sphinx", "pydata_sphinx_theme", "numpydoc", "sphinx_gallery", "myst_parser")
#: what a build writes into its source folder (never copied: the copy must build them anew)
GENERATED = ("_build", "auto_examples", "papers", "api", "generated", "sg_execution_times.rst",
             "__pycache__")
BUILD_TIMEOUT_S = 1200


@dataclass(frozen=True)
class Site:
    """A finished build: its exit code, its log and its HTML folder."""

    returncode: int
    log: str
    html: Path
    seconds: float


def missing_docs_packages() -> list[str]:
    return [name for name in DOCS_PACKAGES if importlib.util.find_spec(name) is None]


def _shared_folder(tmp_path_factory) -> Path:
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _build(folder: Path) -> Site:
    source, html = folder / "src", folder / "html"
    shutil.rmtree(folder / "src", ignore_errors=True)
    shutil.copytree(DOCS, source, ignore=shutil.ignore_patterns(*GENERATED))
    env = dict(os.environ, MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, sys.path)]))
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(folder / "doctrees"), str(source), str(html)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    return Site(done.returncode, done.stdout + done.stderr, html, time.perf_counter() - start)


@contextlib.contextmanager
def _exclusive(path: Path):
    """Hold an exclusive lock on ``path`` (POSIX; elsewhere no lock: one worker builds)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Site:
    """The site built with warnings as errors (skips, naming them, without the docs packages)."""
    if missing := missing_docs_packages():
        pytest.skip(f"the docs packages are not installed ({', '.join(missing)}): "
                    "pip install -e '.[docs]'")
    folder = _shared_folder(tmp_path_factory) / "docs-site"
    folder.mkdir(exist_ok=True)
    record = folder / "build.json"
    with _exclusive(folder / "build.lock"):
        if not record.is_file():
            site = _build(folder)
            record.write_text(json.dumps({"returncode": site.returncode, "log": site.log,
                                          "seconds": site.seconds}), encoding="utf-8")
    stored = json.loads(record.read_text(encoding="utf-8"))
    return Site(stored["returncode"], stored["log"], folder / "html", stored["seconds"])
