"""Every figure script imports and has the compute / plot / main interface."""

import importlib
import pkgutil

import pytest

import figures

NAMES = sorted(m.name for m in pkgutil.iter_modules(figures.__path__) if not m.name.startswith("_"))


@pytest.mark.parametrize("name", NAMES)
def test_figure_module_interface(name):
    module = importlib.import_module(f"figures.{name}")
    for attr in ("compute", "plot", "main"):
        assert callable(getattr(module, attr, None)), f"figures.{name} lacks {attr}()"


def test_there_are_figures():
    assert len(NAMES) >= 5
