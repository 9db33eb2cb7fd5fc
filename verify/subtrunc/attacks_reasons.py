"""SubTrunc bound claims declared without an attack, and why
(:func:`flbounds.falsify.unattacked`)."""

from __future__ import annotations

from flbounds.falsify import no_attack

no_attack("subtrunc.lemma2.proof_step_60", (
    "exact algebra in closed form: with sum tau = E(E-1)/2 and sum tau^2 = (E-1)E(2E-1)/6, "
    "each summed-over-printed coefficient ratio, (E-1)/E, (E-1)(2E-1)/(6E^2) and "
    "(2 s1/n + 9 s2/4)/(E^2 (1/n + 3E/4)), is below 1 for every E >= 1 and n >= 1 and "
    "approaches its supremum as E grows; the claim evaluates E up to 5000 and n up to 1e6"))
