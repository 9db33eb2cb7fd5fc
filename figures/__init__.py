"""Figure scripts: ``figures/<name>.py`` with ``compute()``, ``plot()`` and ``main(argv)``.

Every public module of this package is a figure named after the module; ``flbounds figures``
selects them by name or prefix (``flbounds figures focus`` draws every ``focus_*`` figure).
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def available() -> dict[str, ModuleType]:
    """Figure name -> module, for every public module of this package."""
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
    return {name: importlib.import_module(f"{__name__}.{name}") for name in sorted(names)}


def select(patterns=()) -> dict[str, ModuleType]:
    """Figures whose name equals or starts with one of ``patterns`` (all when none given).

    Raises ``ValueError`` naming the first pattern that matches no figure.
    """
    table = available()
    if not patterns:
        return table
    for pattern in patterns:
        if not any(name.startswith(pattern) for name in table):
            raise ValueError(f"no figure matches {pattern!r} (known: {', '.join(table)})")
    return {n: m for n, m in table.items() if any(n.startswith(p) for p in patterns)}
