"""An unbounded worst case said as such by every entry point (:mod:`.certify_unbounded`).

:func:`.engine.worst_case` (direct form), :func:`.symmetric.worst_case_symmetric` and
:func:`.scenarios.mixture_worst_case` catch a :class:`~.sdp.PEPSolveError` and pass it here:
when a solver reported ``unbounded`` and the trace-bounded re-solves grow at least like
:math:`\\sqrt R` (:func:`.certify_unbounded.unbounded_witness`), the error says "the worst case
is unbounded" with the witness; otherwise the solver's error stands.
"""

from __future__ import annotations

from .sdp import PEPSolveError


def raise_said(exc, build, measure):
    """Raise ``exc`` (a :class:`~.sdp.PEPSolveError`), prefixed with the witness of
    :func:`.certify_unbounded.unbounded_witness` when the worst case is unbounded.

    Parameters
    ----------
    exc : PEPSolveError
        The error of the solve.
    build : callable
        ``build()`` returns a fresh unsolved PEP and its parts (the form that failed).
    measure : Measure

    Raises
    ------
    PEPSolveError
        Always: ``exc`` itself, or a new error saying the worst case is unbounded.
    """
    from .certify_unbounded import unbounded_witness

    why = unbounded_witness(build, measure) if "unbounded" in str(exc) else None
    if why is None:
        raise exc
    raise PEPSolveError(f"{why} | {exc}") from exc


__all__ = ["raise_said"]
