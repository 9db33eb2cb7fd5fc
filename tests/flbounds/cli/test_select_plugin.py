"""Selecting a plugin's claims by its name when it declares several papers."""

from importlib.metadata import EntryPoint

import pytest

import flbounds.ledger.api.registry as registry
from flbounds.cli import main
from flbounds.ledger import Evidence, Tolerance, claim, paper, result
from flbounds.ledger.api.plugins import CLAIMS_GROUP


@pytest.fixture
def two_papers(ledger_sandbox, monkeypatch):
    """One plugin (this module, entry point 'twopapers') declaring two papers."""
    paper("otherpaper", title="Another paper of the same plugin")
    for key in ("testpaper", "otherpaper"):
        res = result(f"{key}.lemma1", ref="Lemma 1", title="a lemma", parts={"a": "x <= 1"})

        @claim(f"{key}.lemma1.a", ref="Lemma 1", kind="statement", statement="-",
               expected="holds", result=res, parts=("a",))
        def check(*, rng):
            return Evidence(0.5, 1.0, "<=", Tolerance.exact())

    fake = EntryPoint("twopapers", __name__, CLAIMS_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [fake])


def _listed(capsys, *patterns):
    assert main(["list", *patterns, "--format", "csv"]) == 0
    return [line.split(",")[0] for line in capsys.readouterr().out.splitlines()[1:]]


def test_list_selects_a_plugins_claims_by_its_name(two_papers, capsys):
    both = ["otherpaper.lemma1.a", "testpaper.lemma1.a"]
    assert _listed(capsys, "twopapers") == both                  # the entry point's name
    assert _listed(capsys, __name__) == both                     # the module it names
    assert _listed(capsys, "otherpaper") == ["otherpaper.lemma1.a"]   # a paper key as before
    assert _listed(capsys, "twopapers", "otherpaper") == both
    assert main(["list", "nosuchplugin"]) == 2
    assert "no claim matches pattern 'nosuchplugin'" in capsys.readouterr().err
