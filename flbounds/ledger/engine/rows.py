"""Reading stored result rows without trusting them.

A row may come from an older version, a hand edit, a disk fault or a file cut short. The
readers check every row's shape and types before building a :class:`CheckResult`; a row that
fails is counted and skipped (:class:`Skipped`), and one example is reported once on stderr.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import NamedTuple

from ..api.registry import PAPERS
from ..api.result import VERDICTS, CheckResult

_STRINGS = ("id", "paper", "ref", "kind", "statement", "relation", "expected", "reproducer",
            "profile", "reason", "traceback", "task_key")
_DICTS = ("tolerance", "params", "versions", "details")
_REPORTED: set[tuple[str, int]] = set()


class Skipped(NamedTuple):
    """Unreadable rows met by one read: how many, and the first one as an example."""

    count: int = 0
    example: str = ""

    def add(self, where: str, problem: str) -> Skipped:
        return Skipped(self.count + 1, self.example or f"{where}: {problem}")


def row_problem(row) -> str | None:
    """What is wrong with ``row`` as a stored result, or ``None`` when it is usable."""
    if not isinstance(row, dict):
        return f"a JSON {type(row).__name__}, not an object"
    missing = [k for k in ("id", "verdict", "seed", "elapsed_s") if k not in row]
    if missing:
        return f"missing {', '.join(missing)}"
    for key in _STRINGS:
        if key in row and not isinstance(row[key], str):
            return f"{key} is {_kind(row[key])}, not a string"
    for key in _DICTS:
        if key in row and not isinstance(row[key], dict):
            return f"{key} is {_kind(row[key])}, not an object"
    if row["verdict"] not in VERDICTS:
        return f"verdict {row['verdict']!r} is not one of {VERDICTS}"
    seed = row["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        return f"seed is {_kind(seed)}, not a non-negative integer"
    elapsed = row["elapsed_s"]
    if isinstance(elapsed, bool) or not isinstance(elapsed, int | float) \
            or not math.isfinite(elapsed) or elapsed < 0:
        return f"elapsed_s is {_kind(elapsed)}, not a finite number >= 0"
    return None


def parse_row(raw: bytes | str) -> tuple[CheckResult | None, str]:
    """``(result, "")`` for a usable stored row, else ``(None, why not)``."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes | bytearray) else raw
        row = json.loads(text)
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except (json.JSONDecodeError, TypeError, RecursionError) as exc:
        return None, f"not JSON ({str(exc)[:60]})"
    problem = row_problem(row)
    if problem is not None:
        return None, problem
    try:
        return CheckResult.from_dict(_defaults(row)), ""
    except TypeError as exc:   # a required field of CheckResult missing
        return None, str(exc)[:80]


def _defaults(row: dict) -> dict:
    """Fill fields a minimal or older row lacks with neutral values."""
    filled = dict(paper="", ref="", kind="", statement="", measured=None, theoretical=None,
                  relation="", tolerance={}, expected="", reproducer="", params={},
                  versions={})
    filled.update(row)
    return filled


def public_row(result: CheckResult) -> dict:
    """``result`` as a JSON-ready row for readers (``flbounds check --json``): the stored
    fields plus ``citation``, the paper as a reader cites it (authors, title, venue, arXiv
    id; '' for an undeclared paper). Readers of such rows ignore the extra field."""
    row = result.to_dict()
    declared = PAPERS.get(result.id.removeprefix("attack:").split(".", 1)[0])
    row["citation"] = declared.plain_citation if declared is not None else ""
    return row


def report_skipped(source: str, skipped: Skipped) -> None:
    """One line on stderr per store and count: how many rows were skipped, one example."""
    if skipped.count == 0 or (source, skipped.count) in _REPORTED:
        return
    _REPORTED.add((source, skipped.count))
    sys.stderr.write(f"flbounds: warning: skipped {skipped.count} unreadable row(s) in "
                     f"{source} (e.g. {skipped.example})\n")


def _kind(value) -> str:
    if value is None:
        return "null"
    return repr(value) if isinstance(value, int | float | str) and len(repr(value)) < 30 \
        else type(value).__name__


def cell_row(raw: bytes | str) -> dict | None:
    """A stored cell row, or None when it is not one (unreadable, wrong shape)."""
    try:
        row = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, TypeError, RecursionError):
        return None
    ok = isinstance(row, dict) and all(isinstance(row.get(k), t) for k, t in (
        ("id", str), ("index", int), ("task_key", str), ("profile", str), ("seed", int),
        ("elapsed_s", float | int)))
    return row if ok else None


def read_jsonl(path: Path, skipped: Skipped) -> tuple[list[CheckResult], Skipped]:
    """Readable rows of a JSONL results file (bad lines counted in ``skipped``)."""
    rows: list[CheckResult] = []
    try:
        with open(path, "rb") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                result, problem = parse_row(line)
                if result is None:
                    skipped = skipped.add(f"line {number}", problem)
                else:
                    rows.append(result)
    except OSError as exc:
        skipped = skipped.add(str(path), str(exc))
    return rows, skipped
