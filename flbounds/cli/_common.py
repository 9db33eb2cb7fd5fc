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
    """The claims matching ``patterns``; an unmatched pattern is a usage error."""
    from flbounds.ledger import select

    try:
        return select(patterns)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


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
