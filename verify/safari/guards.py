r"""Theorem 1 of [000]: the event of the impossibility proof, its probability by exact counting.

The proof's construction draws :math:`Mn` samples; :math:`\hat s \sim \mathrm{Bin}(Mn,
(1-\omega)/2)` counts those of the rare point and the learner fails when :math:`\hat s <
(1-\omega)Mn`, :math:`\omega = m/M`. The Thm 1 claims take this probability from
:func:`flbounds.pac.impossibility_event_probability`; here it is recounted with exact rational
arithmetic on small instances, where the strict inequality matters most.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.pac import impossibility_event_probability


def exact_event_probability(n_clients: int, n_participating: int, n_samples: int) -> Fraction:
    r""":math:`P[\mathrm{Bin}(Mn, (1-\omega)/2) < (1-\omega)Mn]` as an exact fraction."""
    total = n_clients * n_samples
    p = Fraction(n_clients - n_participating, 2 * n_clients)
    threshold = Fraction((n_clients - n_participating) * n_samples)
    return sum((comb(total, j) * p**j * (1 - p) ** (total - j)
                for j in range(total + 1) if j < threshold), Fraction(0))


@claim("safari.thm1.event_probability_exact", ref="Thm 1; proof (App. A)", kind="proof-step",
       expected="holds",
       statement="The failure event of the Thm 1 construction is s < (1 - m/M) M n with "
                 "s ~ Bin(M n, (1 - m/M)/2); its probability as the Thm 1 claims use it.",
       quick=dict(max_clients=6, max_samples=5), full=dict(max_clients=10, max_samples=12))
def event_probability_exact(*, rng, max_clients, max_samples):
    """Every 1 <= m < M <= max_clients and 1 <= n <= max_samples. Measured: the largest
    |library - exact rational count|. Tolerance: rounding of a binomial CDF, 1e-12."""
    del rng  # deterministic grid
    worst, cases = 0.0, 0
    for big_m in range(2, max_clients + 1):
        for m in range(1, big_m):
            for n in range(1, max_samples + 1):
                exact = exact_event_probability(big_m, m, n)
                worst = max(worst, abs(impossibility_event_probability(big_m, m, n)
                                       - float(exact)))
                cases += 1
    return Evidence(measured=worst, theoretical=0.0, relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "binomial CDF of <= 120 terms in "
                                                 "float64, error ~1e-15"),
                    details={"cases": cases})
