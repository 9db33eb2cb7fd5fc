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


def test_check_starts_its_pool_before_loading_claims_and_uses_that_one(monkeypatch, tmp_path):
    """``flbounds check --workers 2``: the pool's workers start before the claims are
    loaded (they import them at the same time), the run uses that pool, no second one."""
    import flbounds.cli.check as check
    from flbounds.cli import main
    from flbounds.ledger import registry

    events = []
    real_spawn, real_select = WorkerPool._spawn, check.select_claims
    monkeypatch.setattr(WorkerPool, "_spawn",
                        lambda self: events.append("spawn") or real_spawn(self))
    monkeypatch.setattr(check, "select_claims",
                        lambda patterns: events.append("select") or real_select(patterns))
    registry.load_all()
    code = main(["check", "focus.matrices.average_row_stochastic", "--workers", "2",
                 "--results", str(tmp_path / "r"), "--quiet"])
    assert code == 0
    assert events == ["spawn", "spawn", "select"]


def test_a_usage_error_after_the_pool_started_stops_its_workers(monkeypatch, tmp_path, capsys):
    import flbounds.cli.check as check
    from flbounds.cli import main

    pools = []
    real = check.start_pool
    monkeypatch.setattr(check, "start_pool", lambda *a: pools.append(real(*a)) or pools[-1])
    assert main(["check", "no.such.claim", "--workers", "2",
                 "--results", str(tmp_path / "r")]) == 2
    assert "no.such.claim" in capsys.readouterr().err
    (pool,) = pools
    assert pool.busy() == 0 and pool.capacity() == 2 and not pool._idle
    assert not (tmp_path / "r").exists()          # nothing written
