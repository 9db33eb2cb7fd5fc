"""The command line: exit codes, one-line usage errors, JSON output, reports."""

import json
import subprocess
import sys

import pytest

from flbounds.cli import main


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "flbounds", *args], capture_output=True,
                          text=True, timeout=300)


def test_unknown_claim_exits_2_with_one_line(tmp_path):
    proc = run_cli("check", "no.such.claim", "--results", str(tmp_path / "r"))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "no.such.claim" in proc.stderr
    assert not (tmp_path / "r").exists()  # nothing partial written


@pytest.mark.parametrize("args", [["check", "--profile", "huge"], ["check", "--workers", "0"],
                                  ["check", "--seed", "-1"], ["figures", "no_such_figure"],
                                  ["list", "nothing.here"], ["frobnicate"]])
def test_usage_errors_exit_2(args, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("flbounds: error:") and err.strip().count("\n") == 0


def test_unreachable_scheduler_exits_2(capsys):
    pytest.importorskip("distributed")
    assert main(["check", "focus.matrices", "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "scheduler" in capsys.readouterr().err


def test_check_json_and_report(tmp_path, capsys):
    out = tmp_path / "a.json"
    code = main(["check", "focus.matrices", "--results", str(tmp_path), "--json", str(out),
                 "--quiet"])
    assert code == 0
    rows = json.loads(out.read_text())
    assert rows and all(r["verdict"] == r["expected"] for r in rows)
    assert {"id", "paper", "ref", "kind", "statement", "measured", "theoretical", "relation",
            "tolerance", "verdict", "expected", "reproducer", "params", "seed", "elapsed_s",
            "versions"} <= set(rows[0])
    assert main(["report", "--results", str(tmp_path)]) == 0
    page = (tmp_path / "ledger.html").read_text()
    assert "focus.matrices.pull_row_stochastic" in page and "<table" in page
    assert "| focus.matrices" in (tmp_path / "ledger.md").read_text()


def test_report_without_results_is_usage_error(tmp_path):
    assert main(["report", "--results", str(tmp_path / "empty")]) == 2


def test_module_entry_point_lists_claims():
    proc = run_cli("list", "safari")
    assert proc.returncode == 0 and "safari.thm1" in proc.stdout
