"""The task key covers every in-tree module a claim imports: editing a helper in a paper's
folder changes the keys of exactly the claims that import it, and ``--resume`` recomputes
exactly those. Run on a copy of the source tree."""

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
HELPER = "verify/kvib/instances.py"   # the K-Vib checks draw their instances here
KEYS = """
import json, flbounds
from flbounds.ledger import load_all
from flbounds.ledger.api.taskkey import task_key
assert flbounds.__file__.startswith({root!r}), flbounds.__file__
print(json.dumps({{c.id: [c.module, task_key(c, "quick", 0)] for c in load_all().values()}}))
"""
IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[\w \t,]+)",
                    re.M)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    copy = tmp_path_factory.mktemp("tree")
    ignore = shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc")
    for name in ("flbounds", "verify", "paper_checks"):
        shutil.copytree(ROOT / name, copy / name, ignore=ignore)
    return copy


def _run(tree: Path, *args, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(tree))
    return subprocess.run([sys.executable, *args], cwd=tree, env=env, capture_output=True,
                          text=True, timeout=900, **kw)


def _keys(tree: Path) -> dict:
    proc = _run(tree, "-c", KEYS.format(root=str(tree)))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _importers(tree: Path, helper: str) -> set[str]:
    """Modules of ``verify`` that reach ``helper`` through ``from ... import`` lines: a
    regular-expression reading of the sources, independent of the code under test."""
    target = helper.removesuffix(".py").replace("/", ".")
    graph = {}
    for path in (tree / "verify").rglob("*.py"):
        name = ".".join(path.relative_to(tree).with_suffix("").parts)
        package = name.rpartition(".")[0]
        found = set()
        for dots, module, names in IMPORT.findall(path.read_text()):
            base = module if not dots else \
                ".".join(package.split(".")[:len(package.split(".")) - len(dots) + 1]
                         + ([module] if module else []))
            found.add(base)
            found.update(f"{base}.{n.split()[0]}" for n in names.strip("()").split(",")
                         if n.split())
        graph[name] = found
    reach, grew = {target}, True
    while grew:
        new = {m for m, deps in graph.items() if deps & reach} - reach
        reach |= new
        grew = bool(new)
    return reach - {target}


def test_editing_a_helper_changes_exactly_its_importers_keys(tree):
    before = _keys(tree)
    helper = tree / HELPER
    original = helper.read_text()
    try:
        helper.write_text(original + "\nEDITED_FOR_THE_TEST = 1\n")
        after = _keys(tree)
    finally:
        helper.write_text(original)
    changed = {cid for cid in before if before[cid][1] != after[cid][1]}
    expected = {cid for cid, (module, _) in before.items() if module in _importers(tree, HELPER)}
    assert expected and len(expected) < len(before)
    assert changed == expected
    assert _keys(tree) == before            # restoring the bytes restores the keys


def test_resume_recomputes_exactly_the_claims_that_import_the_edited_helper(tree, tmp_path):
    results = tmp_path / "results"
    cmd = ["-m", "flbounds", "check", "kvib.lemma2_2", "focus.matrices", "--results",
           str(results), "--timeout", "0", "--quiet"]
    assert _run(tree, *cmd).returncode == 0
    helper = tree / HELPER
    original = helper.read_text()
    try:
        helper.write_text(original + "\nEDITED_FOR_THE_TEST = 1\n")
        proc = _run(tree, *cmd, "--resume")
    finally:
        helper.write_text(original)
    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(results / "results.sqlite") as conn:
        counts = dict(conn.execute("SELECT claim_id, count(*) FROM results GROUP BY claim_id"))
    recomputed = {cid for cid, n in counts.items() if n == 2}
    keys = _keys(tree)
    importers = _importers(tree, HELPER)
    expected = {cid for cid in counts if keys[cid][0] in importers}
    assert recomputed == expected
    assert expected and expected < set(counts)      # the edit reaches some claims, not all
