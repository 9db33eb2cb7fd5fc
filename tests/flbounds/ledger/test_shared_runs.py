"""Runs shared by the tasks of a check: computed once per key, read back as JSON reads it."""

import os

import numpy as np
import pytest

from flbounds.ledger.engine.shared_runs import (
    SHARED_RUNS_ENV,
    SHARED_RUNS_FILE,
    share_runs,
    stored,
)


def _counting(value):
    calls = []

    def compute():
        calls.append(1)
        return value

    return compute, calls


def test_unset_computes_every_time_and_returns_json_values(monkeypatch):
    monkeypatch.delenv(SHARED_RUNS_ENV, raising=False)
    compute, calls = _counting(dict(x=np.array([0.1, 1 / 3]), n=np.int64(3), y=0.7))
    assert stored("k", compute) == dict(x=[0.1, 1 / 3], n=3, y=0.7)
    stored("k", compute)
    assert len(calls) == 2


def test_a_key_is_computed_once_and_read_back_bit_for_bit(tmp_path, monkeypatch):
    monkeypatch.delenv(SHARED_RUNS_ENV, raising=False)
    value = np.random.default_rng(0).normal(size=50)
    with share_runs(tmp_path):
        assert os.environ[SHARED_RUNS_ENV] == str(tmp_path / SHARED_RUNS_FILE)
        compute, calls = _counting(value)
        first = stored("run-a", compute)
        again = stored("run-a", compute)
        other = stored("run-b", _counting([1.5])[0])
    assert SHARED_RUNS_ENV not in os.environ
    assert len(calls) == 1 and first == again == value.tolist() and other == [1.5]
    assert np.array_equal(np.array(again), value)


def test_an_unusable_file_only_loses_the_sharing(tmp_path, monkeypatch):
    monkeypatch.setenv(SHARED_RUNS_ENV, str(tmp_path / "missing" / "runs.sqlite"))
    compute, calls = _counting([2.0])
    assert stored("k", compute) == [2.0] and stored("k", compute) == [2.0]
    assert len(calls) == 2


def test_a_set_value_is_left_alone_and_a_bad_key_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(SHARED_RUNS_ENV, "")
    with share_runs(tmp_path):
        assert os.environ[SHARED_RUNS_ENV] == ""
    assert os.environ[SHARED_RUNS_ENV] == ""
    with pytest.raises(ValueError, match="key"):
        stored("", lambda: 1)
