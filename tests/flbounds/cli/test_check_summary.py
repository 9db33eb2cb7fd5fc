"""``check``'s summary: the margin of each unexpected verdict; tracebacks with ``-v`` in
``check`` and ``show``."""

from types import SimpleNamespace

import pytest

from flbounds.cli import main
from flbounds.cli._margin import margin
from flbounds.ledger import Evidence, Tolerance, claim, result


@pytest.fixture
def claims(ledger_sandbox):
    lemma = result("testpaper.lemma9", ref="Lemma 9", title="a lemma",
                   parts={"bound": "x <= y"})

    @claim("testpaper.raises.now", ref="Lemma 9", kind="statement", statement="-",
           expected="holds", result=lemma, parts=("bound",))
    def raises(*, rng):
        raise ZeroDivisionError("a planted failure in the claim")

    @claim("testpaper.misses.bound", ref="Lemma 9", kind="statement", statement="-",
           expected="holds", result=lemma, parts=("bound",))
    def misses(*, rng):
        return Evidence([0.5, 3.0, 1.0], [1.0, 2.0, 1.0], "<=", Tolerance.exact())


def _run(tmp_path, capsys, *extra):
    code = main(["check", "testpaper", "--results", str(tmp_path), "--timeout", "0",
                 "--quiet", *extra])
    return code, capsys.readouterr().out


def test_summary_prints_the_margin_of_each_unexpected_verdict(claims, tmp_path, capsys):
    code, out = _run(tmp_path, capsys)
    assert code == 1
    assert ("margin: measured 3 vs printed 2 (ratio 1.5, component 1 of 3); tolerance 0"
            in out)


def test_check_prints_tracebacks_only_with_v(claims, tmp_path, capsys):
    _, out = _run(tmp_path, capsys)
    assert "Traceback" not in out and "1 claim(s) raised: -v prints their tracebacks" in out
    _, out = _run(tmp_path, capsys, "-v")
    block = out.split("traceback of testpaper.raises.now:", 1)[1]
    assert "Traceback (most recent call last)" in block
    assert "ZeroDivisionError: a planted failure in the claim" in block
    assert "test_check_summary.py" in block            # where it raised


def test_show_prints_the_traceback_with_v(claims, tmp_path, capsys):
    _run(tmp_path, capsys)
    assert main(["show", "testpaper.raises.now", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Traceback" not in out and "-v prints the traceback" in out
    assert main(["show", "testpaper.raises.now", "--results", str(tmp_path), "-v"]) == 0
    out = capsys.readouterr().out
    assert "ZeroDivisionError: a planted failure in the claim" in out
    assert main(["show", "testpaper.raises.now", "--run", "-v"]) == 0
    assert "ZeroDivisionError" in capsys.readouterr().out


def _row(measured, theoretical, relation, tol=0.0):
    return SimpleNamespace(measured=measured, theoretical=theoretical, relation=relation,
                           tolerance={"value": tol})


@pytest.mark.parametrize("row, text", [
    (_row(2.0, 1.0, "<="), "measured 2 vs printed 1 (ratio 2); tolerance 0"),
    (_row([1.0, 0.2], [2.0, 1.0], ">="), "measured 1 vs printed 2 (ratio 0.5, component 0 of 2)"),
    (_row(1.5, 1.0, "==", 1e-12), "(ratio 1.5; |difference| 0.5); tolerance 1e-12"),
    (_row(1.0, 0.0, "<="), "printed value 0, no ratio"),
    (_row([0.5, 3.0], [[0.0, 1.0], [0.0, 2.0]], "in"), "printed [0, 2] (outside by 1, comp"),
    (_row(None, None, ""), ""),
    (_row("text", 1.0, "<="), ""),
])
def test_margin(row, text):
    assert (text in margin(row)) if text else margin(row) == ""
