"""``flbounds bound``: the printed bound judged by its result's hypotheses on the constants
and the step, and said plainly when the step or a hypothesis is outside the statement."""

import json

import pytest

from flbounds.cli import main
from flbounds.ledger import bound, hypothesis, positive, result
from flbounds.ledger.api.bounds import get


@hypothesis("A1", "L >= mu")
def ordered(*, mu, L):
    return L >= mu


@hypothesis("step", "eta <= 1/L")
def step_condition(*, step, L):
    return step <= 1 / L


@hypothesis("A2", "every f_i is L-smooth")
def smooth(*, problem, L):
    return True


@pytest.fixture
def thm1(ledger_sandbox):
    """``testpaper.thm1``: a rate with a step condition; its bound ``testpaper.thm1.rate``."""
    result("testpaper.thm1", ref="Theorem 1", title="a rate",
           hypotheses=(ordered, step_condition, smooth))

    @bound("testpaper.thm1.rate", ref="Thm 1, eq. (3)", quantity="contraction per step",
           constants=(positive("mu"), positive("L")), steps=lambda mu, L: {"1/L": 1 / L})
    def rate(*, mu, L, step):
        return 1 - step * mu

    @bound("testpaper.other", ref="Eq. (9)", quantity="no result", constants=(positive("L"),))
    def other(*, L):
        return L


def test_the_bound_value_carries_its_result_hypotheses(thm1):
    value = get("testpaper.thm1.rate").evaluate(mu=1.0, L=2.0)
    assert (value.result, value.result_ref) == ("testpaper.thm1", "Theorem 1")
    assert value.hypotheses == {"A1: L >= mu": True, "step: eta <= 1/L": True,
                                "A2: every f_i is L-smooth":
                                    "not evaluated: the constants lack problem"}
    assert value.warnings == []
    above = get("testpaper.thm1.rate").evaluate(mu=3.0, L=2.0, step=1.0)
    assert above.hypotheses["step: eta <= 1/L"] is False
    assert above.hypotheses["A1: L >= mu"] is False
    assert above.failed_conditions == ["1/L"]
    assert above.warnings == [
        "step 1 is outside the step condition of Theorem 1: step <= 1/L fails (admissible "
        "step 0.5); the printed value is not a bound there",
        "outside the hypotheses of Theorem 1: A1, step fail on these constants; the printed "
        "value is not a bound there"]
    assert get("testpaper.other").evaluate(L=1.0).result == ""


def test_cli_prints_each_hypothesis_and_warns_plainly(thm1, capsys):
    assert main(["bound", "testpaper.thm1.rate", "mu=1", "L=2", "step=1"]) == 0  # a calculator
    out = capsys.readouterr().out
    assert "  hypotheses of Theorem 1 (testpaper.thm1):\n" in out
    assert "    holds          A1: L >= mu\n" in out
    assert "    FAILS          step: eta <= 1/L\n" in out
    assert ("    not evaluated  A2: every f_i is L-smooth  (the constants lack problem)"
            in out)
    assert "WARNING:     step 1 is outside the step condition of Theorem 1" in out
    assert "WARNING:     outside the hypotheses of Theorem 1: step fails" in out
    assert main(["bound", "testpaper.thm1.rate", "mu=1", "L=2", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["result"] == "testpaper.thm1" and row["warnings"] == []
    assert row["hypotheses"]["A1: L >= mu"] is True
    assert main(["bound", "testpaper.other", "L=1"]) == 0
    assert "hypotheses:  not evaluated (no result declared" in capsys.readouterr().out


def test_a_step_outside_the_printed_conditions_is_said_plainly(capsys):
    assert main(["bound", "focus.thm1a", "mu=1", "L=2", "p=0.3,0.5", "tau=3", "step=10"]) == 0
    out = capsys.readouterr().out
    assert "printed:     -9" in out
    assert "WARNING:     step 10 is outside the step condition of " in out
    assert "the printed value is not a bound there" in out


def test_a_bound_belongs_to_the_result_with_the_longest_prefix(thm1):
    inner = result("testpaper.thm1.rate", ref="Theorem 1, rate part", title="t")
    assert get("testpaper.thm1.rate").result() is inner
    assert [b.id for b in inner.bounds] == ["testpaper.thm1.rate"]
    from flbounds.ledger.api.results import get as get_result
    assert get_result("testpaper.thm1").bounds == []
