"""Per-run costs of the ledger paid once, not per task: code digests, worker start-up."""

from flbounds.ledger import taskkey
from flbounds.ledger.workers import WorkerPool


def test_code_digest_is_computed_once_per_module_within_a_run(monkeypatch):
    calls = []
    real = taskkey._file_digest
    monkeypatch.setattr(taskkey, "_file_digest", lambda p: calls.append(p) or real(p))
    with taskkey.sources_fixed():
        first = taskkey.code_digest("flbounds.ledger.taskkey")
        walked = len(calls)
        assert walked > 0
        with taskkey.sources_fixed():      # nested: the same memo
            assert taskkey.code_digest("flbounds.ledger.taskkey") == first
        assert len(calls) == walked
    assert taskkey._fixed is None
    assert taskkey.code_digest("flbounds.ledger.taskkey") == first
    assert len(calls) == 2 * walked          # outside a run: the tree is read again


def test_a_pool_starts_its_workers_up_front_but_no_more_than_needed(monkeypatch):
    spawned = []
    monkeypatch.setattr(WorkerPool, "_spawn", lambda self: spawned.append(1) or object())
    pool = WorkerPool(3)
    pool.start(2)                            # two tasks: two workers
    assert len(spawned) == 2 and pool.capacity() == 3
    pool.start()
    assert len(spawned) == 3
    pool.start()                             # already full
    assert len(spawned) == 3
