"""Fixtures shared by several test folders."""

import os
import sys

import pytest


@pytest.fixture
def store(tmp_path):
    """An empty results store in the test's temporary directory."""
    from flbounds.ledger import ResultStore

    return ResultStore(tmp_path)


@pytest.fixture
def child_env():
    """Environment of a child ``python -m flbounds``: this process's import path, so the
    child runs the same tree."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
