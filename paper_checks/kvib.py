r"""K-Vib Example 3.2: the printed worked numbers and their corrected values ([003, Sec. 3];
spec V5; audit part B item 3)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling import isp_variance, optimal_isp_probabilities
from flbounds.sampling.exact import isp_moments
from verify.kvib.example3_2 import EXAMPLE3_2, G

#: the values Example 3.2's hypothesis reads (its printed inputs)
INSTANCE = dict(g=G, budget=2, n_clients=3)
#: printed numbers are given to one decimal: half a unit of the last digit
PRINT_ROUNDING = 0.05


def _rsp_full_participation():
    """d with all three clients and the eq. (5) weights p = K (0.1, 0.3, 0.6) at K = 3."""
    p = 3 * np.array([0.1, 0.3, 0.6])
    d = (G / p[:, None]).sum(axis=0)
    err = d - G.sum(axis=0)
    return p, d, float(err @ err)


@claim("kvib.example3_2.printed_numbers", ref="Example 3.2", kind="example", expected="violated",
       result=EXAMPLE3_2, parts=("norms", "rsp_full"),
       statement="[||g_1||^2, ||g_2||^2, ||g_3||^2] = [1, 3, 6]; RSP full participation gives "
                 "d = (6.4, 5.9) with ||d - sum g||^2 = 0.6.", quick=dict(), full=dict())
def example32_printed(*, rng):
    r"""Recomputed: :math:`\|g\|^2=(1,9,36)` (the printed list is :math:`\|g\|`),
    :math:`d=(6.408, 0.786)` and :math:`\|d-\sum g\|^2=0.355` (:math:`\|d-\sum g\|=0.596`, so the
    printed 0.6 is the unsquared error and 5.9 a misprint). Expected **violated** (typo-level,
    audit part B item 3); the corrected values are ``kvib.example3_2.corrected``. Tolerance:
    half a unit of the printed last digit."""
    _, d, sq = _rsp_full_participation()
    measured = np.concatenate([np.sum(G * G, axis=1), d, [sq]])
    printed = np.array([1.0, 3.0, 6.0, 6.4, 5.9, 0.6])
    return Evidence(measured=measured, theoretical=printed, relation="==", instance=INSTANCE,
                    tolerance=Tolerance.rounding(PRINT_ROUNDING, "printed to one decimal"),
                    details={"norms_squared": np.sum(G * G, axis=1), "d": d,
                             "squared_error": sq, "error": np.sqrt(sq)})


@claim("kvib.example3_2.corrected", ref="Example 3.2 (corrected values)", kind="example",
       corrects="kvib.example3_2.printed_numbers",
       expected="holds", result=EXAMPLE3_2, parts=("norms", "isp_p", "size", "rsp_full"),
       statement="||g|| = (1, 3, 6); ISP p* = (0.25, 0.75, 1) with variance 6 and "
                 "P(|S|=1) = P(|S|=3) = 3/16; RSP at K=3 gives d = (6.41, 0.79), error 0.60.",
       quick=dict(), full=dict())
def example32_corrected(*, rng):
    """All values recomputed from the vectors; the ISP variance and size distribution also by
    enumeration of the 8 subsets. Tolerance: the corrected values are quoted to 1e-2 (d, error)
    or exactly (norms, p*, variance 6, 3/16) up to a few ulp; we use 5e-3 for the two-decimal
    values and 1e-12 for the rest."""
    norms = np.linalg.norm(G, axis=1)
    p = optimal_isp_probabilities(norms, 2)
    mom = isp_moments(G, p)
    _, d, sq = _rsp_full_participation()
    measured = np.concatenate([norms, p, [isp_variance(p, norms), mom.variance,
                                          mom.size_probs[1], mom.size_probs[3]], d, [np.sqrt(sq)]])
    expected = np.array([1, 3, 6, 0.25, 0.75, 1, 6, 6, 3 / 16, 3 / 16, 6.41, 0.79, 0.60])
    tol = np.r_[np.full(10, 1e-12), np.full(3, 5e-3)]
    return Evidence(measured=measured, theoretical=expected, relation="==", instance=INSTANCE,
                    tolerance=Tolerance(tol, "rounding / two decimals",
                                        "closed forms to 1e-12; values quoted to 2 decimals"))
