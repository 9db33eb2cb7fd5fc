r"""Evidence a claim computes, and the :class:`CheckResult` the ledger stores.

A claim function returns :class:`Evidence`: the measured and theoretical numbers, the relation
between them and a named, derived :class:`Tolerance`. The verdict is *derived* from those
numbers (:meth:`Evidence.verdict`), never stored by hand. The registry wraps the evidence with
the claim's identity and provenance into a :class:`CheckResult`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

import numpy as np

from flbounds.tolerances import SE_RULE

RELATIONS = ("<=", ">=", "==", "in")
#: every verdict a row can carry (docs/concepts/verdicts.md): ``inconclusive`` when a test could
#: not decide; ``reproduced`` / ``not-reproduced`` for synthetic re-runs of empirical results
VERDICTS = ("holds", "violated", "not-applicable", "inconclusive", "reproduced",
            "not-reproduced", "error")
#: ``reproduction``: a synthetic re-run of an empirical table or figure (never a paper error)
KINDS = ("statement", "proof-step", "example", "remark", "algorithm", "code", "tightness",
         "reproduction")


@dataclass(frozen=True)
class Tolerance:
    """A named tolerance with the one-line derivation of its size.

    Build one with :meth:`exact`, :meth:`mc` or :meth:`rounding` rather than directly: they
    name the tolerance and derive its size.

    Parameters
    ----------
    value : float or array_like
        The slack: a scalar, or an array broadcastable against the measured numbers (for
        example one Monte Carlo standard error per coordinate, times 4).
    name : str
        A short name shown with the verdict ("exact", "rounding", "4 MC standard errors").
    derivation : str
        One line saying where the size comes from (an error estimate, not a measurement).
    """

    value: Any
    name: str
    derivation: str

    @classmethod
    def exact(cls, why: str = "exact arithmetic: integers, booleans or closed forms") -> Tolerance:
        """Zero tolerance, for comparisons that involve no rounding or sampling."""
        return cls(0.0, "exact", why)

    @classmethod
    def mc(cls, se, k: float = SE_RULE, what: str = "Monte Carlo mean") -> Tolerance:
        """``k`` standard errors of a Monte Carlo estimate (two-sided miss rate ~6e-5 at k=4).

        For an array of m > 1 cells (a family of comparisons, any of which fails the claim),
        each cell allows :func:`flbounds.stats.holm_se_multiplier` (m, k) standard errors:
        Holm's rule over the family at the one-cell level, and the family size is named in
        the tolerance."""
        from flbounds.stats import holm_se_multiplier

        se = np.asarray(se, dtype=float)
        if se.size <= 1:
            return cls(k * se, f"{k:g} MC standard errors", f"{what}: k * std(ddof=1)/sqrt(n)")
        k_m = holm_se_multiplier(int(se.size), k)
        return cls(k_m * se, f"{k_m:.3g} MC standard errors (Holm, family of {se.size})",
                   f"{what}: k_m * std(ddof=1)/sqrt(n), k_m = the {k:g}-SE level shared by "
                   f"{se.size} cells (flbounds.stats.holm_se_multiplier)")

    @classmethod
    def rounding(cls, value, derivation: str) -> Tolerance:
        """Floating-point rounding bound, e.g. ``c * eps * kappa * scale``: a number, or an
        array of them broadcastable against the measured numbers (one bound per cell)."""
        arr = np.asarray(value, dtype=float)
        if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError(f"value must be finite and >= 0, got {value!r}")
        return cls(float(arr) if arr.ndim == 0 else arr, "rounding", derivation)


@dataclass(frozen=True)
class Evidence:
    """What a claim measured, what the paper predicts, and how they must relate.

    Parameters
    ----------
    measured, theoretical
        Scalars or arrays. For ``relation == "in"`` the theoretical value is an interval
        ``(low, high)`` (or an array of shape ``(..., 2)``).
    relation
        One of ``<=``, ``>=``, ``==`` (within tolerance), ``in``.
    tolerance
        How much slack the comparison allows, and why.
    details
        Anything a reader needs to reproduce or judge the result: the counterexample instance,
        intermediate numbers, fitted slopes. JSON-serialisable after :func:`to_jsonable`.
    applicable
        False when the instance falls outside the result's hypotheses; the verdict is then
        ``not-applicable`` whatever the numbers say, and ``reason`` says which hypothesis failed.
    undecided
        For a statistical test that failed to reject: why it cannot decide, with the smallest
        effect it could have detected. When set and the relation fails, the verdict is
        ``inconclusive``, never ``violated`` (a failed rejection accuses nobody).
    reason
        Why the instance is outside the hypotheses (with ``applicable=False``).
    attack
        The adversarial search's summary where the claim ran one (:mod:`flbounds.falsify`):
        best ratio, evaluations, witness.
    worst_case
        The worst case over the function class where the claim computed one
        (:mod:`flbounds.pep`): value, printed value, their ratio, the SDP gap.
    instance
        The instance the numbers were computed on, as the named values its result's
        hypothesis predicates read (a mapping), or a list of such instances (a grid, the
        seeds of a Monte Carlo run): the ledger evaluates every hypothesis of the claim's
        parts on each (:func:`flbounds.ledger.api.judge.judge`).
    """

    measured: Any
    theoretical: Any
    relation: str
    tolerance: Tolerance
    details: dict = field(default_factory=dict)
    applicable: bool = True
    reason: str = ""
    undecided: str = ""
    attack: dict = field(default_factory=dict)  # adversarial search summary (flbounds.falsify)
    worst_case: dict = field(default_factory=dict)  # PEP worst case: value, printed, ratio, gap
    instance: Any = None

    def __post_init__(self):
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {RELATIONS}, got {self.relation!r}")

    def satisfied(self) -> np.ndarray:
        """Elementwise truth of ``measured <relation> theoretical`` within the tolerance."""
        m = np.asarray(self.measured, dtype=float)
        t = np.asarray(self.theoretical, dtype=float)
        tol = np.asarray(self.tolerance.value, dtype=float)
        with np.errstate(invalid="ignore"):
            if self.relation == "<=":
                ok = m <= t + tol
            elif self.relation == ">=":
                ok = m >= t - tol
            elif self.relation == "==":
                ok = np.abs(m - t) <= tol
            else:
                if t.shape[-1:] != (2,):
                    raise ValueError("relation 'in' needs theoretical intervals of shape (..., 2)")
                ok = (m >= t[..., 0] - tol) & (m <= t[..., 1] + tol)
        # NaN compares False everywhere, so a NaN measurement never "holds".
        return np.asarray(ok, dtype=bool)

    def verdict(self) -> str:
        """``holds`` / ``violated`` / ``not-applicable`` / ``inconclusive``, derived from the
        numbers (a claim of kind ``reproduction`` reads them as ``reproduced`` /
        ``not-reproduced``: :func:`reproduction_verdict`)."""
        if not self.applicable:
            return "not-applicable"
        if bool(np.all(self.satisfied())):
            return "holds"
        return "inconclusive" if self.undecided else "violated"


#: the verdict columns every summary shows; the others only where a row has them
CORE_VERDICTS = ("holds", "violated", "not-applicable", "error")


def shown_verdicts(results) -> tuple[str, ...]:
    """The verdict columns of a summary of ``results`` (rows with a ``verdict``)."""
    present = {r.verdict for r in results}
    return tuple(v for v in VERDICTS if v in CORE_VERDICTS or v in present)


def reproduction_verdict(verdict: str) -> str:
    """The verdict of a synthetic re-run of an empirical result: the numbers either show the
    paper's effect (``reproduced``) or not (``not-reproduced``); neither accuses the paper."""
    return {"holds": "reproduced", "violated": "not-reproduced"}.get(verdict, verdict)


