"""The plugin guide's PEP example (docs/guide/plugins.md, "A new algorithm's worst case, from
a plugin") runs as printed.

Its files are the guide's ``<!-- pep-plugin:NAME -->`` code blocks: the package
(``pyproject.toml``, ``fedavgm_claims.py``) is built with pip into a temporary directory, as
``tests/flbounds/ledger/test_plugins.py`` builds the guide's first example; the listed
commands run through the CLI with that directory on the path; the Python session prints
exactly the guide's output block. In process, the claim holds, and planted bugs in the
described algorithm or in the analytic value make it ``violated``.
"""

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.flbounds.ledger.test_plugins import cli, loaded_plugin, pip_install

ROOT = Path(__file__).resolve().parents[3]
CLAIM = "momnote.lemma1.rate"


def guide_blocks() -> dict[str, str]:
    """``NAME -> text`` of the guide's ``<!-- pep-plugin:NAME -->`` code blocks."""
    text = (ROOT / "docs" / "guide" / "plugins.md").read_text(encoding="utf-8")
    return dict(re.findall(r"<!-- pep-plugin:(\S+) -->\n```\w*\n(.*?)```", text, flags=re.S))


def test_the_guide_has_the_blocks_this_test_runs():
    assert set(guide_blocks()) == {"pyproject.toml", "fedavgm_claims.py", "commands",
                                   "session.py", "output"}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A directory holding the installed package of the guide's PEP example."""
    blocks = guide_blocks()
    package = tmp_path_factory.mktemp("fedavgm-claims")
    for name in ("pyproject.toml", "fedavgm_claims.py"):
        (package / name).write_text(blocks[name], encoding="utf-8")
    site = tmp_path_factory.mktemp("site")
    pip_install(package, site)
    entry = next(site.glob("fedavgm_claims-*.dist-info/entry_points.txt")).read_text()
    assert "[flbounds.claims]" in entry and "momnote = fedavgm_claims" in entry
    return site


def test_the_guide_commands_run_and_the_claim_holds(installed, tmp_path):
    lines = [ln.split("#")[0].split() for ln in guide_blocks()["commands"].splitlines()]
    for words in filter(None, lines):
        assert words[0] == "flbounds"
        proc = cli(*words[1:], sites=[installed], cwd=tmp_path)
        assert proc.returncode == 0, " ".join(words) + "\n" + proc.stdout + proc.stderr
        if words[1] == "list":
            assert CLAIM in proc.stdout
        if words[1] == "show":
            assert "holds (as expected)" in proc.stdout


def test_the_guide_session_prints_the_guide_output(installed, tmp_path):
    import os

    blocks = guide_blocks()
    (tmp_path / "session.py").write_text(blocks["session.py"], encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(installed), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "session.py"], capture_output=True, text=True,
                          timeout=600, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == blocks["output"]


@pytest.fixture
def plugin(monkeypatch, tmp_path):
    """The guide's module loaded through a fake entry point into an empty registry."""
    yield loaded_plugin(monkeypatch, tmp_path, "momnote", "fedavgm_claims",
                        guide_blocks()["fedavgm_claims.py"])
    sys.modules.pop("fedavgm_claims", None)


def test_the_claim_holds_and_is_a_contraction(plugin):
    table, module = plugin
    assert list(table) == [CLAIM]
    row = table[CLAIM].check(seed=0, profile="quick")
    assert row.verdict == "holds", row
    assert row.measured < 1
    assert row.measured == pytest.approx(module.extremal(1.0, 4.0, 0.2, 0.2, 1.0, 0.25)[0],
                                         abs=1e-6)


def test_a_server_without_momentum_is_violated(plugin, monkeypatch):
    """Planted bug in the described algorithm: the server drops beta m (m+ = delta)."""
    from flbounds import pep

    table, module = plugin
    right = module.fedavgm

    def wrong(local_steps, step, beta):
        server = pep.Server(lambda s, agg: {"m": agg["delta"], "x": s["x"] + agg["delta"]},
                            "momentum dropped")
        return dataclasses.replace(right(local_steps, step, beta), server=server)

    monkeypatch.setattr(module, "fedavgm", wrong)
    assert table[CLAIM].check(seed=0, profile="quick").verdict == "violated"


def test_an_analytic_value_without_empty_rounds_is_violated(plugin, monkeypatch):
    """Planted bug in the derivation: the empty round (probability 1/4) is left out."""
    table, module = plugin
    right = module.extremal
    monkeypatch.setattr(module, "extremal", lambda *a, p0: right(*a, p0=0.0))
    assert table[CLAIM].check(seed=0, profile="quick").verdict == "violated"
