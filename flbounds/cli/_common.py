"""Shared pieces of the command line: the one-line usage error, argument types, defaults."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

DEFAULT_RESULTS = Path("flbounds-results")
#: help texts of the options several commands share
PROFILE_HELP = "quick: CI-sized instances, minutes for the whole ledger; full: paper-sized"
SEED_HELP = "master seed of the random instances (default: 0); same seed, same results"
WORKERS_HELP = "worker processes on this machine (default: 1)"
RESULTS_HELP = f"results store folder (default: {DEFAULT_RESULTS})"


class UsageError(Exception):
    """Bad command-line input: reported in one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line instead of argparse's usage block
        raise UsageError(message)


_SHOW_WARNING = warnings.showwarning


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A plugin that failed to load: one line on stderr; other warnings as usual."""
    from flbounds.ledger.api.plugins import PluginLoadWarning

    if issubclass(category, PluginLoadWarning):
        print(f"flbounds: warning: {message}", file=sys.stderr)
    else:
        _SHOW_WARNING(message, category, filename, lineno, file, line)


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def aligned(head, rows, *, right=()) -> list[str]:
    """A header row, a rule and ``rows`` in columns as wide as their widest cell (the columns
    numbered in ``right`` aligned right); trailing blanks dropped."""
    cells = [tuple(str(c) for c in head), *(tuple(str(c) for c in r) for r in rows)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]

    def line(row):
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip()

    return [line(cells[0]), line(tuple("-" * w for w in widths)), *map(line, cells[1:])]


def results_store(directory, *, write: bool = False):
    """The :class:`~flbounds.ledger.ResultStore` in ``directory``, checked before any work:
    a damaged store (or, with ``write``, one this run cannot write) is a usage error with the
    way out, the same for every command."""
    from flbounds.ledger import ResultStore
    from flbounds.ledger.engine.store import StoreError

    store = ResultStore(directory)
    try:
        store.check_usable() if write else store.check_readable()
    except StoreError as exc:
        raise UsageError(f"--results: {exc}") from None
    return store


def select_claims(patterns):
    """The claims matching ``patterns``: claim ids, dotted prefixes, globs, and the name of a
    claim plugin (its entry point, module or distribution: every claim it registers, of
    every paper it declares); an unmatched pattern is a usage error."""
    from flbounds.ledger import select
    from flbounds.ledger.api.registry import load_all, matches

    table = load_all()
    plugins = plugin_claims(table) if patterns else {}
    others = [p for p in patterns if p not in plugins]
    try:
        select(others) if others else None   # raises naming a pattern that matches nothing
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not patterns:
        return list(table.values())
    chosen = set().union(*(plugins.get(p, ()) for p in patterns))
    return [c for cid, c in table.items()
            if cid in chosen or any(matches(cid, p) for p in patterns)]


def plugin_claims(table) -> dict[str, set[str]]:
    """Claim ids by the names of the plugin that registered them: its entry point's name,
    the module it names and its distribution's name (``-`` and ``_`` alike)."""
    from flbounds.ledger.api import registry
    from flbounds.ledger.api.plugins import CLAIMS_GROUP, entry_point_module

    out: dict[str, set[str]] = {}
    for ep in registry.entry_points(CLAIMS_GROUP):
        root = entry_point_module(ep)
        ids = {cid for cid, c in table.items()
               if c.module == root or c.module.startswith(root + ".")}
        dist = getattr(ep, "dist", None)
        names = {ep.name, root} | ({dist.name, dist.name.replace("-", "_")} if dist else set())
        for name in names:
            out.setdefault(name, set()).update(ids)
    return out


def scheduler_client(address):
    """The Dask client of ``--scheduler`` (None without one); an unreachable scheduler is a
    usage error."""
    if not address:
        return None
    from flbounds.ledger.engine.runner import SchedulerError, connect

    try:
        return connect(address)
    except SchedulerError as exc:
        raise UsageError(str(exc)) from None
