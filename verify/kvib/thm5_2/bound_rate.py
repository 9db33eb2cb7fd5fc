r"""Theorem 5.2's K-exponent decided where it can be: the rate in K of the explicit bound
(App. D.3, eqs. (52)-(54)) that eq. (13) abbreviates, computed exactly (K-Vib).

Eq. (13) is an :math:`\tilde O` upper bound; a finite-K slope of the measured regret cannot
tell :math:`K^{-4/3}` from :math:`K^{-1}` while the explicit bound holds with a margin of
85-130 (``kvib.thm5_2.k_exponent``, ``kvib.thm5_2.explicit_bound``). What the statement
asserts about K is the rate of that explicit bound at the theory's
:math:`\theta=(N/(TK))^{1/3}` with :math:`\bar z=\Theta(K)` (the proof's reading): its
logarithmic derivative :math:`K\,\partial_K\log B` tends to :math:`-4/3` as K grows.
"""

from __future__ import annotations

import sympy as sp

from flbounds.ledger import Evidence, Tolerance, claim

from . import THM5_2

#: the theorem's theta = (N/(TK))^{1/3}
THETA_EXPONENT = sp.Rational(1, 3)


def bound_log_slope_limit(theta_exponent=THETA_EXPONENT) -> sp.Expr:
    r"""Exact :math:`\lim_{K\to\infty}K\,\partial_K\log B(K)` of eqs. (52)-(54), with
    :math:`\theta=(N/(TK))^{a}` (the theorem's :math:`a=1/3`), :math:`\bar z=cK` and the
    feedback term :math:`\sum_i\sqrt{\pi^2_{1:T}(i)}=r` independent of K."""
    N, T, K, G, c, r = sp.symbols("N T K G c r", positive=True)
    theta = (N / (T * K)) ** theta_exponent
    zbar = c * K
    bound = (theta * G**2 * N**2 * T / K
             + (22 * N**sp.Rational(3, 2) * G / (zbar * sp.sqrt(theta * K))
                + 2 * sp.sqrt(6) * N**sp.Rational(3, 2) * G / sp.sqrt(theta * K**3)) * r
             + 22 * G**2 * N**2 / (zbar * theta * K))
    return sp.simplify(sp.limit(sp.simplify(K * sp.diff(sp.log(bound), K)), K, sp.oo))


@claim("kvib.thm5_2.bound_k_rate", ref="Thm 5.2, eq. (13) from App. D.3 eqs. (52)-(54)",
       kind="proof-step", expected="holds", result=THM5_2, parts=("k_rate", "explicit"),
       statement="The explicit bound (52)-(54) at theta = (N/(TK))^{1/3} and zbar = Theta(K) "
                 "falls like K^{-4/3}: lim_K K d/dK log B = -4/3 exactly.")
def bound_k_rate(*, rng):
    """Exact (sympy): the first three terms scale like K^{-4/3}, the last like K^{-5/3}, so the
    limit is -4/3. This is what the K-exponent of eq. (13) can be checked against; the
    measured regret's slope cannot decide it (module docstring). Planted: theta =
    (N/(TK))^{1/2} gives -5/4 (tests)."""
    value = bound_log_slope_limit()
    return Evidence(instance=None, measured=float(value), theoretical=-4 / 3, relation="==",
                    tolerance=Tolerance.rounding(1e-15, "a rational from sympy, as a float"),
                    details={"limit": str(value), "theta_exponent": "1/3",
                             "zbar": "c K (the proof's z_t = Theta(K))"})
