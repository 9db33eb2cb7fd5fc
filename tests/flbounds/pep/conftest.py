"""Fixtures shared by the PEP tests."""

import pytest

from flbounds.pep import sdp


@pytest.fixture
def no_store(monkeypatch):
    """A monkeypatch with the solve store switched off, so every solve runs afresh."""
    monkeypatch.delenv(sdp.CACHE_ENV, raising=False)
    return monkeypatch
