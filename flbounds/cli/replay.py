"""``flbounds replay FILE``: re-evaluate stored attack witnesses.

FILE is the ``--json`` output of ``flbounds falsify`` (a list of objects) or one such object.
Each witness is rebuilt with its surface's space and the ratio recomputed on it; the exit code
is 1 when a witness breaks its bound (ratio above the surface's threshold).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ._common import UsageError

HELP = "recompute the ratio of stored attack witnesses (exit 1 if one breaks its bound)"


def add_arguments(p) -> None:
    p.add_argument("file", type=Path, metavar="FILE", help="JSON written by 'falsify --json'")


def _load(path: Path) -> list[dict]:
    if not path.is_file():
        raise UsageError(f"FILE: {str(path)!r} does not exist")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"FILE: {str(path)!r} is not JSON ({exc})") from None
    rows = data if isinstance(data, list) else [data]
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) \
                or not isinstance(row.get("witness"), dict):
            raise UsageError(f"FILE: entry {i} lacks an 'id' and a 'witness' object")
    return rows


def _prepare(rows):
    """(row, surface, instance) per entry; usage errors before any ratio is computed."""
    from flbounds.falsify import get_surface

    out = []
    for row in rows:
        try:
            surface = get_surface(row["id"])
            instance = surface.space.coerce(row["witness"]) if row["witness"] else None
        except ValueError as exc:
            raise UsageError(f"FILE: {row['id']}: {exc}") from None
        out.append((row, surface, instance))
    return out


def run(args) -> int:
    broken = 0
    for row, surface, instance in _prepare(_load(args.file)):
        if instance is None:
            print(f"{row['id']}: no witness stored (no instance was accepted)")
            continue
        ratio = float(surface.ratio(**instance))
        stored = row.get("best_ratio")
        same = isinstance(stored, float | int) and ratio == stored
        breaks = math.isfinite(ratio) and ratio > surface.threshold
        broken += breaks
        print(f"{row['id']}: ratio {ratio!r} (stored {stored!r}, "
              f"{'identical' if same else 'DIFFERS'}); "
              + (f"breaks the bound (> {surface.threshold!r})" if breaks else "within the bound"))
    return 1 if broken else 0
