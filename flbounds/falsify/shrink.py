"""Shrink a witness: fewer clients, lower dimension, rounder numbers, while it still violates.

Each primitive proposes simpler values of its own entry (:meth:`simpler`: smaller integers,
fewer significant digits), coarsest first. A proposal is kept when the instance still passes
the validator and its ratio stays above the threshold; the pass repeats until nothing
changes, so the result is a local minimum of complexity, not a global one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .search import validator_rejects
from .spaces import Space


@dataclass(frozen=True)
class Shrunk:
    """A simplified witness, its ratio and the number of ratio evaluations spent.

    Attributes
    ----------
    witness : dict
        The simplified instance (names of the space -> values).
    ratio : float
        Its ratio, still above the threshold.
    evaluations : int
        Ratio evaluations spent shrinking.
    """

    witness: dict
    ratio: float
    evaluations: int


def shrink(ratio: Callable[..., float], space, witness: dict, *, threshold: float = 1.0,
           validator: Callable[..., Any] | None = None, max_evaluations: int = 2000) -> Shrunk:
    """Simplify ``witness`` entry by entry while ``ratio > threshold`` and it stays valid.

    Raises ``ValueError`` when ``witness`` itself does not violate (nothing to shrink).
    """
    space = Space.of(space)
    current = space.coerce(witness)
    value = float(ratio(**current))
    if not value > threshold:
        raise ValueError(f"witness: ratio {value} does not exceed threshold {threshold}")
    spent, changed = 1, True
    while changed and spent < max_evaluations:
        changed = False
        for name, prim in space.items:
            for proposal in prim.simpler(current[name]):
                if spent >= max_evaluations:
                    break
                trial = {**current, name: proposal}
                if _same(trial[name], current[name]):
                    continue
                if validator is not None and validator_rejects(validator, trial):
                    continue
                spent += 1
                r = float(ratio(**trial))
                if math.isfinite(r) and r > threshold:
                    current, value, changed = trial, r, True
                    break
    return Shrunk(witness=current, ratio=value, evaluations=spent)


def _same(a, b) -> bool:
    import numpy as np

    return np.array_equal(np.asarray(a), np.asarray(b))
