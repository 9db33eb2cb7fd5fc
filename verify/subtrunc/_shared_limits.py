"""Shared machinery of the limiting-case claims of Sec. III-A and III-B of SubTrunc (no claims
are registered here)."""

from __future__ import annotations

from flbounds.ledger import Tolerance
from flbounds.selection import phi_values

from .instances import random_dissim, random_losses

EXACT = Tolerance.exact("set equality of selected clients")
QUICK, FULL = dict(n_instances=60, n=30, k=6), dict(n_instances=1000, n=100, k=10)


def _instances(rng, n_instances, n):
    for r in rng.spawn(n_instances):
        d = random_dissim(r, n)
        yield r, d, phi_values(random_losses(r, n), "log1p")


def _mismatches(pairs) -> tuple[int, list]:
    bad = [(a, b) for a, b in pairs if set(a) != set(b)]
    return len(bad), bad[:1]
