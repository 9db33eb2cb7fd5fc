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
                                  ["list", "nothing.here"], ["frobnicate"],
                                  ["check", "--workers", "two"], ["check", "--seed", "1.5"]])
def test_usage_errors_exit_2(args, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("flbounds: error:") and err.strip().count("\n") == 0
    assert "_int value" not in err          # the message, not the converter's name


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


def test_list_names_papers_by_key_and_citation_with_a_header_row(capsys):
    assert main(["list", "focus.matrices", "kvib.lemma2_1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("focus: Bicheng Ying, Zhe Li, Haibo Yang. Exact and Linear "
                          "Convergence for Federated Learning")
    assert "NeurIPS 2025. arXiv:2503.20117." in out.splitlines()[0]
    assert "\nkvib: Dun Zeng, " in out and "TMLR 2025. arXiv:2310.02698." in out
    assert "002_d5aeef3645e253f4" not in out and "focus.matrices.pull_row_stochastic" in out
    lines = out.splitlines()
    header = lines[1]
    assert header.split() == ["claim", "ref", "kind", "hypotheses", "expected"]
    assert set(lines[2].strip()) == {"-", " "}
    rows = [line for line in lines if line.startswith("  ") and "." in line.split()[0]]
    for column in ("ref", "kind", "hypotheses", "expected"):   # aligned across papers
        start = header.index(column)
        assert all(row[start - 2:start] == "  " and row[start] != " " for row in rows), column


def test_list_where_points_at_the_claim_function(capsys):
    assert main(["list", "focus.matrices.pull_row_stochastic", "--where", "--format",
                 "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    path, line = row["where"].rsplit(":", 1)
    source = open(path, encoding="utf-8").read().splitlines()
    decorated = "\n".join(source[int(line) - 1:int(line) + 12])
    assert '"focus.matrices.pull_row_stochastic"' in decorated
    assert row["paper"] == "focus" and row["title"].startswith("Exact and Linear")
    # attached to a result part (focus.eq4:pull): no hand-written labels; its result's
    # predicates are evaluated on the instance when it runs
    assert row["hypotheses_state"] == "evaluated" and row["parts"] == ["focus.eq4:pull"]
    assert "hypotheses" not in row and row["params"]["quick"]


def test_list_csv(capsys):
    import csv
    import io

    assert main(["list", "safari", "--format", "csv", "--where"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows and all(r["id"].startswith("safari.") and r["paper"] == "safari" for r in rows)
    assert all(r["where"].rsplit(":", 1)[1].isdigit() for r in rows)
    assert {"title", "ref", "kind", "expected", "statement"} <= set(rows[0])


@pytest.mark.parametrize("args", [["show", "no.such.claim"], ["show", "focus.matrices"],
                                  ["show"], ["list", "--format", "xml"],
                                  ["show", "focus.matrices.mass_preservation", "--seed", "1"]])
def test_show_and_list_usage_errors(args, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("flbounds: error:") and err.strip().count("\n") == 0


def test_show_reads_the_latest_stored_result(tmp_path, capsys):
    cid = "focus.matrices.mass_preservation"
    assert main(["show", cid, "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "result      none stored" in out and f"flbounds check {cid}" in out
    assert "verify/focus/matrices.py:" in out
    assert main(["check", cid, "--results", str(tmp_path), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["show", cid, "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "verdict     holds (as expected)" in out
    assert "tolerance   rounding = " in out and "compared    measured" in out
    assert main(["show", cid, "--results", str(tmp_path), "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["latest"]["verdict"] == "holds" and row["latest"]["tolerance"]["derivation"]


def test_show_run_computes_without_storing(tmp_path, capsys):
    assert main(["show", "focus.matrices.mass_preservation", "--run", "--results",
                 str(tmp_path / "r"), "--profile", "full", "--seed", "2"]) == 0
    assert "this run (not stored), profile full, seed 2" in capsys.readouterr().out
    assert not (tmp_path / "r").exists()


def test_version_and_a_help_for_users(capsys):
    from flbounds import __version__

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"flbounds {__version__}"
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "examples:" in out and "flbounds show" in out and "exit codes" in out
    assert "sub-command" not in out  # not the module's developer docstring


def _examples():
    from flbounds.cli import COMMANDS, _module

    for name in COMMANDS:
        for line in _module(name).EXAMPLES.splitlines():
            if line.startswith("  flbounds "):
                command = line.strip().split("  ", 1)[0]
                yield name, command.split(" && ")[0]


@pytest.mark.parametrize("name, command", list(_examples()))
def test_every_subcommand_help_ends_with_examples_that_parse(name, command, capsys):
    import shlex

    from flbounds.cli import build_parser

    argv = shlex.split(command.split(" > ")[0])[1:]      # without a shell redirection
    args = build_parser().parse_args(argv)          # a usage error raises
    if getattr(args, "patterns", None) and args.command in ("list", "check"):
        from flbounds.cli._common import select_claims

        if args.patterns != ["mypaper"]:            # the plugin guide's example
            assert select_claims(args.patterns)
    if args.command == "show":
        from flbounds.ledger import load_all
        from flbounds.ledger.api.results import load_all as results

        assert args.claim_id in load_all() or args.claim_id in results()


def test_help_of_each_subcommand_shows_its_examples():
    from flbounds.cli import COMMANDS

    for name in COMMANDS:
        proc = run_cli(name, "--help")
        examples = proc.stdout.split("\nexamples:\n", 1)[-1]
        assert proc.returncode == 0 and f"  flbounds {name}" in examples, name
    listed = run_cli("list", "--help").stdout
    assert "--format {table,json,csv}" in listed and "table for reading" in listed


def test_bound_list_has_a_header_row(capsys):
    assert main(["bound", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["bound", "ref", "constants"] and set(lines[1]) == {"-", " "}
    start = lines[0].index("constants")
    assert all(line[start - 2:start] == "  " for line in lines[2:])


def test_falsify_lists_the_attackable_claims(capsys):
    assert main(["falsify", "--list", "kvib"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["attackable", "claim", "expected"]
    assert "kvib.lemma2_1.isp_le_rsp_bound" in "\n".join(lines)
    assert lines[-1].endswith("attackable claims; 'flbounds falsify ID' attacks one")
    assert main(["falsify", "no.such.claim"]) == 2
    assert "see 'flbounds falsify --list'" in capsys.readouterr().err
