"""Terminal progress: ETA from stored durations, plain lines off a terminal, the summary."""

import io
import re
from types import SimpleNamespace

import pytest

from flbounds.cli import main
from flbounds.cli._progress import (
    Eta,
    ProgressBar,
    clock,
    summary_table,
    uncached_kernels,
)
from tests.ledger_rows import make_result


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_clock():
    assert clock(None) == "--:--" and clock(0) == "00:00" and clock(61.4) == "01:01"
    assert clock(3725) == "1:02:05"


def test_eta_scales_stored_durations_by_the_observed_pace():
    eta = Eta(["a", "b", "c"], {"a": 10.0, "b": 20.0})   # c unknown: the median, 15 s
    assert eta.seconds(0.0) == 45.0                        # nothing done: the stored sum
    eta.finish("a")
    assert eta.seconds(5.0) == pytest.approx(35.0 * 5.0 / 10.0)  # running twice as fast
    eta.finish("b")
    eta.finish("c")
    assert eta.seconds(20.0) == 0.0


def test_eta_without_history_counts_items():
    eta = Eta(["a", "b"])
    assert eta.seconds(0.0) is None
    eta.finish("a")
    assert eta.seconds(3.0) == pytest.approx(3.0)


def test_plain_lines_when_not_a_terminal():
    out = io.StringIO()
    with ProgressBar(2, "figures", stream=out) as bar:
        assert not bar.live
        bar.advance("first", "drew")
        bar.advance("second", "failed", note="second failed: ValueError")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[1/2]") and lines[0].endswith("drew first")
    assert lines[2].strip() == "second failed: ValueError"


def test_quiet_writes_nothing():
    out = Terminal()
    with ProgressBar(1, quiet=True, stream=out) as bar:
        bar.message("hello")
        bar.advance("x")
    assert out.getvalue() == ""


@pytest.mark.parametrize("no_color", [False, True])
def test_live_bar_on_a_terminal_respects_no_color(monkeypatch, no_color):
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    out = Terminal()
    with ProgressBar(2, "claims", stream=out) as bar:
        assert bar.live
        bar.advance("a", "holds", note="UNEXPECTED a")
        bar.advance("b", "holds")
    text = out.getvalue()
    assert "UNEXPECTED a" in text
    colours = re.findall(r"\x1b\[[0-9;]*(?:3[0-9]|9[0-7])(?:;[0-9;]*)?m", text)
    assert bool(colours) != no_color


def test_summary_table_per_paper_lists_unexpected_with_reproducer():
    results = [make_result("focus.a.x"), make_result("focus.a.y", verdict="violated"),
               make_result("kvib.b.z", verdict="violated", expected="violated")]
    text = summary_table(results, 1.5)
    rows = {line.split()[0]: line.split() for line in text.splitlines()[2:5]}
    assert rows["focus"][1:] == ["2", "1", "1", "0", "0", "1/2"]
    assert rows["kvib"][1:] == ["1", "0", "1", "0", "0", "1/1"]
    assert "1 UNEXPECTED" in text
    assert "reproduce: flbounds check focus.a.y --profile quick --seed 0" in text


def test_uncached_kernels(tmp_path):
    index = tmp_path / "k.nbi"

    def kernel(name):
        return SimpleNamespace(__name__=name, _cache=SimpleNamespace(
            _cache_file=SimpleNamespace(_index_path=str(index))))

    assert uncached_kernels([kernel("f")]) == ["f"]
    index.write_bytes(b"")
    assert uncached_kernels([kernel("f")]) == []


INLINE_PROBE = """
from numba import njit

@njit(cache=True, inline="always")
def helper(x):
    return 2.0 * x

@njit(cache=True)
def caller(x):
    return helper(x) + 1.0
"""


def test_inlined_kernels_are_cached_in_their_callers_and_not_counted(tmp_path):
    """An ``inline="always"`` kernel called only from kernels never gets a cache index of its
    own (the notice once counted 34 such kernels as 'not cached yet' after every run)."""
    import os
    import subprocess
    import sys

    (tmp_path / "inline_probe.py").write_text(INLINE_PROBE)
    code = ("import os, inline_probe as m; from flbounds.cli._progress import uncached_kernels; "
            "assert m.caller(1.0) == 3.0; "
            "print(os.path.exists(m.helper._cache._cache_file._index_path), "
            "uncached_kernels([m.helper, m.caller]))")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300, check=True, cwd=tmp_path)
    assert proc.stdout.split() == ["False", "[]"]


def test_library_kernels_counted_are_the_compiled_ones():
    from flbounds.cli._progress import _library_kernels, inlined

    kernels = _library_kernels()
    assert kernels and not any(inlined(k) for k in kernels)


def test_check_command_progress_and_summary(tmp_path, capsys):
    assert main(["check", "focus.matrices", "--results", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    progress = [line for line in captured.err.splitlines() if line.startswith("[")]
    assert len(progress) == 5 and progress[-1].startswith("[5/5]")
    assert captured.out.splitlines()[0].split() == ["paper", "claims", "holds", "violated",
                                                    "not-applicable", "error", "as", "expected"]
    assert "5 claims in" in captured.out and "all as expected" in captured.out
    assert main(["check", "focus.matrices", "--results", str(tmp_path), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_first_run_notice_with_an_empty_numba_cache(tmp_path):
    import os
    import subprocess
    import sys

    code = ("from flbounds.cli._progress import numba_first_run_notice as n; "
            "print(n() or 'no notice')")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "empty-cache")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300, check=True)
    assert proc.stdout.startswith("first run: ") and "not cached yet" in proc.stdout


def test_plain_lines_can_be_thinned_for_many_items():
    out = io.StringIO()
    with ProgressBar(250, "evaluations", stream=out, plain_every=100) as bar:
        for i in range(250):
            bar.advance(f"e{i}", note="best so far" if i == 7 else "")
    starts = [line.split("]")[0] for line in out.getvalue().splitlines() if line.startswith("[")]
    assert starts == ["[  8/250", "[100/250", "[200/250", "[250/250"]
    with pytest.raises(ValueError, match="plain_every"):
        ProgressBar(1, plain_every=0)


def test_resumed_claims_count_as_done_and_leave_the_eta(tmp_path):
    from flbounds.cli._progress import claims_progress
    from flbounds.ledger import select

    claims = select(["focus.matrices"])
    assert main(["check", claims[0].id, "--results", str(tmp_path), "--quiet"]) == 0
    bar = claims_progress(claims, tmp_path, "quick", resume=True, quiet=True)
    bar.close()
    assert bar.done == 1
    assert claims[0].id not in bar.eta._left and len(bar.eta._left) == len(claims) - 1
    fresh = claims_progress(claims, tmp_path, "quick", resume=False, quiet=True)
    fresh.close()
    assert fresh.done == 0 and len(fresh.eta._left) == len(claims)


def test_resumed_run_progress_starts_after_the_stored_tasks(tmp_path, capsys):
    from flbounds.ledger import select

    ids = [c.id for c in select(["focus.matrices"])]
    assert main(["check", *ids[:2], "--results", str(tmp_path), "--quiet"]) == 0
    assert main(["check", "focus.matrices", "--results", str(tmp_path), "--resume"]) == 0
    progress = [line.split("]")[0] + "]" for line in capsys.readouterr().err.splitlines()
                if line.startswith("[")]
    assert progress == ["[3/5]", "[4/5]", "[5/5]"]
