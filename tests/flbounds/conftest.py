"""Fixtures of the library's tests."""

import pytest


@pytest.fixture
def ledger_sandbox(monkeypatch):
    """Copies of the paper, result, claim and bound registries, restored afterwards, with the
    plugins marked loaded: what a test declares (under the paper key ``testpaper``, declared
    here) is gone after it, and no plugin is imported into the copies."""
    import flbounds.ledger.api.bounds as bounds
    import flbounds.ledger.api.papers as papers
    import flbounds.ledger.api.registry as registry
    import flbounds.ledger.api.results as results
    from flbounds.ledger import paper

    monkeypatch.setattr(papers, "_PAPERS", dict(papers._PAPERS))
    monkeypatch.setattr(papers, "_DECLARED_BY", dict(papers._DECLARED_BY))
    monkeypatch.setattr(results, "_RESULTS", dict(results._RESULTS))
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(bounds, "_BOUNDS", dict(bounds._BOUNDS))
    monkeypatch.setattr(registry, "_LOADED", True)
    return paper("testpaper", title="A paper the tests declare", source="arXiv:0000.00000",
                 reference="T. Tester, 2026")
