r"""Attack surfaces: how a bound claim is attacked (its instance space and one-instance ratio).

A claim module's sibling ``attacks.py`` declares, per attacked claim::

    @attack_surface("kvib.lemma2_1.isp_le_rsp_bound",
                    space={"a": Box(0.01, 100, log=True, shape=8), "n": Integers(2, 8), ...},
                    validator=in_regime, fixed=[{...}], tolerance=1e-12,
                    tolerance_why="ratio of two sums of <= 8 positive terms")
    def isp_le_rsp(*, a, n, ...):
        return isp_variance(...) / rsp_bound(...)

The decorated function receives one instance and returns measured/bound for it, computed with
the library's own algorithms and closed forms (the same calls the claim makes). A ratio above
``1 + tolerance`` breaks the bound; ``validator`` rejects instances outside the result's
hypotheses; ``fixed`` lists the claim's own fixed instances (their largest ratio is the
*fixed ratio* an attack is compared with).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .spaces import Space

_SURFACES: dict[str, Surface] = {}
#: claim id -> why no attack searches its bound (declared beside the attacks: no_attack)
_NO_ATTACK: dict[str, str] = {}
EXPECTED = ("holds", "violated")
#: default evaluation budgets of an attack per ledger profile
DEFAULT_BUDGET = {"quick": 300, "full": 5000}


@dataclass(frozen=True)
class Surface:
    """One registered attack surface (see the module docstring), made by
    :func:`attack_surface`.

    Attributes
    ----------
    claim_id, validator, fixed, tolerance, tolerance_why, budget
        As the arguments of :func:`attack_surface`.
    expected, pep, method, shrink, note, instance
        As the arguments of :func:`attack_surface`.
    ratio : callable
        The decorated ratio function (measured over bound; above 1 the bound breaks).
    space : Space
        The searched space.
    """

    claim_id: str
    ratio: Callable[..., float]
    space: Space
    validator: Callable[..., Any] | None = None
    fixed: Any = ()
    tolerance: float = 0.0
    tolerance_why: str = ""
    budget: dict = field(default_factory=lambda: dict(DEFAULT_BUDGET))
    expected: str | None = None
    pep: Callable[[], float | None] | None = None
    method: str = "cma"
    shrink: bool = False
    note: str = ""
    instance: Callable[..., Mapping] | None = None

    @property
    def module(self) -> str:
        return self.ratio.__module__

    @property
    def threshold(self) -> float:
        """Ratios above this break the bound (1 plus the derived tolerance)."""
        return 1.0 + self.tolerance

    def effective_validator(self) -> Callable[..., Any] | None:
        """What rejects an instance: the attacked claim's result hypotheses, evaluated by the
        ledger's own predicates on ``instance(**point)`` (the same judgement a claim's
        evidence gets), then the surface's own ``validator``, if any. A hypothesis that is
        false or cannot be evaluated rejects the point: a ratio above the threshold must
        come from an instance that meets every hypothesis."""
        if self.instance is None:
            return self.validator
        from flbounds.ledger.api.judge import judge
        from flbounds.ledger.api.registry import get

        claim = get(self.claim_id)
        if not claim.parts:
            raise ValueError(f"attack surface {self.claim_id!r}: instance= needs the claim "
                             "to be attached to result parts")
        to_instance, own = self.instance, self.validator

        def validator(**point):
            verdict = judge(claim.parts, to_instance(**point), {})
            bad = verdict.failed + verdict.unevaluated
            if bad:
                return "; ".join(bad)
            return True if own is None else own(**point)
        return validator

    def fixed_instances(self) -> list[dict]:
        items = self.fixed() if callable(self.fixed) else self.fixed
        return [self.space.coerce(dict(item)) for item in items]

    def fixed_ratio(self) -> tuple[float, list[dict]]:
        """Largest ratio over the claim's fixed instances (``nan`` when it has none), and the
        instances ordered from the largest ratio down."""
        scored = [(float(self.ratio(**inst)), i, inst)
                  for i, inst in enumerate(self.fixed_instances())]
        scored.sort(key=lambda t: (-t[0] if t[0] == t[0] else np.inf, t[1]))  # nan last
        return (scored[0][0] if scored else float("nan")), [inst for *_, inst in scored]


def attack_surface(claim_id: str, *, space: Mapping | Space,
                   validator: Callable[..., Any] | None = None,
                   fixed: Sequence[Mapping] | Callable[[], Sequence[Mapping]] = (),
                   tolerance: float = 0.0, tolerance_why: str = "",
                   budget: Mapping[str, int] | None = None, expected: str | None = None,
                   pep: Callable[[], float | None] | None = None, method: str = "cma",
                   shrink: bool = False, note: str = "",
                   instance: Callable[..., Mapping] | None = None):
    """Register the decorated ratio function as the attack surface of ``claim_id``.

    Parameters
    ----------
    claim_id
        The attacked claim (its attack task is ``attack:<claim_id>``).
    space
        Names -> primitives; the ratio is called with these keyword arguments.
    validator
        ``validator(**instance)``: falsy or a string (the failed hypothesis) rejects it.
        Prefer ``instance``: the claim's own result hypotheses then decide.
    instance
        ``instance(**point) -> mapping``: the values the attacked claim's result
        hypotheses read (:func:`flbounds.ledger.hypothesis`) at a point of the space; a
        point where any of them is false or not evaluated is rejected, by the same
        predicates that decide whether the claim's own instance is applicable.
    fixed
        The claim's own instance(s), as dicts (or a function returning them).
    tolerance, tolerance_why
        Ratios up to ``1 + tolerance`` still hold; the one-line derivation of its size.
    budget
        Evaluations per profile, ``{"quick": n, "full": m}`` (defaults: DEFAULT_BUDGET).
    expected
        The attack's expected verdict; by default the claim's own.
    pep
        Returns the worst-case ratio from performance estimation, or ``None`` when not
        available; an attack within 1e-3 of it is marked tight.
    method
        The search: CMA-ES (``"cma"``) or differential evolution (``"de"``).
    shrink
        Shrink a violating witness (a paper error's minimal counterexample).
    note
        One line on what is searched, shown with the attack.

    Returns
    -------
    callable
        The decorator; it registers the ratio function and returns it unchanged.
    """
    if not isinstance(claim_id, str) or "." not in claim_id or claim_id.startswith("attack:"):
        raise ValueError(f"claim_id must be a dotted claim id, got {claim_id!r}")
    if expected is not None and expected not in EXPECTED:
        raise ValueError(f"expected must be one of {EXPECTED}, got {expected!r}")
    if not tolerance >= 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance!r}")
    if tolerance > 0 and not tolerance_why:
        raise ValueError("tolerance_why must derive a positive tolerance")
    budgets = dict(DEFAULT_BUDGET, **(budget or {}))
    if any(not isinstance(v, int) or v < 1 for v in budgets.values()):
        raise ValueError(f"budget values must be positive integers, got {budgets}")
    space = Space.of(space)

    def register(func):
        old = _SURFACES.get(claim_id)
        if old is not None and old.ratio.__qualname__ != func.__qualname__:
            raise ValueError(f"attack surface for {claim_id!r} registered twice")
        _SURFACES[claim_id] = Surface(
            claim_id=claim_id, ratio=func, space=space, validator=validator, fixed=fixed,
            tolerance=float(tolerance), tolerance_why=tolerance_why, budget=budgets,
            expected=expected, pep=pep, method=method, shrink=shrink, note=note,
            instance=instance)
        return func

    return register


def no_attack(claim_id: str, reason: str) -> None:
    """Declare why the bound ``claim_id`` checks has no attack surface (a reason a referee
    accepts: the claim is an exact identity over its whole domain, a rate with no per-instance
    ratio, a worst case already computed by performance estimation, ...).

    Parameters
    ----------
    claim_id : str
        The claim (checked against the registry by :func:`unattacked`).
    reason : str
        One or two sentences.
    """
    if not isinstance(claim_id, str) or "." not in claim_id:
        raise ValueError(f"claim_id must be a dotted claim id, got {claim_id!r}")
    if not isinstance(reason, str) or len(reason.split()) < 4:
        raise ValueError(f"reason must say why, in words, got {reason!r}")
    old = _NO_ATTACK.get(claim_id)
    if old is not None and old != reason:
        raise ValueError(f"no_attack for {claim_id!r} declared twice")
    _NO_ATTACK[claim_id] = reason


def unattacked() -> dict[str, str]:
    """Every bound claim declared without an attack, with the reason (imports the claim
    packages first).

    Returns
    -------
    dict of str to str
        Claim id -> the reason no attack searches its bound.

    Raises
    ------
    ValueError
        Naming a declaration on an unknown claim or on a claim that has an attack surface.
    """
    table = surfaces()
    from flbounds.ledger.api.registry import load_all

    claims = load_all()
    bad = sorted(f"{cid} (unknown claim)" for cid in _NO_ATTACK if cid not in claims)
    bad += sorted(f"{cid} (has an attack surface)" for cid in _NO_ATTACK if cid in table)
    if bad:
        raise ValueError("no_attack declarations to fix: " + ", ".join(bad))
    return dict(sorted(_NO_ATTACK.items()))


def surfaces() -> dict[str, Surface]:
    """Every registered surface, by claim id (imports the claim packages first).

    Raises ``ValueError`` naming every surface registered on a claim id that no plugin
    registered (checked once the plugins are loaded, as ``claim(corrects=)`` is): an attack
    on a misspelt id would otherwise never run."""
    from flbounds.ledger.api.registry import load_all

    claims = load_all()
    dangling = sorted(f"{cid} (in {surface.module})" for cid, surface in _SURFACES.items()
                      if cid not in claims)
    if dangling:
        raise ValueError("attack surfaces registered on unknown claims (attack_surface's "
                         "claim_id must name a registered claim): " + ", ".join(dangling))
    return dict(sorted(_SURFACES.items()))


def get_surface(claim_id: str) -> Surface:
    """The registered attack surface of ``claim_id``.

    Parameters
    ----------
    claim_id : str
        The attacked claim's id.

    Returns
    -------
    Surface

    Raises
    ------
    ValueError
        When the claim has no attack surface.
    """
    table = surfaces()
    if claim_id not in table:
        raise ValueError(f"no attack surface for claim {claim_id!r} (see 'flbounds falsify')")
    return table[claim_id]
