r"""Monte Carlo means against a PEP envelope :math:`\rho^r e_0` (shared by the MC claims).

When one round satisfies :math:`E[e_{r+1} \mid \text{past}] \le \rho\, e_r` for every state
(:math:`\rho` the exact worst case over the class), the mean error obeys
:math:`E e_r \le \rho^r e_0`; a correct implementation stays below it, and a biased one whose
error floors or decays too slowly crosses it long before it crosses the printed rate's.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance
from flbounds.pep import gap_tolerance


def envelope_evidence(errors, rho, *, details=None, worst_case=None) -> Evidence:
    """Evidence ``mean_r <= e_0 rho^r`` for ``errors`` of shape (n_runs, n_rounds + 1), all runs
    from the same start.

    Tolerance: 4 Monte Carlo standard errors, n ulp of the mean of n equal values, and the SDP
    accuracy carried to the r-th power (:math:`r \\cdot` ``gap_tolerance(rho)/rho`` relative).
    """
    errors = np.asarray(errors, dtype=float)
    n_runs, n_points = errors.shape
    r = np.arange(n_points)
    envelope = errors[0, 0] * rho**r
    mean = errors.mean(axis=0)
    se = errors.std(axis=0, ddof=1) / np.sqrt(n_runs)
    eps = np.finfo(float).eps
    tol = 4 * se + n_runs * eps * envelope + envelope * r * gap_tolerance(rho) / rho
    info = {"rho_pep": float(rho),
            "max_ratio_to_envelope": float(np.max(mean[1:] / envelope[1:])),
            "final_mean": float(mean[-1]), "final_envelope": float(envelope[-1])}
    return Evidence(measured=mean, theoretical=envelope, relation="<=",
                    tolerance=Tolerance(tol, "4 MC SE + n ulp + SDP accuracy",
                                        "k std/sqrt(n), k = 4; mean of n equal values; "
                                        "r * 1e-6 relative error of rho_PEP^r"),
                    details={**info, **(details or {})}, worst_case=worst_case)
