r"""Theorem 4.1 of K-Vib, proof step before eq. (31): ":math:`10RL^2\eta_l^2` dominates
:math:`2/R` with :math:`R\ge2`" (spec section 6 item 8)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim

from . import THM4_1, admissible_instance


@claim("kvib.thm4_1.proof_drops_2_over_r", ref="Proof of Thm 4.1, App. C.2 before eq. (31) "
       "('10 R L^2 eta_l^2 dominates ... with R >= 2')", kind="proof-step", expected="violated",
       result=THM4_1, parts=("eq31_drop",),
       statement="Under the step condition eta_l <= 1/(8RL) used next, 10 R L^2 eta_l^2 >= 2/R, "
                 "so the 2 sigma_l^2/R term may be dropped.",
       quick=dict(max_local_steps=50), full=dict(max_local_steps=1000))
def proof_drops_2_over_r(*, rng, max_local_steps):
    r"""With :math:`\eta_l\le1/(8RL)`,
    :math:`10RL^2\eta_l^2\le\frac{10}{64R}<\frac2R` for every R, so the kept coefficient never
    dominates the dropped one; the ratio is at most 10/128. Measured: the largest ratio
    :math:`10RL^2\eta_l^2/(2/R)` over R = 2..max and the admissible extreme
    :math:`\eta_l=1/(8RL)` (L = 1; the ratio is scale-free). The claimed relation is ratio >= 1.
    Every hypothesis of the statement holds on each R (two identical scalar quadratics,
    :math:`\sigma_l=\sigma_g=0`, N = 2, K = 1, :math:`\eta_g=1`, the step at its limit);
    the ratio is 10/128 at every R, so the smallest instance is R = 2.
    Expected **violated**; the corrected :math:`\sigma^2` keeps :math:`+2\sigma_l^2/R`
    (spec section 6 item 8). Our FL checks use :math:`\sigma_l=0`, where the slip is harmless."""
    ratios = [10 * r * (1 / (8 * r)) ** 2 / (2 / r) for r in range(2, max_local_steps + 1)]
    local_steps = np.arange(2, max_local_steps + 1)
    return Evidence(measured=max(ratios), theoretical=1.0, relation=">=",
                    instance=[admissible_instance(L=1.0, R=int(r), step=1 / (8 * r))
                              for r in local_steps],
                    tolerance=Tolerance.exact("closed form"),
                    details={"ratio_bound": 10 / 128})
