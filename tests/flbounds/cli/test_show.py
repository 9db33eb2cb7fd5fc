"""``flbounds show`` for a numbered result: parts, hypotheses, printed bound, the claims of
each part with their latest verdicts; and the parts a claim checks."""

import json

import pytest

from flbounds.cli import main
from flbounds.ledger import (
    Evidence,
    ResultStore,
    Tolerance,
    bound,
    claim,
    get,
    hypothesis,
    positive,
    result,
)


@hypothesis("step", "eta <= 1/L")
def step_condition(*, step, L):
    return step <= 1 / L


@pytest.fixture
def lemma1(ledger_sandbox):
    """A result with three parts (one unchecked, with its reason), a scoped hypothesis, a
    printed bound and two claims, one of them a counterexample outside the hypothesis."""
    res = result("testpaper.lemma1", ref="Lemma 1", title="a test lemma",
                 parts={"rate": "x' <= (1 - eta mu) x", "constant": "c = 2",
                        "remark": ("the rate is tight", "no instance attains it")},
                 hypotheses=(step_condition.only("rate"),))

    @bound("testpaper.lemma1", ref="Lemma 1, eq. (3)", quantity="contraction per step",
           constants=(positive("mu"), positive("L")))
    def contraction(*, mu, L):
        return 1 - mu / L

    @claim("testpaper.lemma1.rate", ref="Lemma 1", kind="statement", statement="-",
           expected="not-applicable", result=res, parts=("rate",))
    def rate(*, rng):
        return Evidence(2.0, 1.0, "<=", Tolerance.exact(), instance=dict(step=2.0, L=1.0))

    @claim("testpaper.lemma1.constant", ref="Lemma 1", kind="example", statement="-",
           expected="holds", parts=("testpaper.lemma1:constant",))
    def constant(*, rng):
        return Evidence(2.0, 2.0, "==", Tolerance.exact(), instance={})

    return res


def test_show_a_result_lists_parts_hypotheses_bound_and_claims(lemma1, tmp_path, capsys):
    assert main(["show", "testpaper.lemma1", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("testpaper.lemma1  Lemma 1: a test lemma  (lemma)")
    assert ("paper       testpaper: T. Tester, 2026. A paper the tests declare. "
            "arXiv:0000.00000." in out)
    assert "declared    tests/flbounds/cli/test_show.py:" in out
    assert "  rate      x' <= (1 - eta mu) x" in out and "  constant  c = 2" in out
    assert "  step: eta <= 1/L\n      parts rate; reads step, L" in out
    assert "  testpaper.lemma1  (Lemma 1, eq. (3)): contraction per step" in out
    assert "constants mu L;" in out
    claims = out.split("claims per part", 1)[1]
    assert "  rate\n    testpaper.lemma1.rate  [Lemma 1]\n" in claims
    assert "expected not-applicable; latest no result stored" in claims
    assert "  constant\n    testpaper.lemma1.constant" in claims
    assert "  remark\n    not checked: no instance attains it" in claims


def test_show_a_result_reads_the_latest_verdicts(lemma1, tmp_path, capsys):
    store = ResultStore(tmp_path)
    for cid in ("testpaper.lemma1.rate", "testpaper.lemma1.constant"):
        store.append(get(cid).check(seed=0))
    assert main(["show", "testpaper.lemma1", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "latest not-applicable (as expected; quick, seed 0)" in out
    assert "hypotheses step: NOT met" in out
    assert "reason     outside the result's hypotheses: step: eta <= 1/L fails" in out
    assert "latest holds (as expected; quick, seed 0)" in out

    assert main(["show", "testpaper.lemma1", "--results", str(tmp_path), "--format",
                 "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [p["id"] for p in record["parts"]] == ["rate", "constant", "remark"]
    (rate,) = record["parts"][0]["claims"]
    assert rate["latest"]["verdict"] == "not-applicable"
    assert rate["latest"]["hypotheses"] == {"step: eta <= 1/L": False}
    assert record["parts"][2] == dict(id="remark", text="the rate is tight",
                                      unchecked="no instance attains it", claims=[])
    assert record["hypotheses"] == [dict(name="step", wording="eta <= 1/L", parts=["rate"],
                                         reads=["step", "L"])]
    assert record["bounds"][0]["constants"] == ["mu", "L"]
    assert record["paper"]["reference"] == "T. Tester, 2026"


def test_show_a_result_with_run(lemma1, tmp_path, capsys):
    assert main(["show", "testpaper.lemma1", "--run", "--results", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "(verdicts: this run (not stored))" in out and "latest holds" in out
    assert not (tmp_path / "r").exists()


def test_show_a_claim_names_the_parts_it_checks(lemma1, tmp_path, capsys):
    assert main(["show", "testpaper.lemma1.rate", "--results", str(tmp_path)]) == 0
    assert "parts       testpaper.lemma1:rate\n" in capsys.readouterr().out
    assert main(["show", "testpaper.lemma1.rate", "--results", str(tmp_path), "--format",
                 "json"]) == 0
    assert json.loads(capsys.readouterr().out)["parts"] == ["testpaper.lemma1:rate"]


@pytest.mark.parametrize("ident", ["testpaper.lemma2", "testpaper", "testpaper.lemma1:rate"])
def test_show_an_unknown_id_is_a_one_line_usage_error(lemma1, ident, capsys):
    assert main(["show", ident]) == 2
    err = capsys.readouterr().err
    assert err.startswith("flbounds: error: unknown claim or result id")
    assert err.strip().count("\n") == 0


def test_show_a_migrated_result_of_the_papers(tmp_path, capsys):
    assert main(["show", "focus.lemma4", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("focus.lemma4  Lemma 4: FOCUS consensus lemma")
    assert "verify/focus/lemma4/__init__.py:" in out
    assert "focus.lemma4.rare_participation" in out.split("claims per part", 1)[1]


def test_list_and_show_say_an_attached_claims_hypotheses_are_evaluated(lemma1, tmp_path,
                                                                       capsys):
    claim("testpaper.lemma1.outside", ref="Lemma 1", kind="statement", statement="-",
          expected="holds", result=lemma1, parts="rate",
          outside={"step": "a large step on purpose"})(lambda *, rng: None)
    assert main(["list", "testpaper", "--format", "json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["testpaper.lemma1.rate"]["hypotheses_state"] == "evaluated"
    assert rows["testpaper.lemma1.outside"]["hypotheses_state"] == "some left"
    assert rows["testpaper.lemma1.outside"]["outside"] == {"step": "a large step on purpose"}
    assert main(["show", "testpaper.lemma1.outside", "--results", str(tmp_path)]) == 0
    assert ("hypotheses  the predicates of testpaper.lemma1 (flbounds show testpaper.lemma1), "
            "evaluated on each run's instance; outside step on purpose: a large step on "
            "purpose\n") in capsys.readouterr().out
    assert main(["show", "testpaper.lemma1", "--results", str(tmp_path)]) == 0
    assert "outside step on purpose: a large step on purpose" in capsys.readouterr().out


def test_show_a_claim_cites_its_paper(capsys, tmp_path):
    assert main(["show", "focus.matrices.pull_row_stochastic", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert ("paper       focus: Bicheng Ying, Zhe Li, Haibo Yang. Exact and Linear "
            "Convergence" in out and "NeurIPS 2025. arXiv:2503.20117." in out)
    assert "002_d5aeef3645e253f4" not in out
