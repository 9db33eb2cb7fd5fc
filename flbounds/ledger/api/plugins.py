"""Plugin discovery: the entry-point groups ``flbounds.claims`` and ``flbounds.figures``.

A package registers a module (or a package) in ``pyproject.toml``::

    [project.entry-points."flbounds.claims"]
    mypaper = "mypkg.claims"

Entry points come from the installed distributions' metadata. When ``flbounds`` itself is
imported from a source tree (a checkout with its ``pyproject.toml`` beside the package), that
file's entry points stand in for the installed ``flbounds`` distribution's, which may be
stale or belong to another checkout. A plugin that fails to import is reported by a
:class:`PluginLoadWarning` naming the entry point; it never stops the others from loading.
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import pkgutil
import tomllib
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

CLAIMS_GROUP = "flbounds.claims"
FIGURES_GROUP = "flbounds.figures"
_PROJECT = "flbounds"


class PluginLoadWarning(UserWarning):
    """A registered plugin could not be imported; what it registers is absent."""


#: what the plugins registered, by table ("claims", "bounds"), each as its loader (import
#: every claim plugin once, return the table), installed by the module that owns the table:
#: a module that reads a table owned by one that imports it (results lists its claims and its
#: printed bounds; the registry and the bounds import results) reads it here
_TABLES: dict[str, Callable[[], dict]] = {}


def provide(name: str, load: Callable[[], dict]) -> None:
    """Install ``load`` as the loader of table ``name``."""
    _TABLES[name] = load


def table(name: str) -> dict:
    """Import every claim plugin once (registering its papers, results, bounds and claims);
    return table ``name`` (``"claims"``: claim id -> claim; ``"bounds"``: bound id -> bound)."""
    if name not in _TABLES:
        raise RuntimeError(f"no {name!r} table: flbounds.ledger.api is not imported")
    return _TABLES[name]()


def load_claims() -> dict:
    """The registered claims by id, every claim plugin imported (:func:`table`)."""
    return table("claims")


def source_tree_pyproject() -> Path | None:
    """``pyproject.toml`` of the checkout ``flbounds`` was imported from, if it is one."""
    import flbounds

    candidate = Path(flbounds.__file__).resolve().parent.parent / "pyproject.toml"
    if not candidate.is_file():
        return None
    try:
        project = tomllib.loads(candidate.read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return candidate if project.get("name") == _PROJECT else None


def _source_tree_entry_points(pyproject: Path, group: str) -> list[metadata.EntryPoint]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    table = project.get("entry-points", {}).get(group, {})
    return [metadata.EntryPoint(name, value, group) for name, value in table.items()]


def entry_points(group: str) -> list[metadata.EntryPoint]:
    """The entry points of ``group``, sorted by name and value, without duplicates."""
    pyproject = source_tree_pyproject()
    found = []
    for ep in metadata.entry_points(group=group):
        dist = getattr(ep, "dist", None)
        if pyproject is not None and dist is not None and dist.name == _PROJECT:
            continue  # the checkout's own pyproject speaks for this project
        found.append(ep)
    if pyproject is not None:
        found += _source_tree_entry_points(pyproject, group)
    unique = {(ep.name, ep.value): ep for ep in reversed(found)}  # the first found wins
    return [unique[k] for k in sorted(unique)]


def describe(ep: metadata.EntryPoint) -> str:
    """``'name' (group: name = value, from dist version)`` for messages."""
    dist = getattr(ep, "dist", None)
    origin = f", from {dist.name} {dist.version}" if dist is not None else ""
    return f"{ep.name!r} ({ep.group}: {ep.name} = {ep.value}{origin})"


def warn_failed(ep: metadata.EntryPoint, exc: BaseException, what: str) -> None:
    """One-line warning: which entry point failed, why, and what is therefore absent."""
    reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
    warnings.warn(f"plugin {describe(ep)} failed to load: {reason}; its {what} are absent",
                  PluginLoadWarning, stacklevel=3)


def import_tree(module_name: str) -> Iterator[ModuleType]:
    """Import ``module_name`` and, for a package, every module below it (in name order).

    Any exception raised while importing propagates (none is silently skipped).
    """
    module = importlib.import_module(module_name)
    yield module
    if hasattr(module, "__path__"):
        def reraise(name):
            raise ImportError(f"cannot import package {name}")

        infos = pkgutil.walk_packages(module.__path__, prefix=f"{module.__name__}.",
                                      onerror=reraise)
        for info in infos:
            yield importlib.import_module(info.name)


def entry_point_module(ep: metadata.EntryPoint) -> str:
    """The module an entry point names (its ``:attr`` part, if any, is not used)."""
    return ep.value.split(":", 1)[0].strip()
