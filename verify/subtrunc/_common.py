"""Shared pieces of the set-function claims of SubTrunc: the rounding tolerance of exhaustive
margins, margins scaled by the function's size, and the monotone submodular families of
spec V2 (no claims are registered here)."""

from __future__ import annotations

from flbounds.ledger import Tolerance
from flbounds.selection import (
    ConcaveOfModular,
    FacilityLocation,
    PartitionMatroidRank,
    WeightedCoverage,
)

from .instances import random_dissim

ROUNDING = Tolerance.rounding(1e-9, "margins are divided by max(1, |f(N)|); float64 sums of "
                              "<= n^2 terms err by ~n^2 eps << 1e-9")


def _scaled(margins, f) -> tuple[float, float]:
    scale = max(1.0, abs(f.value(range(f.n))))
    return margins.dr_min / scale, margins.mono_min / scale


def _prop1_family(r, n):
    """One monotone submodular g from the families of spec V2."""
    kind = int(r.integers(0, 4))
    if kind == 0:
        return "facility_location", FacilityLocation(random_dissim(r, n))
    if kind == 1:
        m = 2 * n
        return "weighted_coverage", WeightedCoverage(r.random((n, m)) < 0.3, r.exponential(size=m))
    if kind == 2:
        conc = str(r.choice(["sqrt", "log1p", "min"]))
        w = r.exponential(size=n)
        return f"concave_of_modular_{conc}", ConcaveOfModular(w, conc, cap=float(w.sum() / 2))
    return "partition_matroid_rank", PartitionMatroidRank(r.integers(0, 3, size=n),
                                                          r.integers(1, 4, size=3))
