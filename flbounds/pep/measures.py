"""What a worst case measures (:class:`Measure`): a quadratic Lyapunov ratio
(:func:`lyapunov`, :func:`distance`) or the contraction of two runs (:func:`two_runs`); part
of the round vocabulary of :mod:`flbounds.pep.describe`, which re-exports them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Measure:
    r"""What is measured: the worst case is :math:`\sup E[V(X^+)]` over :math:`V(X) \le 1`
    (``runs = 1``) or, with ``runs = 2``, :math:`\sup E[V(X^+ - \tilde X^+)]` for two runs with
    the same clients and participation, :math:`V(X - \tilde X) \le 1` (``star`` then None).

    Attributes
    ----------
    value, label : callable, str
        :math:`V` = ``value(state, star)``, a quadratic function of the state's points (a PEPit
        expression; ``star`` has ``x`` and the clients' ``gradients`` at :math:`x^\star`).
    runs : {1, 2}, default 1
    bounds : callable, optional
        ``bounds(state) -> {free start point: bound on its norm}`` implied by :math:`V \le 1`
        when every client is stationary at :math:`x^\star = 0`: what a certified solve
        (:mod:`flbounds.pep.certify`, ``worst_case(..., certified=True)``) needs. Where
        ``bounds`` (or, :math:`x^\star` not shared, ``star_bounds``) is not given, a
        certified solve derives the missing bounds from :math:`V` itself
        (:attr:`derives_bounds`, :mod:`.certify_derived`: exact, rounded upwards).
    star_bounds : callable, optional
        ``star_bounds(star) -> {free point of star: bound on its norm}`` implied by
        :math:`V \le 1` when the clients do not share :math:`x^\star` (the free gradients
        :math:`\nabla f_i(x^\star)`, e.g. under a heterogeneity budget): with ``bounds``, what
        :func:`flbounds.pep.certify.certified_star` needs.
    """

    value: Callable
    label: str
    runs: int = 1
    bounds: Callable | None = None
    star_bounds: Callable | None = None

    @property
    def derives_bounds(self) -> bool:
        """Whether a certified solve may derive start bounds from :math:`V` (one run, ``bounds``
        or ``star_bounds`` missing: :mod:`.certify_derived`); the points a given callable
        bounds keep its bounds."""
        return self.runs == 1 and (self.bounds is None or self.star_bounds is None)

    def start_bounds(self, start, star, funcs=(), *, shared=False):
        r"""The start bounds of a certified one-run solve: ``bounds(start)`` (with
        ``star_bounds(star)`` when the clients do not share :math:`x^\star`) where given,
        the rest derived from :math:`V \le 1` (:func:`.certify_derived.derived_bounds`).

        Parameters
        ----------
        start : State
            The built PEP's start state.
        star : Star
            Its minimizer.
        funcs : sequence of PEPit functions
            The PEP's functions (for derived bounds).
        shared : bool
            The clients share :math:`x^\star` (their gradients there are 0: no star part).

        Returns
        -------
        dict
            ``{free start point or gradient at x*: bound on its norm}``.

        Raises
        ------
        PEPSolveError
            When derived bounds leave a needed point unbounded.
        """
        given = {} if self.bounds is None else dict(self.bounds(start))
        if self.bounds is not None and shared:
            return given
        if not shared and self.star_bounds is not None:
            given.update(self.star_bounds(star))
            if self.bounds is not None:
                return given
        from .certify_derived import derived_bounds

        return derived_bounds(self, start, star, funcs, given=given)


def lyapunov(value, label, bounds=None, star_bounds=None) -> Measure:
    r""":math:`E[V(X^+)] / V(X)` for the caller's quadratic :math:`V` = ``value(state, star)``.

    Parameters
    ----------
    value : callable
        ``value(state, star)``: a quadratic function of the state's points (a PEPit
        expression; server points ``state["x"]``, client points ``state.client("z")``, one
        per client) and of ``star`` (``star.x`` and ``star.gradients``, the clients'
        gradients at :math:`x^\star`).
    label : str
        A name for reports.
    bounds : callable, optional
        ``bounds(state) -> {free start point: bound on its norm}``, for a certified solve
        (see :class:`Measure`). What is not given, a certified solve derives from :math:`V`
        (:mod:`.certify_derived`), shared :math:`x^\star` or not.
    star_bounds : callable, optional
        ``star_bounds(star) -> {free point of star: bound on its norm}`` (see
        :class:`Measure`).

    Returns
    -------
    Measure
        One run (``runs = 1``).
    """
    if not callable(value):
        raise ValueError("value must be callable: value(state, star) -> expression")
    if bounds is not None and not callable(bounds):
        raise ValueError("bounds must be callable: bounds(state) -> {point: norm bound}")
    if star_bounds is not None and not callable(star_bounds):
        raise ValueError("star_bounds must be callable: star_bounds(star) -> {point: norm "
                         "bound}")
    return Measure(value, str(label), bounds=bounds, star_bounds=star_bounds)


def distance() -> Measure:
    r""":math:`E\|x^+ - x^\star\|^2 / \|x - x^\star\|^2` (:math:`\|x\| \le 1` at
    :math:`x^\star = 0`).

    Returns
    -------
    Measure
    """
    return Measure(lambda state, star: (state["x"] - star.x) ** 2,
                   "E||x+ - x*||^2 / ||x - x*||^2", bounds=lambda state: {state["x"]: 1.0})


def two_runs(value=None, label=None) -> Measure:
    r"""Contraction of two runs (same clients, same participation): default
    :math:`E\|x^+ - \tilde x^+\|^2 / \|x - \tilde x\|^2`.

    Parameters
    ----------
    value : callable, optional
        ``value(diff, star)``: a quadratic function of ``diff``, the difference of the two
        runs' states (accessed like a state), with ``star`` None; default
        :math:`\|x - \tilde x\|^2`.
    label : str, optional
        A name for reports (``"two runs"`` when ``value`` is given without one; ignored
        without ``value``).

    Returns
    -------
    Measure
        ``runs = 2``, no ``bounds`` (no certified solve).
    """
    if value is None:
        return Measure(lambda diff, star: diff["x"] ** 2,
                       "E||x+ - x~+||^2 / ||x - x~||^2 (two runs, same clients and "
                       "participation)", runs=2)
    return Measure(value, str(label or "two runs"), runs=2)


def made_leaves(into, make):
    """``make()``, appending to ``into`` the leaf points it creates (a two-run measure's
    certificate, :mod:`.certify_tworuns`, needs each run's own leaves)."""
    from PEPit import Point

    first = len(Point.list_of_leaf_points)
    out = make()
    into.extend(Point.list_of_leaf_points[first:])
    return out


__all__ = ["Measure", "distance", "lyapunov", "two_runs"]
