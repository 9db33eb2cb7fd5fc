"""TODO."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim


@claim("kvib.lemma_b5.step_size", ref="Lemma B.5 (Koloskova et al. 2020)", kind="statement",
       expected="holds",
       statement="eta = min{(r0/(bT))^{1/2}, (r0/(eT))^{1/3}, 1/d} has eta <= 1/d and "
                 "Psi_T <= 2 (b r0/T)^{1/2} + 2 e^{1/3} (r0/T)^{2/3} + d r0/T.",
       quick=dict(n_instances=5000), full=dict(n_instances=200000))
def lemma_b5(*, rng, n_instances):
    """Random log-uniform (r0, b, e, d, T). Measured: max of Psi/RHS - 1 (must be <= 0)."""
    r0, b, e, d = (10.0 ** rng.uniform(-4, 4, n_instances) for _ in range(4))
    t = 10.0 ** rng.uniform(0, 6, n_instances)
    eta = np.minimum(np.minimum(np.sqrt(r0 / (b * t)), np.cbrt(r0 / (e * t))), 1 / d)
    psi = r0 / (eta * t) + b * eta + e * eta**2
    rhs = 2 * np.sqrt(b * r0 / t) + 2 * np.cbrt(e) * (r0 / t) ** (2 / 3) + d * r0 / t
    return Evidence(measured=[float(np.max(psi / rhs - 1)), float(np.max(eta * d - 1))],
                    theoretical=[0.0, 0.0], relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "a few ulp of the ratios"))
