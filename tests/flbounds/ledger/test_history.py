"""The stored history a run schedules by, read from SQLite's columns, equals the one read by
parsing every row (:meth:`ResultStore.load`), legacy file or not."""

import json

import pytest

from flbounds.ledger import ResultStore, get
from flbounds.ledger.api.result import CheckResult
from flbounds.ledger.engine import history as history_module
from flbounds.ledger.engine.history import History, stored_history

FAST = "focus.matrices.pull_row_stochastic"


@pytest.fixture(scope="module")
def good_row():
    return get(FAST).check(seed=0).to_dict()


def _slow(store, profile):
    rows = store.load()
    return History({r.id: r.elapsed_s for r in rows if r.profile == profile},
                   {r.task_key for r in rows if r.verdict != "error"})


def _rows(good):
    """Two claims over two profiles, a later row of one claim, a failed task."""
    out = []
    for k, (cid, profile, elapsed, verdict) in enumerate([
            ("a.x", "quick", 1.0, "holds"), ("b.y", "quick", 2.5, "holds"),
            ("a.x", "full", 9.0, "holds"), ("a.x", "quick", 5.0, "holds"),
            ("c.z", "quick", 0.25, "error")]):
        out.append({**good, "id": cid, "profile": profile, "elapsed_s": elapsed,
                    "verdict": verdict, "task_key": f"key{k}"})
    return out


def test_columns_give_the_same_history_as_parsing_every_row(tmp_path, good_row):
    store = ResultStore(tmp_path)
    for row in _rows(good_row):
        store.append(CheckResult.from_dict(row))
    for profile in ("quick", "full", "none"):
        fast = history_module._from_columns(store, profile)
        assert fast == _slow(store, profile) == stored_history(store, profile)
    quick = stored_history(store, "quick")
    assert quick.durations == {"a.x": 5.0, "b.y": 2.5, "c.z": 0.25}   # the latest row wins
    assert quick.finished == {"key0", "key1", "key2", "key3"}        # the failed one is not


def test_a_legacy_file_not_yet_imported_is_read_too(tmp_path, good_row):
    rows = _rows(good_row)
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    store = ResultStore(tmp_path)
    assert history_module._from_columns(store, "quick") is None       # not imported yet
    assert stored_history(store, "quick") == _slow(store, "quick")
    assert stored_history(store, "quick").durations["a.x"] == 5.0
    store.connect(create=True)                                           # imports it
    assert history_module._from_columns(store, "quick") == _slow(store, "quick")


def test_no_store_or_an_empty_folder_has_no_history(tmp_path):
    assert stored_history(None, "quick") == History({}, set())
    assert stored_history(ResultStore(tmp_path / "missing"), "quick") == History({}, set())
