"""The findings page (flbounds.ledger.reports.findings): a printed claim that fails, with its
ratio and counterexample, linked to its corrected companion both ways; tightness of what
holds; code defects and synthetic re-runs apart; the renderings; the README table; the
ledger panel's margin and links; the margin rule on hand-made comparisons.

Everything is declared under ``testpaper`` in the ``ledger_sandbox`` (tests/flbounds/
conftest.py); the claims are tiny functions, so no real claim runs.
"""

import json
import re

import numpy as np
import pytest

from flbounds.ledger import Evidence, Tolerance, claim, result
from flbounds.ledger.reports import findings_render, report_data
from flbounds.ledger.reports.findings import Findings, collect
from flbounds.ledger.reports.margins import counterexample, margin
from flbounds.ledger.reports.readme import findings_block

PRINTED = "testpaper.lemma9.printed"
CORRECTED = "testpaper.lemma9.corrected"
WITNESS = {"N": 4, "p": 0.02, "tau": 1}


def declare_plugin():
    """A small test plugin: a printed bound that fails by a factor 1.5 at its second
    component, its corrected statement (holds, 3/4 of its bound), a tight-checked statement,
    an authors' code defect and a synthetic re-run that does not reproduce."""
    lemma = result("testpaper.lemma9", ref="Lemma 9", title="a bound",
                   parts={"bound": "x <= c"})
    table = result("testpaper.table1", ref="Table 1", title="accuracies",
                   parts={"gain": "alpha = 10 beats alpha = 1"})

    @claim(PRINTED, ref="Lemma 9, eq. (4)", kind="statement", expected="violated",
           statement="x <= c as printed", result=lemma)
    def printed(*, rng):
        return Evidence([0.5, 3.0], [1.0, 2.0], "<=", Tolerance.exact(), instance={},
                        details={"smallest_counterexample": WITNESS, "note": "two cells"})

    @claim(CORRECTED, ref="Lemma 9, corrected", kind="statement", expected="holds",
           statement="x <= 2c", result=lemma, corrects=PRINTED)
    def corrected(*, rng):
        return Evidence([0.5, 3.0], [1.0, 4.0], "<=", Tolerance.exact(), instance={})

    @claim("testpaper.lemma9.tight", ref="Lemma 9, tightness", kind="tightness",
           expected="holds", statement="the worst case stays below c", result=lemma)
    def tight(*, rng):
        return Evidence(0.99, 1.0, "<=", Tolerance.exact(), instance={},
                        worst_case={"worst": 0.99, "printed": 1.0, "ratio": 0.99,
                                    "tight": False})

    @claim("testpaper.code.defect", ref="authors' repository", kind="code",
           expected="violated", statement="the released solver returns p", result=lemma)
    def defect(*, rng):
        return Evidence(1.5, 1.0, "==", Tolerance.exact(), instance={},
                        details={"instance": {"a": [1.0, 3.0, 6.0], "K": 2}})

    @claim("testpaper.table1.rerun", ref="Table 1", kind="reproduction",
           expected="not-reproduced", statement="alpha = 10 beats alpha = 1", result=table)
    def rerun(*, rng):
        return Evidence(-0.1, 0.0, ">=", Tolerance.exact(), instance={})


@pytest.fixture
def plugin(ledger_sandbox):
    from flbounds.ledger.api import registry

    declare_plugin()
    registry._check_corrects()
    return [registry.get(cid).check(seed=0) for cid in sorted(registry._REGISTRY)
            if cid.startswith("testpaper.")]


def test_a_failing_printed_claim_shows_its_ratio_witness_and_correction(plugin):
    found = collect(plugin, ["testpaper"])
    assert found.source == "store"
    paper = found.paper("testpaper")
    assert paper.arxiv == "0000.00000" and "A paper the tests declare" in paper.citation
    [failure] = paper.failures
    printed = failure.printed
    assert printed.id == PRINTED and printed.verdict == "violated" and printed.as_expected
    assert printed.margin.kind == "ratio" and printed.margin.value == pytest.approx(1.5)
    assert printed.margin.component == 1 and printed.margin.failing == 1
    assert "1.5x the printed bound" in printed.margin.text
    assert printed.counterexample == {"smallest_counterexample": WITNESS}
    assert printed.corrected_by == (CORRECTED,)
    [fix] = failure.corrections
    assert fix.id == CORRECTED and fix.corrects == PRINTED and fix.verdict == "holds"
    assert fix.tightness.ratio == pytest.approx(0.75)
    assert paper.corrected_hold == 1 and paper.corrections == ()


