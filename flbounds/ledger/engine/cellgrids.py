"""The claims of a run split into cells (``claim(..., cells=...)``): each cell's task id,
key and lease, the cells' rows as they arrive, and the claim's row combined from them once
all are in (:mod:`flbounds.ledger.engine.runner` runs the cells as tasks)."""

from __future__ import annotations

from ..api.result import CheckResult
from ..api.taskkey import cell_key
from .leases import DONE, acquire, stored_result
from .tasks import cell_task, combine_cells, failure_row, parse_cell_task

__all__ = ["CellGrids", "claim_stored"]


class CellGrids:
    """The claims of a run split into cells: their cells' task ids and keys, the outputs
    received so far, and the combine once a claim's cells are all in."""

    def __init__(self, profile, seed, claim_keys, store, finished):
        self.profile, self.seed, self.store, self.finished = profile, seed, store, finished
        self.claim_keys, self.run_id, self.since = claim_keys, "", None
        self.tasks: dict[str, list[str]] = {}      # claim id -> its cells' task ids
        self.keys: dict[str, str] = {}             # cell task id -> cell key
        self.rows: dict[str, list] = {}            # claim id -> cell rows received
        self.closed: set[str] = set()              # claims whose row is made

    def plan(self, claims) -> None:
        """List the cells of the claims split into cells (their grids)."""
        profile, seed, claim_keys = self.profile, self.seed, self.claim_keys
        for c in claims:
            if getattr(c, "cells", None) is None:     # an attack task has none
                continue
            try:
                cells = c.cell_plan(seed, profile)
            except Exception:  # noqa: BLE001 - the claim runs as one task; its row says why
                continue
            self.tasks[c.id] = [cell_task(c.id, i) for i in range(len(cells))]
            self.keys.update({cell_task(c.id, i): cell_key(claim_keys[c.id], cell)
                              for i, cell in enumerate(cells)})
            self.rows[c.id] = [None] * len(cells)

    def on_cell(self, task, reply: dict, stored: bool) -> None:
        """A cell's reply (``{"row": ...}`` or ``{"fail": ...}``), or its row found stored."""
        claim_id, index = parse_cell_task(task[0])
        row = reply.get("row")
        if row is None:
            row = dict(id=claim_id, index=index, cell=None, output=None,
                       error=reply.get("fail", "no result"), traceback="",
                       task_key=self.keys[task[0]], claim_key=self.claim_keys[claim_id],
                       profile=self.profile, seed=self.seed,
                       elapsed_s=float(reply.get("elapsed_s", 0.0)), cpu_s=0.0)
        if self.store is not None and not stored:
            self.store.append_cell(row, run_id=self.run_id)
        if claim_id in self.closed:
            return
        if row.get("error"):
            self.closed.add(claim_id)
            reason = f"cell {index} of {len(self.rows[claim_id])} failed: {row['error']}"
            failed = failure_row((claim_id, self.profile, self.seed), reason, row["elapsed_s"])
            self.finished(CheckResult.from_dict(failed), failed)
            return
        self.rows[claim_id][index] = row
        if all(r is not None for r in self.rows[claim_id]):
            self.closed.add(claim_id)
            self._combine(claim_id)

    def _combine(self, claim_id: str) -> None:
        if self.store is not None:    # another run may have stored it meanwhile
            state, stored = acquire(self.store, self.claim_keys[claim_id], self.run_id,
                                    self.since)
            if state == DONE:
                self.finished(stored, None)
                return
        try:
            row = combine_cells(claim_id, self.profile, self.seed, self.rows[claim_id])
        except Exception as exc:  # noqa: BLE001 - e.g. the registry changed under the run
            row = failure_row((claim_id, self.profile, self.seed),
                              f"combining the cells failed: {type(exc).__name__}: {exc}")
        self.finished(CheckResult.from_dict(row), row)


def claim_stored(grids: CellGrids, claim_id: str) -> bool:
    """The claim's row is stored (as resume or a concurrent run may have it): then it is
    taken as a whole, its lease as any claim's."""
    if grids.store is None:
        return False
    return stored_result(grids.store, grids.claim_keys[claim_id], grids.since) is not None
