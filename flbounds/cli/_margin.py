"""By how much a verdict misses its expectation: the measured value against the printed one.

:func:`margin` is the line ``check``'s summary prints under each unexpected verdict: the
component where the relation is furthest from holding (the whole value for a scalar), the
measured and printed numbers there, their ratio, and the tolerance the verdict allowed.
"""

from __future__ import annotations

import numpy as np

__all__ = ["margin", "traceback_lines"]


def margin(result) -> str:
    """``measured X vs printed Y (ratio R, component k of n); tolerance T``, or ``""`` when
    the row holds no comparable numbers (an error, a non-numeric value)."""
    try:
        measured = np.asarray(result.measured, dtype=float)
        printed = np.asarray(result.theoretical, dtype=float)
    except (TypeError, ValueError):
        return ""
    if result.measured is None or result.theoretical is None or measured.size == 0:
        return ""
    relation = result.relation
    if relation == "in":
        return _interval_margin(measured, printed) + _tolerance(result)
    try:
        measured, printed = np.broadcast_arrays(measured, printed)
    except ValueError:
        return ""
    m, p = measured.ravel(), printed.ravel()
    if relation == "<=":
        gap = m - p                  # > 0: the bound fails there
    elif relation == ">=":
        gap = p - m
    else:
        gap = np.abs(m - p)
    if not np.isfinite(gap).any():
        return ""
    k = int(np.nanargmax(np.where(np.isfinite(gap), gap, -np.inf)))
    where = f", component {k} of {m.size}" if m.size > 1 else ""
    ratio = f"ratio {m[k] / p[k]:.4g}" if p[k] != 0 else "printed value 0, no ratio"
    text = f"measured {m[k]:.6g} vs printed {p[k]:.6g} ({ratio}{where}"
    if relation == "==":
        text += f"; |difference| {gap[k]:.3g}"
    return text + ")" + _tolerance(result)


def _interval_margin(measured: np.ndarray, interval: np.ndarray) -> str:
    if interval.shape[-1:] != (2,):
        return ""
    try:
        lo, hi = np.broadcast_arrays(measured, interval[..., 0], interval[..., 1])[1:]
        m = np.broadcast_to(measured, lo.shape).ravel()
    except ValueError:
        return ""
    lo, hi = lo.ravel(), hi.ravel()
    outside = np.maximum(lo - m, m - hi)      # > 0: outside the printed interval
    k = int(np.nanargmax(outside))
    where = f", component {k} of {m.size}" if m.size > 1 else ""
    side = "outside" if outside[k] > 0 else "inside"
    return (f"measured {m[k]:.6g} vs printed [{lo[k]:.6g}, {hi[k]:.6g}] ({side} by "
            f"{abs(outside[k]):.3g}{where})")


def _tolerance(result) -> str:
    value = (result.tolerance or {}).get("value")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"; tolerance {value:.3g}"
    return ""


def traceback_lines(result, indent: str) -> list[str]:
    """The stored traceback of a claim that raised, indented (none when it did not)."""
    text = (getattr(result, "traceback", "") or "").rstrip()
    return [indent + line for line in text.splitlines()] if text else []
