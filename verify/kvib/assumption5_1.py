"""TODO."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling.online import (
    Assumption51Feedback,
)


@claim("kvib.assumption5_1.variation_log", ref="Assumption 5.1 (V_T = O(log T))",
       kind="statement", expected="holds",
       statement="For pi_t = pi_* + c/sqrt(t), V_T(i)/log T stays within a factor 2 over "
                 "T in [1e2, 1e5].", quick=dict(n_clients=50), full=dict(n_clients=500))
def variation_log(*, rng, n_clients):
    """V10 second part: V_T = c^2 H_T and H_T/log T decreases from 1.13 to 1.05. Measured: the
    max/min ratio of V_T/log T over the grid (<= 2)."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    ts = np.array([100, 1000, 10000, 100000])
    vals = np.array([fb.variation(int(t)).sum() / np.log(t) for t in ts])
    return Evidence(measured=vals.max() / vals.min(), theoretical=2.0, relation="<=",
                    tolerance=Tolerance.exact("closed-form sums"), details={"ratios": vals})
