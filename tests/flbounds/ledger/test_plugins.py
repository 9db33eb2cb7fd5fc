"""Claims as plugins: a package outside flbounds registers a paper and its claims.

The end-to-end tests build the plugin guide's example package (docs/guide/plugins.md) with
pip, offline and without build isolation, into a temporary directory (``--target``), so the
environment is left as it was; the CLI runs in a subprocess that has that directory on its
path.
"""

import importlib.util
import json
import os
import re
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

import flbounds.ledger.api.papers as papers
import flbounds.ledger.api.registry as registry
import flbounds.ledger.api.results as results
from flbounds.ledger import (
    PluginLoadWarning,
    claim,
    load_all,
    paper,
)
from flbounds.ledger.api.figures import load_figures
from flbounds.ledger.api.plugins import CLAIMS_GROUP, entry_points

ROOT = Path(__file__).resolve().parents[3]
BROKEN_MODULE = '''
from flbounds.ledger import Evidence, Tolerance, claim, paper, result

paper("brokenpaper", title="Half-registered")
LEMMA = result("brokenpaper.lemma", ref="Lemma 1", title="a lemma")


@claim("brokenpaper.lemma1", ref="Lemma 1", kind="statement", statement="-",
       expected="holds", result=LEMMA)
def lemma1(*, rng):
    """Registered before the module fails."""
    return Evidence(0.0, 0.0, "==", Tolerance.exact())


raise RuntimeError("this plugin is broken on purpose")
'''


