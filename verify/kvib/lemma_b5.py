r"""Lemma B.5 of K-Vib (tuning the step size, Koloskova et al. 2020): the result, its parts,
its hypotheses, its printed bound and its claim.

Statement: for :math:`r_0,d>0`, :math:`b,e\ge0` and :math:`T\ge1`, the step
:math:`\eta=\min\{(r_0/(bT))^{1/2},(r_0/(eT))^{1/3},1/d\}\le1/d` gives
:math:`\Psi_T=\frac{r_0}{\eta T}+b\eta+e\eta^2\le2(br_0/T)^{1/2}+2e^{1/3}(r_0/T)^{2/3}+dr_0/T`
(the printed bound ``kvib.lemma_b5``). Instances carry ``r0``, ``b``, ``e``, ``d``, ``T``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import (
    Evidence,
    Tolerance,
    bound,
    claim,
    hypothesis,
    nonnegative,
    positive,
    result,
)


@hypothesis("constants", "r0 > 0, b >= 0, e >= 0, d > 0, T >= 1")
def constants(*, r0, b, e, d, T):
    r0, b, e, d, T = (np.asarray(v, dtype=float) for v in (r0, b, e, d, T))
    return bool(np.all(r0 > 0) and np.all(b >= 0) and np.all(e >= 0) and np.all(d > 0)
                and np.all(T >= 1))


LEMMA_B5 = result(
    "kvib.lemma_b5", ref="Lemma B.5", title="tuning the step size",
    parts={"step": "the step eta = min{(r0/(bT))^{1/2}, (r0/(eT))^{1/3}, 1/d} is <= 1/d",
           "bound": "Psi_T(eta) <= 2 (b r0/T)^{1/2} + 2 e^{1/3} (r0/T)^{2/3} + d r0/T"},
    hypotheses=(constants,))


@bound("kvib.lemma_b5", ref="Lemma B.5 (step-size choice)",
       constants=(positive("r0"), nonnegative("b"), nonnegative("e"), positive("d"),
                  positive("T", "rounds")),
       quantity="min over the lemma's step of r0/(T eta) + b eta + e eta^2")
def lemma_b5_bound(*, r0, b, e, d, T):
    """2 (b r0/T)^1/2 + 2 e^1/3 (r0/T)^2/3 + d r0/T."""
    return 2 * np.sqrt(b * r0 / T) + 2 * np.cbrt(e) * (r0 / T) ** (2 / 3) + d * r0 / T


@claim("kvib.lemma_b5.step_size", ref="Lemma B.5 (Koloskova et al. 2020)", kind="statement",
       expected="holds", result=LEMMA_B5,
       statement="eta = min{(r0/(bT))^{1/2}, (r0/(eT))^{1/3}, 1/d} has eta <= 1/d and "
                 "Psi_T <= 2 (b r0/T)^{1/2} + 2 e^{1/3} (r0/T)^{2/3} + d r0/T.",
       quick=dict(n_instances=5000), full=dict(n_instances=200000))
def lemma_b5(*, rng, n_instances):
    """Random log-uniform (r0, b, e, d, T). Measured: max of Psi/RHS - 1 (must be <= 0)."""
    r0, b, e, d = (10.0 ** rng.uniform(-4, 4, n_instances) for _ in range(4))
    t = 10.0 ** rng.uniform(0, 6, n_instances)
    eta = np.minimum(np.minimum(np.sqrt(r0 / (b * t)), np.cbrt(r0 / (e * t))), 1 / d)
    psi = r0 / (eta * t) + b * eta + e * eta**2
    rhs = lemma_b5_bound(r0=r0, b=b, e=e, d=d, T=t)
    return Evidence(measured=[float(np.max(psi / rhs - 1)), float(np.max(eta * d - 1))],
                    theoretical=[0.0, 0.0], relation="<=",
                    instance=dict(r0=r0, b=b, e=e, d=d, T=t),
                    tolerance=Tolerance.rounding(1e-12, "a few ulp of the ratios"))
