"""The coverage table per part: built from declared results and the parts claims attach to;
``--check`` finds unattached claims, parts without claims or reason, and reasons on checked
results."""

import pytest

import flbounds.ledger.reports.coverage as coverage
from flbounds.ledger import claim, result


def _claim(cid, **attach):
    claim(cid, ref="Lemma 1", kind="statement", statement="-", expected="holds",
          **attach)(lambda *, rng: None)


@pytest.fixture
def testpaper(ledger_sandbox):
    """Three results of ``testpaper``: a lemma with a checked, an unchecked (with reason) and
    a bare part; a theorem checked by two claims; a figure not checked at all."""
    lemma = result("testpaper.lemma10", ref="Lemma 10", title="a late lemma",
                   parts={"rate": "x' <= x | y", "tight": ("equality", "no instance attains"),
                          "constant": "c = 2"})
    result("testpaper.lemma2", ref="Lemma 2", title="an early lemma")
    theorem = result("testpaper.thm1", ref="Theorem 1", title="the theorem")
    result("testpaper.fig1", ref="Figure 1", title="a drawing", not_checked="a picture")
    _claim("testpaper.lemma10.rate", result=lemma, parts="rate")
    _claim("testpaper.thm1.b", result=theorem)
    _claim("testpaper.thm1.a", result=theorem, parts=("statement", "testpaper.lemma2:statement"))
    return lemma


def _problems():
    return [p for p in coverage.problems() if p.startswith("testpaper")]


def test_rows_list_every_part_with_its_claims_or_reason(testpaper):
    rows = coverage.part_coverage("testpaper")
    assert [(r.result.id, r.part.id) for r in rows] == [
        ("testpaper.thm1", "statement"), ("testpaper.lemma2", "statement"),
        ("testpaper.lemma10", "rate"), ("testpaper.lemma10", "tight"),
        ("testpaper.lemma10", "constant"), ("testpaper.fig1", "statement")]
    assert rows[0].claims == ("testpaper.thm1.a", "testpaper.thm1.b")
    assert rows[1].claims == ("testpaper.thm1.a",)  # a qualified part of another result
    assert rows[3].reason == "no instance attains" and rows[5].reason == "a picture"


def test_check_names_what_is_unaccounted_for(testpaper):
    assert _problems() == ["testpaper.lemma10:constant: no claim and no reason"]
    _claim("testpaper.fig1.drawn", parts="testpaper.fig1:statement")
    _claim("testpaper.lemma10.tight", result=testpaper, parts="tight")
    assert _problems() == [
        "testpaper.lemma10:tight: has claims and a reason no claim checks it",
        "testpaper.lemma10:constant: no claim and no reason",
        "testpaper.fig1: has claims and a not_checked reason"]


def test_markdown_has_a_summary_and_a_row_per_part(testpaper):
    text = coverage.markdown()
    assert "| `testpaper` | 4 | 6 | 3 / 6 | 3 | 3 |" in text
    section = text.split("## testpaper: A paper the tests declare", 1)[1]
    assert ("| Lemma 10 (`testpaper.lemma10`): a late lemma | `rate` | x' <= x \\| y | "
            "`testpaper.lemma10.rate` |") in section
    assert "|  | `tight` | equality | not checked: no instance attains |" in section
    assert "|  | `constant` | c = 2 | not checked: (no reason given) |" in section
    assert "`testpaper.thm1.a`<br>`testpaper.thm1.b`" in section


def test_a_paper_without_results_is_reported(ledger_sandbox):
    assert "testpaper: no results declared" in coverage.problems()
