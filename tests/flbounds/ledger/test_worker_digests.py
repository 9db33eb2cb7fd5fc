"""Pool workers take the parent's code digests instead of walking the import closures."""

import ast
from pathlib import Path

from flbounds.ledger.api import taskkey
from flbounds.ledger.api.registry import get, load_all
from flbounds.ledger.engine.workers import WorkerPool

CLAIM = "kvib.lemma2_2.special_cases"


def test_adopted_digest_is_used_without_walking(monkeypatch):
    def no_walk(name):
        raise AssertionError("walked the import closure")

    with taskkey.sources_fixed():
        taskkey.adopt_digests({"some.module": "f" * 16})
        monkeypatch.setattr(taskkey, "import_closure", no_walk)
        assert taskkey.code_digest("some.module") == "f" * 16
        assert taskkey.fixed_digests() == {"some.module": "f" * 16}
    taskkey.adopt_digests({"other": "0" * 16})      # outside a run: ignored
    assert taskkey.fixed_digests() == {}


def test_a_worker_keys_its_row_with_the_shared_digest():
    """A planted digest reaches the worker: the row's key is the one it implies (a worker
    that recomputed the digest would report the real key)."""
    load_all()
    claim = get(CLAIM)
    planted = "0123456789abcdef"
    with taskkey.sources_fixed():
        taskkey.adopt_digests({claim.module: planted})
        expected = taskkey.task_key(claim, "quick", 0)
    real = taskkey.task_key(claim, "quick", 0)
    assert expected != real
    pool = WorkerPool(1)
    try:
        pool.start()
        pool.share({claim.module: planted})
        assert pool.submit((CLAIM, "quick", 0)) == []
        replies = []
        while not replies:
            replies = pool.wait(None)
    finally:
        pool.close()
    (_, reply), = replies
    assert reply["row"]["task_key"] == expected


def _walked(tree):
    return sorted(ast.dump(n) for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom))


def test_import_statements_finds_every_import():
    source = (
        "import a\n"
        "from .b import c\n"
        "def f():\n    import d\n    if x:\n        from e import g\n"
        "class K:\n    try:\n        import h\n    except E:\n        import i\n"
        "    finally:\n        import j\n"
        "match v:\n    case 1:\n        import k\n"
        "while y:\n    pass\nelse:\n    import m\n"
        "with z:\n    import n\n"
        "try: import o\nexcept ImportError: o = None\n"
        "x = 1; import p  # a comment (with a bracket\n"
        "from q import (r,  # why r (\n    s)\n"
        "from t import \\\n    u\n")
    walked = _walked(ast.parse(source))
    found = sorted(ast.dump(n) for n in taskkey._import_statements(source.encode()))
    assert found == walked
    assert len(walked) == 14


def test_import_statements_never_miss_one_in_the_tree():
    """On every source file of the project, the statement scan finds each import a full parse
    finds (it may find more: text in strings that reads as an import)."""
    root = Path(__file__).resolve().parents[3]
    files = [p for folder in ("flbounds", "verify", "tests", "figures", "benchmarks")
             for p in (root / folder).rglob("*.py")]
    assert len(files) > 300
    for path in files:
        source = path.read_bytes()
        found = {ast.dump(n) for n in taskkey._import_statements(source)}
        missing = set(_walked(ast.parse(source))) - found
        assert not missing, (path, sorted(missing)[:3])