@dataclass(frozen=True)
class CheckResult:
    """One claim evaluated once: the row of the ledger, as stored and as ``--json`` writes it.

    Made by the ledger (:func:`flbounds.ledger.run_claims`, ``Claim.check``), not by hand.

    Attributes
    ----------
    id, paper, ref, kind, statement : str
        The claim's id, its paper's key, the paper's own numbering, the claim's kind and its
        one-sentence statement.
    measured, theoretical : float, array or list
        The numbers compared.
    relation : str
        ``<=``, ``>=``, ``==`` or ``in``.
    tolerance : dict
        The :class:`Tolerance` as a mapping (value, name, derivation).
    verdict, expected : str
        The verdict derived from the numbers and the hypotheses, and the one asserted.
    reproducer : str
        The command that re-runs this claim alone.
    params : dict
        The parameters of the profile the claim ran with.
    seed : int
        The root seed.
    elapsed_s : float
        Seconds the claim took.
    versions : dict
        Versions of Python and the libraries that computed it.
    profile : str
        ``quick`` or ``full``.
    details : dict
        The claim's own numbers (counterexample, intermediate values).
    reason, traceback : str
        Why the verdict is ``not-applicable`` or ``error``; the traceback of an error.
    task_key : str
        The key a resumed run finds the row under.
    hypotheses : dict
        Each hypothesis of the claim's parts and its value on the instance.
    attack, worst_case : dict
        The adversarial search's and the worst case's summaries, where computed.
    git_commit : str
        The source commit (``+dirty`` when modified).
    started, finished : str
        ISO-8601 UTC wall-clock start and end of the task.
    cpu_s : float
        CPU seconds of the thread that ran the task (0: not recorded).
    """

    id: str
    paper: str
    ref: str
    kind: str
    statement: str
    measured: Any
    theoretical: Any
    relation: str
    tolerance: dict
    verdict: str
    expected: str
    reproducer: str
    params: dict
    seed: int
    elapsed_s: float
    versions: dict
    profile: str = "quick"
    details: dict = field(default_factory=dict)
    reason: str = ""
    traceback: str = ""
    task_key: str = ""
    hypotheses: dict = field(default_factory=dict)
    attack: dict = field(default_factory=dict)  # fixed/best ratio, evaluations, witness, tight
    worst_case: dict = field(default_factory=dict)  # PEP worst case, printed value, ratio, gap
    git_commit: str = ""  # provenance: source commit ("+dirty" if modified), ISO-8601 UTC
    started: str = ""     # wall-clock start and end of the task
    finished: str = ""
    cpu_s: float = 0.0    # CPU seconds of the thread that ran the task (0: not recorded)

    @property
    def as_expected(self) -> bool:
        return self.verdict == self.expected

    def to_dict(self) -> dict:
        """A JSON-ready dict (arrays become lists, non-finite floats become strings): the
        value of ``to_jsonable(asdict(self))`` in one pass, without asdict's deep copy
        (every row is converted two or three times in a run)."""
        return {f.name: _plain(getattr(self, f.name)) for f in _FIELDS}

    @classmethod
    def from_dict(cls, row: dict) -> CheckResult:
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in row.items() if k in names})


