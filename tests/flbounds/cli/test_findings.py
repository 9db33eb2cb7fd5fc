"""``flbounds findings``: what the stored rows find per paper, its formats and exit codes (0 all
as expected, 1 an unexpected verdict, 2 no store / unknown paper / a paper with no row), and
``flbounds report`` writing the findings beside the ledger."""

import dataclasses
import json

import pytest

from flbounds.cli import main
from flbounds.ledger import ResultStore
from flbounds.ledger.reports.findings import Findings
from tests.flbounds.ledger.test_findings import CORRECTED, PRINTED, declare_plugin


def store_rows(folder, rows):
    store = ResultStore(folder)
    run = store.begin_run("quick", 0, len(rows))
    for r in rows:
        store.append(r, run_id=run)
    store.end_run(run, "complete")
    return folder


@pytest.fixture
def rows(ledger_sandbox):
    from flbounds.ledger.api import registry

    declare_plugin()
    return [registry.get(cid).check(seed=0) for cid in sorted(registry._REGISTRY)
            if cid.startswith("testpaper.")]


def test_findings_prints_ratio_and_correction(rows, tmp_path, capsys):
    store_rows(tmp_path, rows)
    assert main(["findings", "testpaper", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Tester, 2026: A paper the tests declare" in out
    assert "Rows: profile quick, seed 0" in out
    assert "1.5x the printed bound" in out and f"corrected by {CORRECTED}" in out
    assert "1 printed statement fails; 1 of 1 corrected statement holds" in out


def test_findings_formats(rows, tmp_path, capsys):
    store_rows(tmp_path, rows)
    assert main(["findings", "--results", str(tmp_path), "--format", "json"]) == 0
    found = Findings.from_dict(json.loads(capsys.readouterr().out))
    [failure] = found.paper("testpaper").failures
    assert failure.printed.id == PRINTED and failure.corrections[0].id == CORRECTED
    assert main(["findings", "--results", str(tmp_path), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "### Printed statements that fail" in md and f"`{CORRECTED}`" in md


def test_an_unexpected_verdict_exits_1(rows, tmp_path, capsys):
    changed = [dataclasses.replace(r, verdict="holds") if r.id == PRINTED else r for r in rows]
    store_rows(tmp_path, changed)
    assert main(["findings", "--results", str(tmp_path)]) == 1
    assert "UNEXPECTED" in capsys.readouterr().out


def test_usage_errors_exit_2(rows, tmp_path, capsys):
    from flbounds.ledger import paper

    assert main(["findings", "--results", str(tmp_path / "none")]) == 2
    assert "no results in" in capsys.readouterr().err
    store_rows(tmp_path, rows)
    assert main(["findings", "nosuch", "--results", str(tmp_path)]) == 2
    assert "unknown paper 'nosuch'" in capsys.readouterr().err
    paper("otherpaper", title="Declared, never run")
    assert main(["findings", "otherpaper", "--results", str(tmp_path)]) == 2
    assert "no stored row of paper 'otherpaper'" in capsys.readouterr().err
    assert main(["findings", "--results", str(tmp_path), "--format", "yaml"]) == 2


def test_report_writes_the_findings_beside_the_ledger(rows, tmp_path, capsys):
    store_rows(tmp_path, rows)
    out = tmp_path / "out"
    assert main(["report", "--results", str(tmp_path), "--out", str(out)]) == 0
    assert "findings.md" in capsys.readouterr().out
    md = (out / "findings.md").read_text()
    assert "1.5x the printed bound" in md and f"(ledger.html#{CORRECTED})" in md
    page = (out / "findings.html").read_text()
    assert f'href="#{PRINTED}"' in page
    assert 'href="findings.html"' in (out / "ledger.html").read_text()
