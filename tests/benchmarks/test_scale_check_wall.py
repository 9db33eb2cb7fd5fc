"""The wall-time benchmark's usage errors: each exits 2 before any ``flbounds check`` run and
creates nothing; and the usage line names a command the user can run."""

from __future__ import annotations

import sys

import pytest

from benchmarks import _common, scale_check_wall


@pytest.mark.parametrize("argv, says", [
    (["--pattern", "nosuch"], "no claim matches pattern 'nosuch'"),
    (["--first-warm", "1", "--profile", "full"], "--first-warm measures the quick ledger"),
    (["--history", "/nonexistent/results.sqlite"], "no such results store")])
def test_usage_errors_exit_2_before_any_run(argv, says, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(scale_check_wall, "run_check",
                        lambda *a, **k: pytest.fail("a check run started"))
    with pytest.raises(SystemExit) as err:
        scale_check_wall.main([*argv, "--out", str(tmp_path / "out")])
    assert err.value.code == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv0, expected", [
    ("python -m benchmarks mc_claims", "python -m benchmarks mc_claims"),
    ("/repo/benchmarks/scale_check_wall.py", "python -m benchmarks.scale_check_wall"),
    ("/usr/bin/pytest", None)])
def test_the_usage_line_names_a_runnable_command(argv0, expected, monkeypatch):
    monkeypatch.setattr(sys, "argv", [argv0])
    assert _common.prog() == expected
