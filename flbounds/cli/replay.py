"""``flbounds replay FILE``: re-evaluate stored attack witnesses.

FILE is the ``--json`` output of ``flbounds falsify`` (a list of objects) or one such object.
Each witness is rebuilt with its surface's space, its result's hypotheses are evaluated on it,
and the ratio is recomputed. The exit code is 0 when every witness reproduces what the toolkit
expects of its claim: a bound expected to hold is not broken, and a paper error (a claim
expected ``violated``) is broken again, by a witness inside the hypotheses; it is 1 when a
witness breaks a bound expected to hold, no longer breaks one expected to fail, falls outside
its result's hypotheses, or gives a ratio different from the stored one.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ._common import UsageError

HELP = ("recompute stored attack witnesses (exit 1 if one does not reproduce its claim's "
        "expected verdict)")
EXAMPLES = """examples:
  flbounds replay attacks.json    re-evaluate the witnesses of 'flbounds falsify --json'
  flbounds falsify focus.lemma4 --json attacks.json && flbounds replay attacks.json"""


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


def _expected(surface) -> str:
    """The verdict the toolkit expects of the attacked claim."""
    from flbounds.ledger import get

    return surface.expected or get(surface.claim_id).expected


def _outside(surface, instance) -> str:
    """Why the witness is outside its result's hypotheses ('' when inside)."""
    validator = surface.effective_validator()
    if validator is None:
        return ""
    verdict = validator(**instance)
    if isinstance(verdict, str):
        return verdict
    return "" if verdict else "rejected by the surface's validator"


def run(args) -> int:
    unexpected = 0
    for row, surface, instance in _prepare(_load(args.file)):
        if instance is None:
            print(f"{row['id']}: no witness stored (no instance was accepted)")
            continue
        ratio = float(surface.ratio(**instance))
        stored = row.get("best_ratio")
        same = isinstance(stored, float | int) and ratio == stored
        breaks = math.isfinite(ratio) and ratio > surface.threshold
        expected, outside = _expected(surface), _outside(surface, instance)
        as_expected = same and not outside and breaks == (expected == "violated")
        unexpected += not as_expected
        verdict = (f"breaks the bound (> {surface.threshold!r})" if breaks
                   else "within the bound")
        print(f"{row['id']}: ratio {ratio!r} (stored {stored!r}, "
              f"{'identical' if same else 'DIFFERS'}); {verdict}; claim expected {expected}"
              + (f"; outside the hypotheses: {outside}" if outside else "")
              + ("" if as_expected else " -- UNEXPECTED"))
    return 1 if unexpected else 0
