"""The coverage table: every claim is attached to a part of a declared result, every part has
claims or a reason, and docs/coverage.md is the generated table. The per-part rules on a test paper:
tests/flbounds/ledger/test_coverage_parts.py."""

from pathlib import Path

import pytest

from flbounds.ledger.reports import coverage

DOC = Path(__file__).resolve().parents[3] / "docs" / "coverage.md"


def test_every_claim_and_every_result_is_accounted_for():
    assert coverage.problems() == []


def test_the_committed_table_is_current():
    assert DOC.read_text(encoding="utf-8") == coverage.markdown(), \
        "run: python -m flbounds.ledger.reports.coverage --out docs/coverage.md"


def test_every_paper_lists_its_theorems():
    for key, names in {"focus": ["Theorem 1", "Theorem 6", "Lemma 6", "Table 1", "Figure 9"],
                       "kvib": ["Theorem 4.1", "Lemma D.2", "Figure 7"],
                       "safari": ["Theorem 5", "Remark 6", "Table 11"],
                       "fedals": ["Theorem 4.3", "Remark 4.2", "Table 3"],
                       "subtrunc": ["Theorem 1", "Proposition 4", "Table IV"]}.items():
        assert [n for n in names if not any(_names(n, ref) for ref in _listed(key))] == [], key


def _listed(key: str) -> list[str]:
    """The refs of the paper's declared results."""
    return [res.ref for res in coverage.paper_results(key)]


def _names(name: str, ref: str) -> bool:
    """``ref`` numbers the result ``name`` ("Theorem 1(a)" for "Theorem 1")."""
    return ref == name or ref.startswith(name + "(") or ref.startswith(name + " ")


def test_check_command(capsys):
    assert coverage.main(["--check"]) == 0
    with pytest.raises(SystemExit) as exc:
        coverage.main(["--out", "/no/such/dir/coverage.md"])
    assert exc.value.code == 2
