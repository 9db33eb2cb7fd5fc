"""The frozen result every worst-case computation returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from flbounds.validation import check_finite, check_positive

from .sdp import SolveInfo, gap_tolerance


@dataclass(frozen=True)
class WorstCase:
    """Worst case of a performance metric over a function class, next to the printed rate.

    Attributes
    ----------
    worst : float
        The PEP value (dual bound): the exact worst case over the class, up to ``gap``.
    printed : float or None
        The paper's printed rate at the same constants (None where no paper states one).
    gap : float
        Primal-dual gap of the accepted solve.
    gram_size, n_constraints : int
        Size of the SDP.
    seconds : float
        Solve time.
    solver : str
    metric : str
        What ``worst`` bounds, in words.
    params : dict
        The constants the SDP was built with.
    status : str
        How ``worst`` was accepted: the solver's status (``optimal``: an accurate solve), or
        ``certified (<solver status>)``: a rigorous upper bound from the solver's multipliers
        (:mod:`.certify`), ``gap`` then the width of its bracket.
    """

    worst: float
    printed: float | None
    gap: float
    gram_size: int
    n_constraints: int
    seconds: float
    solver: str
    metric: str
    params: dict = field(default_factory=dict)
    status: str = "optimal"

    @property
    def ratio(self) -> float | None:
        """``worst / printed`` (None without a positive printed rate)."""
        if self.printed is None or not self.printed > 0:
            return None
        return self.worst / self.printed

    @property
    def tight(self) -> bool | None:
        """Whether the printed rate equals the worst case, within the solver's accuracy."""
        if self.printed is None:
            return None
        return abs(self.worst - self.printed) <= gap_tolerance(self.worst)

    def as_dict(self) -> dict:
        """JSON-ready summary, the ``worst_case`` field of a ledger row."""
        out = asdict(self)
        out["ratio"] = self.ratio
        out["tight"] = self.tight
        return out


def required_step(step, name: str = "step") -> float:
    """``step`` as a float > 0; ``ValueError`` naming it when it is None. The library has no
    default step: a theorem's printed step lives with the theorem (``flbounds bound``)."""
    if step is None:
        raise ValueError(f"{name} is required: flbounds.pep has no default step (pass one, e.g. "
                         "a theorem's printed step from its bound)")
    return check_positive(step, name)


def make_result(info: SolveInfo, *, printed, metric: str, params: dict) -> WorstCase:
    """Wrap a :class:`SolveInfo` with the printed rate (None: the caller gave none) and the
    constants."""
    printed = None if printed is None else check_finite(printed, "printed")
    return WorstCase(worst=info.worst, printed=printed,
                     gap=info.gap, gram_size=info.gram_size, n_constraints=info.n_constraints,
                     seconds=info.seconds, solver=info.solver, metric=metric, params=params,
                     status=info.status)
