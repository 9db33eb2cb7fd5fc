r"""Claims split into cells: a claim's grid run as separate tasks.

A claim whose work is a grid (a bound checked in many cells, Monte Carlo cells, a sweep)
may declare its cells, so that the engine runs them as separate tasks, side by side::

    def cells_of(*, rng, n_draws, lam):              # the profile's parameters
        base = rng.standard_normal(5).tolist()       # draws shared by every cell: here
        return [dict(n_draws=n_draws, lam=x, base=base) for x in lam]

    def one_cell(*, rng, n_draws, lam, base):        # one cell's parameters
        ...
        return dict(lam=lam, gap=gap, bound=bound)   # JSON values (arrays become lists)

    @claim("mypaper.thm2.bound", ..., quick=dict(n_draws=300, lam=[0.1, 1.0]),
           cells=dict(grid=cells_of, run=one_cell))
    def bound(*, rng, cells, n_draws, lam):          # the combine step
        ...                                          # cells: the outputs, in grid order
        return Evidence(...)

``grid`` receives the claim's generator and the profile's parameters and returns the cells,
each a dict of JSON values (str keys, no two alike); it runs again in every cell's task and in
the run's own process, so it must be cheap. A cell is everything it computes from, so that the
cell is keyed by the claim's task key plus its parameters
(:func:`~flbounds.ledger.api.taskkey.cell_key`). ``run`` receives one cell's parameters and a
generator of its own, keyed by (root seed, claim id, cell parameters)
(:func:`~flbounds.ledger.api.seeds.cell_seed_sequence`): a cell's numbers depend on nothing
else, neither the other cells nor the order or place they ran. It returns a dict of JSON
values. The decorated function combines: it receives the claim's generator after ``grid`` drew
from it, the profile's parameters and ``cells``, the outputs in grid order, each as it reads
back from JSON (floats exactly, non-finite ones as the strings ``'nan'``, ``'inf'``; tuples as
lists). ``Claim.check`` runs the cells one after another in this process; the engine runs each
as a task (same store, leases, ``--resume``, Dask) and combines once all are stored; the two
give the same row, bit for bit (timings aside). A cell that fails makes the claim's row
``error``; ``--resume`` then recomputes only the cells not stored.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from typing import NamedTuple

import numpy as np

from .result import to_jsonable
from .seeds import cell_seed_sequence


class Cells(NamedTuple):
    """A claim's cells (see the module docstring).

    Attributes
    ----------
    grid : callable
        ``grid(rng=, **params)`` lists the cells (dicts of JSON values).
    run : callable
        ``run(rng=, **cell)`` computes one cell's output (a dict of JSON values).
    """

    grid: Callable[..., list[dict]]
    run: Callable[..., dict]


def declared(claim_id: str, cells) -> Cells | None:
    """``cells=`` of :func:`~flbounds.ledger.claim` checked.

    Parameters
    ----------
    claim_id : str
        The claim declaring them (named in the error).
    cells : mapping or None
        ``dict(grid=..., run=...)``, both callables taking the keyword ``rng``.

    Returns
    -------
    Cells or None
        None when ``cells`` is None.
    """
    if cells is None:
        return None
    if not isinstance(cells, Mapping) or set(cells) != {"grid", "run"}:
        raise ValueError(f"claim {claim_id!r}: cells must be dict(grid=..., run=...), got "
                         f"{cells!r:.80}")
    for name in ("grid", "run"):
        if not callable(cells[name]) or not accepts(cells[name], "rng"):
            raise ValueError(f"claim {claim_id!r}: cells[{name!r}] must be a function taking "
                             f"the keyword argument 'rng', got {cells[name]!r:.80}")
    return Cells(cells["grid"], cells["run"])


def accepts(func, name: str) -> bool:
    """Whether ``func`` takes the keyword argument ``name`` (or any keyword)."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return name in params and params[name].kind in (
        inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def grid(claim_id: str, cells: Cells, rng: np.random.Generator, params: dict) -> list[dict]:
    """The cells of claim ``claim_id`` for the profile's ``params``, as JSON reads them back
    (``ValueError`` naming ``cells`` for an empty grid, a cell that is not a dict of JSON
    values, or one listed twice)."""
    listed = cells.grid(rng=rng, **params)
    if not isinstance(listed, list | tuple) or not listed:
        raise ValueError(f"cells: the grid of {claim_id} must be a non-empty list of "
                         f"dicts, got {type(listed).__name__}")
    seen = set()
    out = []
    for cell in listed:
        if not isinstance(cell, dict) or not all(isinstance(k, str) for k in cell):
            raise ValueError(f"cells: a cell of {claim_id} must be a dict with str keys, "
                             f"got {cell!r:.80}")
        try:
            plain = json.loads(json.dumps(to_jsonable(cell)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"cells: a cell of {claim_id} is not JSON: {exc}") from None
        canonical = json.dumps(plain, sort_keys=True)
        if canonical in seen:
            raise ValueError(f"cells: the grid of {claim_id} lists the cell "
                             f"{canonical:.80} twice")
        seen.add(canonical)
        out.append(plain)
    return out


def run(claim_id: str, cells: Cells, seed: int, cell: dict) -> dict:
    """One cell's output, as it reads back from JSON (its generator keyed by the cell)."""
    out = cells.run(rng=np.random.default_rng(cell_seed_sequence(seed, claim_id, cell)),
                    **cell)
    if not isinstance(out, dict):
        raise ValueError(f"cells: the run function of {claim_id} returned "
                         f"{type(out).__name__}, not a dict")
    try:
        return json.loads(json.dumps(to_jsonable(out)))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cells: the output of a cell of {claim_id} is not JSON: "
                         f"{exc}") from None
