"""TODO."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling import (
    optimal_isp_objective,
)

from .instances import random_weights


@claim("kvib.corollary_b1_b2.uncapped_values", ref="Corollaries B.1 and B.2",
       kind="statement", expected="holds",
       statement="If K a_max <= sum a: with p_min = 0 the optimum is (sum a)^2/K; with "
                 "0 < p_min < K/N it is at most K (sum a)^2/(K - N p_min)^2.",
       quick=dict(n_instances=300), full=dict(n_instances=10000))
def corollary_b1_b2(*, rng, n_instances):
    """B.1 is an equality (rounding tolerance); B.2 an inequality that must hold on every
    instance. Measured: max relative error of B.1 and max of (value - B.2 bound)/bound."""
    err_b1, excess_b2, used = 0.0, -np.inf, 0
    for _ in range(n_instances):
        a = random_weights(rng)
        n = a.size
        k = float(rng.uniform(1, n))
        if k * a.max() > a.sum():
            k = a.sum() / a.max() * rng.uniform(0.5, 1.0)
        if k <= 0.05:
            continue
        used += 1
        err_b1 = max(err_b1, abs(optimal_isp_objective(a, k) - a.sum() ** 2 / k)
                     / (a.sum() ** 2 / k))
        p_min = float(rng.uniform(0, k / n)) * 0.999
        bound = k * a.sum() ** 2 / (k - n * p_min) ** 2
        excess_b2 = max(excess_b2, (optimal_isp_objective(a, k, p_min=p_min) - bound) / bound)
    return Evidence(measured=[err_b1, excess_b2], theoretical=[0.0, 0.0], relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "sums of N <= 200 terms"),
                    details={"instances_used": used})
