"""Output paths: checked before any work, written through symlinks and into devices and
pipes, replaced atomically only when they are regular files, no temporary file left."""

import json
import os
import subprocess
import sys

import pytest

from flbounds.cli import main
from flbounds.ledger.engine import outputs
from flbounds.ledger.engine.outputs import OutputError, output_file, output_folder, write_text

FAST = "focus.matrices.pull_row_stochastic"


def _one_line_usage_error(capsys, option):
    err = capsys.readouterr().err
    assert err.startswith(f"flbounds: error: {option}") and err.strip().count("\n") == 0, err


@pytest.mark.parametrize("make, option", [
    (lambda t: ["check", FAST, "--json", str(t)], "--json"),
    (lambda t: ["check", FAST, "--json", str(t / "file.txt" / "a.json")], "--json"),
    (lambda t: ["check", FAST, "--json", str(t / "newdir") + os.sep], "--json"),
    (lambda t: ["check", FAST, "--results", str(t / "file.txt")], "--results"),
    (lambda t: ["check", FAST, "--results", str(t / "file.txt" / "sub")], "--results"),
    (lambda t: ["report", "--results", str(t), "--out", str(t / "file.txt")], "--out"),
    (lambda t: ["figures", "--out", str(t / "file.txt" / "figs")], "--out"),
])
def test_bad_output_paths_are_usage_errors_before_any_work(tmp_path, capsys, make, option):
    (tmp_path / "file.txt").write_text("keep")
    assert main(make(tmp_path)) == 2
    _one_line_usage_error(capsys, option)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]   # nothing written
    assert (tmp_path / "file.txt").read_text() == "keep"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_no_write_permission_is_a_usage_error(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    assert main(["check", FAST, "--json", str(locked / "a.json")]) == 2
    _one_line_usage_error(capsys, "--json")
    assert main(["check", FAST, "--results", str(locked / "r")]) == 2
    _one_line_usage_error(capsys, "--results")


def test_read_only_file_system_is_caught_even_for_root(tmp_path):
    if not os.path.isdir("/proc/self"):
        pytest.skip("needs /proc")
    with pytest.raises(OutputError, match="--json"):
        output_file("/proc/self/flbounds.json", "--json")
    with pytest.raises(OutputError, match="--out"):
        output_folder("/proc/self/flbounds-out", "--out")


def test_symlink_is_written_through(tmp_path):
    target = tmp_path / "target.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_text(output_file(link, "--json"), "new")
    assert link.is_symlink() and target.read_text() == "new"
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "later.json")
    write_text(output_file(dangling, "--json"), "made")
    assert dangling.is_symlink() and (tmp_path / "later.json").read_text() == "made"


def test_devices_and_pipes_are_streamed_not_replaced(tmp_path):
    assert output_file("/dev/null", "--json").kind == "stream"
    write_text(output_file("/dev/null", "--json"), "x")
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen([sys.executable, "-c",
                               f"print(open({str(fifo)!r}).read(), end='')"],
                              stdout=subprocess.PIPE, text=True)
    write_text(output_file(fifo, "--json"), "through the pipe")
    assert reader.communicate(timeout=60)[0] == "through the pipe"
    assert fifo.exists() and not fifo.is_file()


def test_missing_folders_are_made_for_every_output_option(tmp_path, capsys):
    """--json follows the rule of --results and --out: missing folders are created."""
    out = tmp_path / "new" / "deeper" / "run.json"
    assert main(["check", FAST, "--results", str(tmp_path / "r" / "s"), "--json", str(out),
                 "--quiet"]) == 0
    assert [r["id"] for r in json.loads(out.read_text())] == [FAST]
    assert (tmp_path / "r" / "s" / "results.sqlite").is_file()
    assert main(["report", "--results", str(tmp_path / "r" / "s"),
                 "--out", str(tmp_path / "html" / "x")]) == 0
    assert (tmp_path / "html" / "x" / "ledger.html").is_file()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_device_is_refused_before_any_work(tmp_path, capsys):
    assert main(["check", FAST, "--json", "/dev/full", "--results", str(tmp_path / "r")]) == 2
    _one_line_usage_error(capsys, "--json: cannot write /dev/full")
    assert not (tmp_path / "r").exists()        # nothing ran, nothing was stored


def test_a_failed_json_write_after_the_run_still_prints_the_summary(tmp_path, capsys,
                                                                     monkeypatch):
    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs.os, "replace", full_disk)
    assert main(["check", FAST, "--json", str(tmp_path / "a.json"), "--results",
                 str(tmp_path / "r"), "--quiet"]) == 2
    captured = capsys.readouterr()
    assert "1 claims in" in captured.out and "all as expected" in captured.out
    assert captured.err.startswith("flbounds: error: --json: cannot write")
    assert "the results are stored in" in captured.err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_device_fails_in_one_line_and_is_kept(tmp_path):
    with pytest.raises(OutputError, match="--json: cannot write /dev/full"):
        write_text(output_file("/dev/full", "--json"), "x" * 100_000)
    assert not os.path.isfile("/dev/full")


def test_a_failed_replace_leaves_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "a.json"
    target.write_text("old")
    os.chmod(target, 0o640)

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs.os, "replace", broken_replace)
    with pytest.raises(OutputError, match="--json: cannot write"):
        write_text(output_file(target, "--json"), "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]
    assert target.read_text() == "old"
    monkeypatch.undo()
    write_text(output_file(target, "--json"), "new")
    assert target.read_text() == "new" and (os.stat(target).st_mode & 0o777) == 0o640


def test_json_to_stdout_keeps_stdout_pure(tmp_path, child_env):
    for dest in ("-", "/dev/stdout"):
        proc = subprocess.run([sys.executable, "-m", "flbounds", "check", FAST, "--json", dest,
                               "--results", str(tmp_path), "--timeout", "0", "--quiet"],
                              capture_output=True, text=True, env=child_env, timeout=600)
        assert proc.returncode == 0, proc.stderr
        rows = json.loads(proc.stdout)
        assert [r["id"] for r in rows] == [FAST] and "1 claims" in proc.stderr