_FIELDS = fields(CheckResult)


#: types :func:`to_jsonable` returns unchanged (exact types: no subclass, no numpy scalar)
_UNCHANGED = frozenset({str, int, bool, type(None)})


def _plain(value):
    """``to_jsonable(asdict-converted value)``: a dataclass instance at any depth becomes the
    dict of its fields, as :func:`dataclasses.asdict` makes it. Rows read back from JSON hold
    plain values only: those take the first, cheap tests."""
    kind = type(value)
    if kind in _UNCHANGED:
        return value
    if kind is float:
        return value if math.isfinite(value) else repr(value)
    if kind is list:
        return [_plain(v) for v in value]
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return to_jsonable(value)


def to_jsonable(value):
    """Convert numpy scalars/arrays, tuples and non-finite floats into plain JSON values.

    Floats round-trip exactly through ``json`` (shortest repr), so stored measurements are
    bit-identical to the computed ones; ``nan``/``inf`` are stored as strings.
    """
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biu" or (value.dtype.kind == "f" and np.isfinite(value).all()):
            return value.tolist()   # plain ints, bools and finite floats: nothing to convert
        return to_jsonable(value.tolist())
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating | float):
        x = float(value)
        return x if math.isfinite(x) else repr(x)
    if isinstance(value, Tolerance):
        return to_jsonable(asdict(value))
    return value