def test_what_holds_code_defects_and_reruns_are_apart(plugin):
    paper = collect(plugin).paper("testpaper")
    assert [e.id for e in paper.holds] == ["testpaper.lemma9.tight"]
    tight = paper.holds[0].tightness
    assert tight.ratio == pytest.approx(0.99) and tight.tight is False and "PEP" in tight.source
    [defect] = paper.code_defects
    assert defect.margin.kind == "excess" and defect.margin.value == pytest.approx(0.5)
    assert defect.counterexample == {"instance": {"a": [1.0, 3.0, 6.0], "K": 2}}
    [rerun] = paper.reproductions
    assert rerun.verdict == "not-reproduced" and paper.not_reproduced == 1
    assert all(f.printed.kind not in ("code", "reproduction") for f in paper.failures)


def test_renderings_link_printed_and_corrected_both_ways(plugin):
    found = collect(plugin, ["testpaper"], provenance=["Rows: profile quick, seed 0."])
    md = findings_render.markdown(found)
    assert "1.5x the printed bound" in md and "Rows: profile quick, seed 0." in md
    assert f"corrected by [`{CORRECTED}`](ledger.html#{CORRECTED})" in md
    assert "*A paper the tests declare*" in md and "arXiv:0000.00000" in md
    txt = findings_render.text(found)
    assert f"corrected by {CORRECTED}" in txt and "`" not in txt
    assert "counterexample: smallest_counterexample = " in txt
    assert "never paper errors" in txt and "not a paper error" in txt
    page = findings_render.html(found)
    assert f'id="{PRINTED}"' in page and f'id="{CORRECTED}"' in page
    assert f'href="#{CORRECTED}"' in page and f'href="#{PRINTED}"' in page
    assert f'href="ledger.html#{PRINTED}"' in page and "<script" not in page
    for text in (md, txt, page):
        assert not re.search(r"\b00\d_[0-9a-f]{16}\b|\[00\d\]", text)  # no file hashes


def test_an_unexpected_verdict_is_marked(plugin):
    import dataclasses

    rows = [dataclasses.replace(r, verdict="holds") if r.id == PRINTED else r for r in plugin]
    paper = collect(rows).paper("testpaper")
    assert paper.unexpected == (PRINTED,)
    assert "holds (UNEXPECTED: expected violated)" in findings_render.text(collect(rows))


def test_registry_findings_have_expected_verdicts_and_no_numbers(plugin):
    found = collect(None, ["testpaper"])
    assert found.source == "registry" and "no claim was run" in found.provenance[0]
    paper = found.paper("testpaper")
    [failure] = paper.failures
    assert failure.printed.verdict == "" and failure.printed.margin is None
    assert [c.id for c in failure.corrections] == [CORRECTED]
    assert paper.corrected_hold == 1 and len(paper.code_defects) == 1


def test_findings_round_trip_through_json(plugin):
    found = collect(plugin)
    assert Findings.from_dict(json.loads(json.dumps(found.to_dict()))) == found
    with pytest.raises(ValueError, match="data: not a findings record"):
        Findings.from_dict({"papers": [{"key": "x"}]})


def test_unknown_or_absent_papers_are_errors(plugin, ledger_sandbox):
    from flbounds.ledger import paper

    with pytest.raises(ValueError, match="papers: unknown paper 'nosuch'"):
        collect(plugin, ["nosuch"])
    paper("otherpaper", title="Declared, never run")
    with pytest.raises(ValueError, match="no stored row of paper 'otherpaper'"):
        collect(plugin, ["otherpaper"])


def test_readme_table_counts_from_the_registry(plugin):
    block = findings_block(collect(None, ["testpaper"]))
    head, rule, row = block.splitlines()
    assert head.startswith("| paper | citation | printed statements that fail |")
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "[`testpaper`](verify/testpaper/)"
    assert cells[1] == "Tester, 2026: *A paper the tests declare*, arXiv:0000.00000"
    assert cells[2:] == ["1", "1", "1", "1"]


