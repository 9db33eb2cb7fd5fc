"""Dask: a worker killed in the middle of a task has the task rerun, and the run completes
with the same rows as a run in this process."""

import json
import os
import signal
import threading
import time

import pytest

from flbounds.ledger.engine.runner import execute, run_tasks

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

# about ten seconds each on the quick profile: long enough to be killed in the middle
TASKS = [("fedals.thm41.bound", "quick", 0), ("fedals.thm41.bound", "quick", 1)]
TIMINGS = {"elapsed_s", "cpu_s", "started", "finished"}


def _comparable(row: dict) -> str:
    return json.dumps({k: v for k, v in row.items() if k not in TIMINGS}, sort_keys=True)


def _busy_worker(client, limit: float = 600) -> str:
    """Address of a worker processing one of our tasks (polled, generous deadline)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        for address, keys in client.processing().items():
            if any(str(k).startswith("fedals.thm41.bound") for k in keys):
                return address
        time.sleep(0.05)
    raise AssertionError("no worker started a task")


def test_a_worker_killed_mid_task_is_retried_and_the_rows_are_identical():
    expected = sorted(_comparable(execute(*task)) for task in TASKS)
    rows, failure = [], []
    # start-up and connection limits far above dask's defaults (30 s), so a loaded machine
    # slows the test down instead of failing it
    slow_machine = {"distributed.comm.timeouts.connect": "600s",
                    "distributed.comm.timeouts.tcp": "600s",
                    "distributed.deploy.lost-worker-timeout": "600s"}
    with dask.config.set(slow_machine), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None, timeout="600s") as cluster, \
            distributed.Client(cluster, timeout="600s") as client:
        def run():
            try:
                run_tasks(TASKS, scheduler=client, on_result=rows.append)
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                failure.append(exc)

        runner = threading.Thread(target=run)
        runner.start()
        victim = _busy_worker(client)
        pid = client.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)
        runner.join(timeout=3600)  # only a hung run reaches this; a slow one does not
        assert not runner.is_alive() and not failure, failure
    assert sorted(_comparable(r) for r in rows) == expected
    assert all(r["verdict"] != "error" for r in rows)
