"""The results store: one JSON object per line, appended as each task finishes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .result import CheckResult

RESULTS_FILE = "results.jsonl"


class ResultStore:
    """Append-only JSONL file ``<directory>/results.jsonl``.

    Each line is written and flushed in one call, so an interrupted run leaves at most one
    truncated last line, which :meth:`load` skips.
    """

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self.path = self.directory / RESULTS_FILE

    def append(self, result: CheckResult) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        line = json.dumps(result.to_dict(), sort_keys=True) + "\n"
        if self._ends_mid_line():
            line = "\n" + line  # close a line an interruption cut short
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    def _ends_mid_line(self) -> bool:
        if not self.path.exists() or self.path.stat().st_size == 0:
            return False
        with open(self.path, "rb") as fh:
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) != b"\n"

    def load(self) -> list[CheckResult]:
        """Every complete stored result, oldest first."""
        if not self.path.exists():
            return []
        rows = []
        with open(self.path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    rows.append(CheckResult.from_dict(json.loads(line)))
                except (json.JSONDecodeError, TypeError):
                    continue  # a line cut short by an interruption
        return rows

    def finished_keys(self) -> set[str]:
        """Task keys of stored results that completed (``error`` results are re-run)."""
        return {r.task_key for r in self.load() if r.verdict != "error"}

    def latest(self) -> dict[str, CheckResult]:
        """The most recent result per claim id."""
        out: dict[str, CheckResult] = {}
        for r in self.load():
            out[r.id] = r
        return dict(sorted(out.items()))