def test_ledger_rows_carry_margin_links_and_citation(plugin):
    rows = {r["id"]: r for r in report_data.payload(plugin, [])["rows"]}
    assert "1.5x the printed bound" in rows[PRINTED]["margin"]
    assert rows[PRINTED]["corrected_by"] == [CORRECTED] and rows[CORRECTED]["corrects"] == PRINTED
    assert rows[CORRECTED]["margin"] == "" and "arXiv:0000.00000" in rows[PRINTED]["citation"]


# --- the margin rule ---------------------------------------------------------------------

@pytest.mark.parametrize("measured, printed, relation, kind, value, component", [
    (1.5, 1.0, "<=", "ratio", 1.5, None),
    ([0.5, 3.0, 2.5], [1.0, 2.0, 2.0], "<=", "ratio", 1.5, 1),     # the worst of two failing
    ([0.5, 0.1], [1.0, -1.0], "<=", "excess", 1.1, 1),              # printed side not positive
    ([2.0, 0.5], [1.0, 1.0], ">=", "ratio", 0.5, 1),                # a lower bound: shortfall
    (-1.0, 0.0, ">=", "excess", 1.0, None),
    ([1.0, 9.0], [1.0, 3.0], "==", "excess", 6.0, 1),
    (5.0, [0.0, 2.0], "in", "excess", 3.0, None),
    ("inf", 0.0, "<=", "excess", np.inf, None),
])
def test_margin_at_the_worst_component(measured, printed, relation, kind, value, component):
    found = margin(measured, printed, relation)
    assert found.kind == kind and found.value == pytest.approx(value)
    assert found.component == component


def test_margin_is_none_when_nothing_fails_or_values_are_not_numbers():
    assert margin([0.5, 1.0], [1.0, 1.0], "<=") is None
    assert margin(1.0 + 1e-9, 1.0, "<=", tolerance=1e-6) is None
    assert margin({"a": 1}, 1.0, "<=") is None and margin("text", 1.0, "==") is None
    assert margin([1.0, 2.0], [1.0, 2.0, 3.0], "==") is None  # shapes that do not broadcast


def test_counterexample_prefers_the_named_witness():
    assert counterexample({"instance": {"N": 2}, "witness": [1]}) == {"witness": [1]}
    assert counterexample({}, {"witness": {"p": 0.1}}) == {
        "witness of the adversarial search": {"p": 0.1}}
    assert counterexample({"big": list(range(100)), "q": 0.5}) == {"q": 0.5}


# --- the documentation's paper pages ------------------------------------------------------

def test_docs_paper_page_shows_stored_findings_else_expected_verdicts(plugin, tmp_path):
    import importlib
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "docs" / "_ext"))
    try:
        paper_pages = importlib.import_module("paper_pages")
    finally:
        sys.path.pop(0)
    record = tmp_path / "findings.json"
    record.write_text(json.dumps(collect(plugin, provenance=["Rows: stored."]).to_dict()))
    found, origin = paper_pages.findings_by_paper(paper_pages.stored_findings(record))[
        "testpaper"]
    assert "from a stored run" in origin and "Rows: stored." in origin
    from flbounds.ledger import PAPERS

    page = paper_pages.paper_page("testpaper", PAPERS["testpaper"], [], [], found, origin)
    assert "## Findings" in page and "1.5x the printed bound" in page
    assert f"corrected by `{CORRECTED}`" in page and "### What holds, and how tight" in page
    expected, origin = paper_pages.findings_by_paper(None)["testpaper"]
    assert "Verdicts the toolkit expects" in origin and expected.failures[0].printed.margin is None
    with pytest.raises(ValueError, match="FLBOUNDS_FINDINGS: cannot read"):
        paper_pages.stored_findings(tmp_path / "missing.json")


def test_json_rows_carry_the_citation(plugin):
    from flbounds.ledger.engine.rows import parse_row, public_row

    row = public_row(plugin[0])
    assert row["paper"] == "arXiv:0000.00000"
    assert row["citation"] == "T. Tester, 2026. A paper the tests declare. arXiv:0000.00000."
    back, problem = parse_row(json.dumps(row))
    assert problem == "" and back == plugin[0]  # readers ignore the extra field
