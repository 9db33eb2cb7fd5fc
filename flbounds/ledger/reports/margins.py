"""By how much a stored row fails, its counterexample, and how tight a holding row is.

Read by the findings page (:mod:`.findings`) and by the ledger's claim panel
(:mod:`.report_data`), so both say the same thing about the same row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..api.result import CheckResult
from .format import fmt

__all__ = ["Margin", "Tightness", "counterexample", "margin", "tightness"]

#: details keys that hold a claim's counterexample, most specific first
WITNESS_KEYS = ("smallest_counterexample", "counterexample", "witness", "instance")
#: the label of an adversarial search's witness
SEARCH_WITNESS = "witness of the adversarial search"
#: how many scalar details stand in for a counterexample when the row names none
MAX_DETAIL_ITEMS = 6


@dataclass(frozen=True)
class Margin:
    """By how much a comparison fails, at its worst component.

    Attributes
    ----------
    kind
        ``"ratio"`` (measured / printed, for an inequality with a positive right side) or
        ``"excess"`` (how far the measured value lies beyond the printed one).
    value
        The ratio or the excess at the worst failing component.
    measured, printed
        The two sides at that component.
    relation
        The row's relation (``<=``, ``>=``, ``==``, ``in``).
    component
        Flat index of the worst failing component (None for a scalar comparison).
    components, failing
        How many components the comparison has, and how many of them fail.
    text
        One sentence saying all that.
    """

    kind: str
    value: float
    measured: float
    printed: float | list
    relation: str
    component: int | None
    components: int
    failing: int
    text: str


@dataclass(frozen=True)
class Tightness:
    """How close what holds comes to its printed bound: worst / printed.

    Attributes
    ----------
    ratio
        The largest measured / printed ratio the source found (1 is tight).
    source
        Where it comes from: a worst case over the function class (PEP), an adversarial
        search, or the instances the claim checked.
    tight
        Whether the source calls the bound attained (None when it does not say).
    text
        One sentence.
    """

    ratio: float
    source: str
    tight: bool | None
    text: str


def _floats(value) -> np.ndarray | None:
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None


def margin(measured, theoretical, relation: str, tolerance=0.0) -> Margin | None:
    """By how much ``measured <relation> theoretical`` fails beyond ``tolerance``.

    Parameters
    ----------
    measured, theoretical
        Scalars or arrays, as a row stores them (``"inf"`` / ``"nan"`` strings allowed);
        for ``in``, ``theoretical`` holds intervals ``(low, high)`` on its last axis.
    relation
        ``<=``, ``>=``, ``==`` or ``in``.
    tolerance
        The row's tolerance value (a scalar or an array broadcastable against the values).

    Returns
    -------
    Margin or None
        The ratio measured / printed at the worst failing component where the relation is
        ``<=`` or ``>=`` and the printed side is positive there (for ``>=`` with a
        non-negative measured side), else the excess beyond the printed value; None when
        no component fails or the values are not numbers.

    Examples
    --------
    >>> margin(1.5, 1.0, "<=").text
    'measured 1.5 is 1.5x the printed bound 1'
    >>> margin([0.5, 3.0], [1.0, -1.0], "<=").text
    'exceeds the printed bound by 4 (measured 3 vs printed -1; component 2 of 2, 1 fails)'
    """
    m, t, tol = _floats(measured), _floats(theoretical), _floats(tolerance)
    if m is None or t is None:
        return None
    tol = np.zeros(()) if tol is None else np.nan_to_num(tol, nan=0.0)
    try:
        if relation == "in":
            if t.shape[-1:] != (2,):
                return None
            m, low, high, tol = np.broadcast_arrays(m, t[..., 0], t[..., 1], tol)
            beyond = np.maximum(low - m, m - high)
            fail = ~(beyond <= tol)
            printed = np.stack([low, high], axis=-1).reshape(-1, 2)
        else:
            m, t, tol = np.broadcast_arrays(m, t, tol)
            with np.errstate(invalid="ignore"):
                ok = {"<=": m <= t + tol, ">=": m >= t - tol, "==": np.abs(m - t) <= tol}
            if relation not in ok:
                return None
            fail = ~ok[relation]
            beyond = {"<=": m - t, ">=": t - m, "==": np.abs(m - t)}[relation]
            printed = t.ravel()
    except ValueError:  # shapes that do not broadcast
        return None
    flat_fail, flat_m = fail.ravel(), m.ravel()
    idx = np.flatnonzero(flat_fail)
    if idx.size == 0:
        return None
    n, k = int(fail.size), int(idx.size)
    ratio_ok = relation in ("<=", ">=") and bool(np.all(printed[idx] > 0)) \
        and bool(np.all(np.isfinite(flat_m[idx]))) \
        and (relation == "<=" or bool(np.all(flat_m[idx] >= 0)))
    if ratio_ok:
        ratios = flat_m[idx] / printed[idx]
        pick = int(np.argmax(ratios) if relation == "<=" else np.argmin(ratios))
        kind, value = "ratio", float(ratios[pick])
    else:
        excess = beyond.ravel()[idx]
        excess = np.where(np.isnan(excess), math.inf, excess)
        pick = int(np.argmax(excess))
        kind, value = "excess", float(excess[pick])
    i = int(idx[pick])
    at_m = float(flat_m[i])
    at_t = printed[i].tolist() if relation == "in" else float(printed[i])
    where = "" if n == 1 else f"; component {i + 1} of {n}, {k} fail" + ("s" if k == 1 else "")
    text = _margin_text(kind, value, at_m, at_t, relation)
    if where:
        text = text[:-1] + where + ")" if text.endswith(")") else f"{text} ({where[2:]})"
    return Margin(kind=kind, value=value, measured=at_m, printed=at_t, relation=relation,
                  component=None if n == 1 else i, components=n, failing=k, text=text)


def _margin_text(kind: str, value: float, m: float, t, relation: str) -> str:
    if kind == "ratio":
        bound = "bound" if relation == "<=" else "lower bound"
        return f"measured {fmt(m, 5)} is {fmt(value, 5)}x the printed {bound} {fmt(t, 5)}"
    if relation == "in":
        return (f"lies {fmt(value)} outside the printed interval (measured {fmt(m)} vs "
                f"printed [{fmt(t[0])}, {fmt(t[1])}])")
    what = {"<=": "exceeds the printed bound by", ">=": "falls short of the printed bound by",
            "==": "differs from the printed value by"}[relation]
    return f"{what} {fmt(value)} (measured {fmt(m)} vs printed {fmt(t)})"


def counterexample(details: dict, attack: dict | None = None) -> dict:
    """The smallest counterexample a row records: its ``smallest_counterexample``,
    ``counterexample``, ``witness`` or ``instance`` detail, else the adversarial search's
    witness, else its scalar details (at most :data:`MAX_DETAIL_ITEMS`).

    Parameters
    ----------
    details
        The row's ``details``.
    attack
        The row's (or its ``attack:`` row's) search summary.

    Returns
    -------
    dict
        ``{name: value}``, empty when the row records nothing.
    """
    for key in WITNESS_KEYS:
        value = details.get(key)
        if value not in (None, {}, [], ""):
            return {key: value}
    witness = (attack or {}).get("witness")
    if witness:
        return {SEARCH_WITNESS: witness}
    scalars = {k: v for k, v in details.items()
               if isinstance(v, int | float | str | bool) and len(str(v)) < 80}
    return dict(list(scalars.items())[:MAX_DETAIL_ITEMS])


def tightness(r: CheckResult, attack: dict | None = None) -> Tightness | None:
    """How close a holding row comes to its printed bound.

    Parameters
    ----------
    r
        A stored row that holds.
    attack
        The search summary joined onto it (``attack:<id>`` row), if any.

    Returns
    -------
    Tightness or None
        From, in this order: the row's PEP worst case (``worst_case["ratio"]``, worst /
        printed over the function class), an adversarial search (``best_ratio``), the
        largest measured / printed over the checked instances of a ``<=`` comparison with a
        positive printed side; None when none applies.
    """
    wc = dict(getattr(r, "worst_case", None) or {})
    if _number(wc.get("ratio")):
        tight = wc.get("tight") if isinstance(wc.get("tight"), bool) else None
        return _tightness(float(wc["ratio"]), "worst case over the function class (PEP)",
                          tight)
    attack = dict(attack or getattr(r, "attack", None) or {})
    if _number(attack.get("best_ratio")):
        tight = attack.get("tight") if isinstance(attack.get("tight"), bool) else None
        return _tightness(float(attack["best_ratio"]), "adversarial search over the "
                          "hypothesis domain", tight)
    m, t = _floats(r.measured), _floats(r.theoretical)
    if r.relation != "<=" or m is None or t is None:
        return None
    try:
        m, t = np.broadcast_arrays(m, t)
    except ValueError:
        return None
    if m.size == 0 or not np.all(t > 0) or not np.all(np.isfinite(m)):
        return None
    return _tightness(float(np.max(m / t)), "largest measured / printed on the checked "
                      "instances", None)


def _tightness(ratio: float, source: str, tight: bool | None) -> Tightness:
    word = "" if tight is None else ("; tight" if tight else "; not tight")
    return Tightness(ratio=ratio, source=source, tight=tight,
                     text=f"reaches {fmt(ratio, 5)} of the printed bound ({source}{word})")


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) \
        and math.isfinite(value)