def can_build_wheels() -> bool:
    """setuptools >= 70.1 builds wheels itself; older ones need the 'wheel' package."""
    import setuptools

    major, minor = (int(p) for p in re.findall(r"\d+", setuptools.__version__)[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


def readme_files() -> dict[str, str]:
    """The files of the plugin guide's example (docs/guide/plugins.md, linked from the
    README): ``<!-- plugin:NAME -->`` + a code block."""
    text = (ROOT / "docs" / "guide" / "plugins.md").read_text(encoding="utf-8")
    found = re.findall(r"<!-- plugin:(\S+) -->\n```\w*\n(.*?)```", text, flags=re.S)
    return dict(found)


def pip_install(package: Path, target: Path) -> None:
    if not can_build_wheels():
        pytest.skip("building the plugin needs setuptools >= 70.1 (pip install -e '.[dev]')")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                           "--no-build-isolation", "--no-index", "--target", str(target),
                           str(package)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    """A directory holding the installed plugin-guide example (distribution and entry points)."""
    files = readme_files()
    assert set(files) == {"pyproject.toml", "mypaper_claims.py"}
    package = tmp_path_factory.mktemp("mypaper-claims")
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    site = tmp_path_factory.mktemp("site")
    pip_install(package, site)
    assert list(site.glob("mypaper_claims-*.dist-info/entry_points.txt"))
    return site


@pytest.fixture(scope="module")
def broken_site(tmp_path_factory):
    """A plugin whose module declares a paper and a claim, then raises."""
    package = tmp_path_factory.mktemp("broken-plugin")
    (package / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=70.1"]\n'
        'build-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "broken-plugin"\nversion = "0.1.0"\n\n'
        '[project.entry-points."flbounds.claims"]\nbroken = "broken_plugin"\n',
        encoding="utf-8")
    (package / "broken_plugin.py").write_text(BROKEN_MODULE, encoding="utf-8")
    site = tmp_path_factory.mktemp("broken-site")
    pip_install(package, site)
    return site


def cli(*args, sites=(), cwd=None):
    """``python -m flbounds ARGS`` with ``sites`` and this source tree on the path."""
    path = [str(s) for s in sites] + [str(ROOT)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path + [os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "flbounds", *args], capture_output=True,
                          text=True, timeout=300, env=env, cwd=cwd)



def loaded_plugin(monkeypatch, tmp_path, entry, module, source):
    """Write ``source`` as ``module``, register it as the only plugin ``entry`` of an empty
    registry (:func:`empty_registry`) and load it: ``(table, module)``; the caller pops
    ``module`` from ``sys.modules`` afterwards."""
    sys.modules.pop(module, None)  # a fresh import registers the claims
    (tmp_path / f"{module}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    empty_registry(monkeypatch, [(entry, module)])
    return registry.load_all(), importlib.import_module(module)


def empty_registry(monkeypatch, plugins):
    """An empty claim registry whose plugins are ``plugins``, ``[(entry name, module)]``:
    fake entry points of the claims group, for this test only."""
    monkeypatch.setattr(registry, "_LOADED", False)
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_FAILED", [])
    monkeypatch.setattr(papers, "_PAPERS", {})
    monkeypatch.setattr(papers, "_DECLARED_BY", {})
    monkeypatch.setattr(results, "_RESULTS", {})
    fake = [EntryPoint(name, module, CLAIMS_GROUP) for name, module in plugins]
    monkeypatch.setattr(registry, "entry_points", lambda group: fake)

def test_plugin_claims_list_check_show(plugin_site, tmp_path):
    listed = cli("list", "mypaper", sites=[plugin_site], cwd=tmp_path)
    assert listed.returncode == 0 and listed.stderr == ""
    assert listed.stdout.startswith(
        "mypaper: A. Author, 2026. A note on gradient steps. arXiv:2601.00001.\n")
    assert "mypaper.lemma1.rate" in listed.stdout
    assert "mypaper.lemma1.large_step" in listed.stdout

    out = tmp_path / "run.json"
    checked = cli("check", "mypaper", "--results", str(tmp_path / "r"), "--json", str(out),
                  "--quiet", sites=[plugin_site], cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    rows = {r["id"]: r for r in json.loads(out.read_text())}
    assert all(r["verdict"] == r["expected"] for r in rows.values())
    rate, large = rows["mypaper.lemma1.rate"], rows["mypaper.lemma1.large_step"]
    assert rate["verdict"] == "holds" and rate["paper"] == "arXiv:2601.00001"
    # the plugin's own version beside flbounds' (installed, not a checkout: no commit)
    assert rate["versions"]["mypaper-claims"] == "0.1.0" and "flbounds" in rate["versions"]
    assert not any(k.endswith(" commit") for k in rate["versions"])
    assert rate["hypotheses"] == {"step: eta <= 1/L": True}
    # f grew (4 > 1): a counterexample, but on an instance outside the lemma's hypothesis
    assert large["measured"] > large["theoretical"]
    assert large["verdict"] == "not-applicable"
    assert large["hypotheses"] == {"step: eta <= 1/L": False}
    assert large["reason"].startswith("outside the result's hypotheses: step: eta <= 1/L fails")

    shown = cli("show", "mypaper.lemma1.rate", "--results", str(tmp_path / "r"),
                sites=[plugin_site], cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"function +\S*mypaper_claims\.py:\d+", shown.stdout)
    assert "holds (as expected)" in shown.stdout
    assert "4 n eps" not in shown.stdout and "two roundings of numbers <= 1" in shown.stdout
    assert "step: eta <= 1/L: met" in shown.stdout
    assert "parts       mypaper.lemma1:rate" in shown.stdout

    result = cli("show", "mypaper.lemma1", "--results", str(tmp_path / "r"),
                 sites=[plugin_site], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    parts = result.stdout.split("\nparts\n", 1)[1].split("\n\n", 1)[0]
    assert "rate     |x' - x*| <= (1 - eta mu)|x - x*|" in parts
    assert "descent  f(x') <= f(x)" in parts
    claims = result.stdout.split("claims per part", 1)[1]
    assert "  rate\n    mypaper.lemma1.rate" in claims
    assert "  descent\n    mypaper.lemma1.large_step" in claims
    assert "latest not-applicable (as expected" in claims
    assert "  mypaper.lemma1  (Lemma 1): contraction of |x - x*| per step" in result.stdout

    calc = cli("bound", "mypaper.lemma1", "mu=0.5", "L=2", "step=1.5", sites=[plugin_site],
               cwd=tmp_path)
    assert calc.returncode == 0, calc.stderr
    assert "FAILS          step: eta <= 1/L" in calc.stdout
    assert "WARNING:     step 1.5 is outside the step condition of Lemma 1" in calc.stdout

    reported = cli("report", "--results", str(tmp_path / "r"), sites=[plugin_site], cwd=tmp_path)
    assert reported.returncode == 0, reported.stderr
    ledger = (tmp_path / "r" / "ledger.md").read_text(encoding="utf-8")
    assert "mypaper: A note on gradient steps" in ledger


def test_plugin_claims_join_the_builtin_ones(plugin_site, tmp_path):
    proc = cli("list", "--format", "json", sites=[plugin_site], cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    papers_listed = {r["paper"] for r in json.loads(proc.stdout)}
    assert {"mypaper", "safari", "focus"} <= papers_listed


def test_broken_plugin_is_one_warning_and_absent(plugin_site, broken_site, tmp_path):
    proc = cli("list", sites=[plugin_site, broken_site], cwd=tmp_path)
    assert proc.returncode == 0
    warning = proc.stderr.strip()
    assert warning.count("\n") == 0 and warning.startswith("flbounds: warning: plugin 'broken'")
    assert "broken_plugin" in warning and "RuntimeError" in warning
    assert "mypaper.lemma1.rate" in proc.stdout and "brokenpaper" not in proc.stdout
    proc = cli("check", "brokenpaper", sites=[plugin_site, broken_site], cwd=tmp_path)
    assert proc.returncode == 2 and "no claim matches pattern 'brokenpaper'" in proc.stderr
    # the other plugins' claims still run, but the run does not pass as a success
    proc = cli("check", "mypaper", "--results", str(tmp_path / "r"),
               sites=[plugin_site, broken_site], cwd=tmp_path)
    assert proc.returncode == 1
    assert "1 claim plugin(s) failed to load, their claims were not checked: broken" in proc.stdout


SPAWNED_WORKER = """
from flbounds.ledger.engine.workers import WorkerPool
pool = WorkerPool(1, fork=False)   # a fresh interpreter, as a replacement worker is
pool.start()
pool.submit(("mypaper.lemma1.rate", "quick", 0))
replies = []
while not replies:
    replies = pool.wait(None)
pool.close()
print(replies[0][1]["row"]["verdict"])
"""


def test_broken_plugin_in_a_spawned_worker_is_one_line(plugin_site, broken_site, tmp_path):
    path = [str(plugin_site), str(broken_site), str(ROOT)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path + [os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", SPAWNED_WORKER], capture_output=True,
                          text=True, timeout=300, env=env, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "holds", proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "_load_plugin" not in proc.stderr, proc.stderr
    assert re.match(r"flbounds: warning: worker \d+: plugin 'broken' .*RuntimeError", lines[0])


def test_builtin_plugins_load_without_warnings():
    proc = cli("list", "safari.thm1")
    assert proc.returncode == 0 and proc.stderr == "" and "safari.thm1" in proc.stdout


def test_source_tree_registers_its_own_plugins():
    names = {(ep.name, ep.value) for ep in entry_points(CLAIMS_GROUP)}
    assert {("verify", "verify"), ("paper_checks", "paper_checks")} <= names
    assert {c.split(".", 1)[0] for c in load_all()} == {
        "safari", "fedals", "focus", "kvib", "subtrunc"}


def test_failed_plugin_is_rolled_back(monkeypatch, tmp_path):
    (tmp_path / "half_plugin.py").write_text(BROKEN_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    empty_registry(monkeypatch, [("half", "half_plugin")])
    with pytest.warns(PluginLoadWarning, match=r"plugin 'half' .*RuntimeError.*claims are absent"):
        table = registry.load_all()
    assert table == {} and papers._PAPERS == {} and results._RESULTS == {}


def test_failed_plugin_leaves_the_plugin_it_builds_on(monkeypatch, tmp_path):
    (tmp_path / "base_plugin.py").write_text(
        BROKEN_MODULE.replace("brokenpaper", "basepaper").split("raise RuntimeError")[0],
        encoding="utf-8")
    (tmp_path / "dep_plugin.py").write_text(
        "import base_plugin  # noqa: F401\n" + BROKEN_MODULE.replace(
            'paper("brokenpaper", title="Half-registered")', "").replace(
            'LEMMA = result("brokenpaper.lemma", ref="Lemma 1", title="a lemma")',
            "from base_plugin import LEMMA").replace(
            "brokenpaper.lemma1", "basepaper.lemma2"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    empty_registry(monkeypatch, [("a_dep", "dep_plugin"), ("b_base", "base_plugin")])
    with pytest.warns(PluginLoadWarning, match=r"plugin 'a_dep' .*RuntimeError"):
        table = registry.load_all()
    assert list(table) == ["basepaper.lemma1"] and list(papers._PAPERS) == ["basepaper"]
    assert list(results._RESULTS) == ["basepaper.lemma"]


def test_claim_needs_a_declared_paper():
    with pytest.raises(ValueError, match=r"paper 'nosuchpaper' is not declared.*paper\("):
        claim("nosuchpaper.lemma1", ref="-", kind="statement", statement="-", expected="holds")
    with pytest.raises(ValueError, match="dotted"):
        claim("focus", ref="-", kind="statement", statement="-", expected="holds")


def test_paper_declaration_rules(monkeypatch):
    monkeypatch.setattr(papers, "_PAPERS", {})
    monkeypatch.setattr(papers, "_DECLARED_BY", {})
    first = paper("mine", title="T", source="s")
    assert paper("mine", title="T", source="s") == first and first[1] == "T"
    with pytest.raises(ValueError, match="already declared differently"):
        paper("mine", title="Another title")
    for bad in ("Mine", "my.paper", "", "1paper"):
        with pytest.raises(ValueError, match="paper key"):
            paper(bad, title="T")
    with pytest.raises(ValueError, match="title"):
        paper("other", title="  ")


def test_figures_are_found_through_their_entry_point():
    import figures

    table = load_figures()
    expected = sorted(p.stem for p in Path(figures.__path__[0]).glob("[!_]*.py"))
    assert list(table) == expected
    assert all(callable(module.main) for module in table.values())


def test_figure_entry_points_name_a_module_or_a_package(monkeypatch, tmp_path):
    import flbounds.ledger.api.figures as figures_mod

    (tmp_path / "one_figure.py").write_text(
        "def compute():\n    return {}\n\n\ndef plot(data):\n    return None\n\n\n"
        "def main(argv=None):\n    return []\n", encoding="utf-8")
    (tmp_path / "bad_figure.py").write_text("import no_such_module_here\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    fake = [EntryPoint("my_fig", "one_figure", "flbounds.figures"),
            EntryPoint("bad", "bad_figure", "flbounds.figures"),
            EntryPoint("figures", "figures", "flbounds.figures")]
    monkeypatch.setattr(figures_mod, "entry_points", lambda group: fake)
    with pytest.warns(PluginLoadWarning, match=r"plugin 'bad' .*ModuleNotFoundError"):
        table = figures_mod.load_figures()
    assert table["my_fig"].__name__ == "one_figure" and "bad" not in table
    assert "focus_fig4" in table and "figures" not in table
    with pytest.warns(PluginLoadWarning):
        chosen = figures_mod.select_figures(["my_"])
    assert list(chosen) == ["my_fig"]


def test_rows_record_a_plugin_checkouts_commit(monkeypatch, tmp_path):
    """A plugin run from its own git checkout: its rows record that commit beside flbounds'
    (the built-in plugins share flbounds' checkout: nothing added)."""
    from flbounds.ledger.engine import tasks

    repo = tmp_path / "checkout"
    repo.mkdir()
    (repo / "gitplug_mod.py").write_text("X = 1\n", encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "gitplug_mod.py"], ["commit", "-qm", "plugin"]):
        subprocess.run(git + args, check=True, capture_output=True)
    head = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    monkeypatch.syspath_prepend(str(repo))
    fake = EntryPoint("gitplug", "gitplug_mod", CLAIMS_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [fake])
    assert tasks.plugin_versions.__wrapped__("gitplug_mod") == {"gitplug commit": head}
    monkeypatch.undo()
    assert tasks.plugin_versions.__wrapped__("verify.focus.lemma4") == {}


def test_frozen_plugin_roots_give_the_same_versions(monkeypatch):
    """A pool worker reads the entry points once: each module's versions are unchanged."""
    from flbounds.ledger.engine import tasks

    monkeypatch.setattr(tasks, "_plugin_roots", None)
    modules = ["verify.focus.lemma4.counterexample", "paper_checks", "no_such_plugin.mod"]
    before = [tasks._module_versions(m) for m in modules]
    tasks.freeze_plugin_roots()
    assert tasks._plugin_roots
    assert [tasks._module_versions(m) for m in modules] == before
    assert before == [tasks.plugin_versions.__wrapped__(m) for m in modules]
