"""Figure plugins: the entry-point group ``flbounds.figures``.

An entry point names a figure module (``compute()``, ``plot()``, ``main(argv)``), which is
the figure of that name, or a package, whose public modules (names not starting with ``_``)
are figures named after the module::

    [project.entry-points."flbounds.figures"]
    my_fig = "mypkg.figure"      # one figure, 'my_fig'
    mypkg = "mypkg.figures"      # every public module of the package
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from .plugins import FIGURES_GROUP, entry_point_module, entry_points, warn_failed


def _figures_of(ep) -> dict[str, ModuleType]:
    module = importlib.import_module(entry_point_module(ep))
    if callable(getattr(module, "main", None)):
        return {ep.name: module}
    if not hasattr(module, "__path__"):
        raise ImportError(f"{module.__name__} has no main() and is not a package")
    names = sorted(m.name for m in pkgutil.iter_modules(module.__path__)
                   if not m.name.startswith("_"))
    return {name: importlib.import_module(f"{module.__name__}.{name}") for name in names}


def load_figures() -> dict[str, ModuleType]:
    """Figure name -> module, for every registered figure (sorted by name).

    A registration that fails to import is left out as a whole, with a
    :class:`~flbounds.ledger.api.plugins.PluginLoadWarning` naming its entry point.
    """
    table: dict[str, ModuleType] = {}
    for ep in entry_points(FIGURES_GROUP):
        try:
            found = _figures_of(ep)
        except Exception as exc:  # a broken plugin must not take the others down
            warn_failed(ep, exc, "figures")
            continue
        for name, module in found.items():
            table.setdefault(name, module)
    return dict(sorted(table.items()))


def select_figures(patterns=()) -> dict[str, ModuleType]:
    """Figures whose name equals or starts with one of ``patterns`` (all when none given).

    Raises ``ValueError`` naming the first pattern that matches no figure.
    """
    table = load_figures()
    if not patterns:
        return table
    for pattern in patterns:
        if not any(name.startswith(pattern) for name in table):
            raise ValueError(f"no figure matches {pattern!r} (known: {', '.join(table)})")
    return {n: m for n, m in table.items() if any(n.startswith(p) for p in patterns)}
