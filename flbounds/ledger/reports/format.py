"""Short human forms of the values a report shows."""

from __future__ import annotations

__all__ = ["fmt"]


def fmt(value, digits: int = 4) -> str:
    """Short human form of a measured/theoretical value (scalar, interval or array)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return f"{value:.{digits}g}"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        flat = _flatten(value)
        if len(flat) <= 4:
            return "[" + ", ".join(fmt(v, digits) for v in flat) + "]"
        nums = [v for v in flat if isinstance(v, int | float)]
        if nums:
            return f"{len(flat)} values in [{min(nums):.{digits}g}, {max(nums):.{digits}g}]"
    return str(value)


def _flatten(values) -> list:
    out = []
    for v in values:
        out.extend(_flatten(v) if isinstance(v, list) else [v])
    return out
