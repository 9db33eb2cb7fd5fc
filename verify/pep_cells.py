"""The ledger's rule for one cell of a PEP tightness grid whose SDP has no accurate solve.

Inside the theorem's hypotheses the verdict rests on the cell, so the solver's failure
propagates and the claim is an ``error``; outside them the cell is listed as ``unsolved``
(constants and the solver's message), never given a number.
"""

from __future__ import annotations

from flbounds.pep import PEPSolveError


def solve_or_list(solve, constants, within):
    """``(solve(), None)``, or ``(None, listed cell)`` when an outside cell is unsolved.

    Parameters
    ----------
    solve : callable
        Returns the cell's :class:`flbounds.pep.WorstCase`.
    constants : dict
        The cell's constants, as the claim's details record them.
    within : bool
        Whether the cell is inside the theorem's hypotheses.

    Raises
    ------
    PEPSolveError
        When ``solve`` raises it on a cell inside the hypotheses.
    """
    try:
        return solve(), None
    except PEPSolveError as exc:
        if within:
            raise
        return None, dict(constants=constants, within_hypotheses=False, unsolved=str(exc))
