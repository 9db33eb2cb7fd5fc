r"""Theorem D.1 of K-Vib, eq. (49): the price of the floor uses
:math:`1/(1-x)^2-1\le6x` on :math:`[0,1/2]`."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim

from . import THM_D1


@claim("kvib.app_d2.floor_inequality", ref="App. D.2, eq. (49)", kind="proof-step",
       expected="holds", result=THM_D1, parts=("eq49",),
       statement="1/(1-x)^2 - 1 <= 6x on [0, 1/2], equality at 0 and 1/2.",
       quick=dict(n_points=100001), full=dict(n_points=10000001))
def floor_inequality(*, rng, n_points):
    """Convexity: the left side is convex, equal to 6x at both ends, so it lies below the chord.
    Measured on a grid: max of lhs - 6x (<= 0 up to rounding) and the gaps at the two ends."""
    x = np.linspace(0, 0.5, n_points)
    gap = 1 / (1 - x) ** 2 - 1 - 6 * x
    return Evidence(measured=[float(gap.max()), abs(gap[0]), abs(gap[-1])],
                    theoretical=[0.0, 0.0, 0.0], relation="<=", instance=dict(x=x),
                    tolerance=Tolerance.rounding(1e-14, "a few ulp at values <= 4"))
