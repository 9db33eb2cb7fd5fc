"""The coverage table: every claim is attached to a part of a declared result (or, for a paper
still listed by result, maps to a listed result), every part has claims or a reason, and
docs/coverage.md is the generated table. The per-part rules on a test paper:
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


@pytest.mark.parametrize("ref, cited", [
    ("Thm 1(a), eq. (23)", ["Theorem 1"]),
    ("Tables 1-2 (spec V8)", ["Table 1", "Table 2"]),
    ("Tables 6 and 7", ["Table 6", "Table 7"]),
    ("Lemma 2.2 / B.8", ["Lemma 2.2", "Lemma B.8"]),
    ("Lemmas B.2-B.4", ["Lemma B.2", "Lemma B.3", "Lemma B.4"]),
    ("Tables I-IV", ["Table I", "Table II", "Table III", "Table IV"]),
    ("Assumption 2, 1-D example", ["Assumption 2"]),
    ("Corollaries 1-2, eqs. (68)-(69)", ["Corollary 1", "Corollary 2"]),
    ("Fig. 3(c); App. F", ["Figure 3"]),
    ("Sec. 3, eq. (5)", []),
])
def test_refs_are_read_as_result_names(ref, cited):
    assert coverage.cited_results(ref) == cited


def test_every_paper_lists_its_theorems():
    for key, names in {"focus": ["Theorem 1", "Theorem 6", "Lemma 6", "Table 1", "Figure 9"],
                       "kvib": ["Theorem 4.1", "Lemma D.2", "Figure 7"],
                       "safari": ["Theorem 5", "Remark 6", "Table 11"],
                       "fedals": ["Theorem 4.3", "Remark 4.2", "Table 3"],
                       "subtrunc": ["Theorem 1", "Proposition 4", "Table IV"]}.items():
        assert [n for n in names if not any(_names(n, ref) for ref in _listed(key))] == [], key


def _listed(key: str) -> list[str]:
    """The paper's results as numbered: the refs of its declared results, or the names of
    its legacy list (verify/<paper>/results.py) while it has one."""
    if coverage.by_part(key):
        return [res.ref for res in coverage.paper_results(key)]
    return [row.result.name for row in coverage.coverage(key)]


def _names(name: str, ref: str) -> bool:
    """``ref`` numbers the result ``name`` ("Theorem 1(a)" or "Thm 1" for "Theorem 1")."""
    return ref == name or name in coverage.cited_results(ref)


@pytest.mark.parametrize("results", [[("Theorem 1",)], [("Theorem 1", 3)], ["Theorem 1"],
                                     [("Theorem 1", "a"), ("Theorem 1", "b")]])
def test_bad_result_lists_are_refused(results):
    with pytest.raises(ValueError, match="results"):
        coverage.declare_results("nosuchpaper", results)


def test_check_command(capsys):
    assert coverage.main(["--check"]) == 0
    with pytest.raises(SystemExit) as exc:
        coverage.main(["--out", "/no/such/dir/coverage.md"])
    assert exc.value.code == 2
