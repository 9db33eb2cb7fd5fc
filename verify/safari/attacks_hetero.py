r"""SAFARI's heterogeneous q-condition claims: why no attack searches their bounds
(:func:`flbounds.falsify.unattacked`). Two are outside Theorem 5 by its own per-round
hypothesis, one measures the conclusion with that hypothesis declared outside, and one is an
applicability check of the corrected Theorem 4 on a single instance."""

from __future__ import annotations

from flbounds.falsify import no_attack

NEAR_X_STAR = (
    "expected not-applicable: Theorem 5's per-round q-condition compares G_4 = (1/m) sum_S "
    "[F_i(x_r) - F_i(x*)], first order in x_r - x* and of either sign with heterogeneous "
    "clients, with G_3 = ||grad F(x_r)||^2, second order; once the iterates near {where} "
    "the condition fails on most rounds whatever q and step, so a search over heterogeneous "
    "instances finds no point inside the hypothesis; the homogeneous case is attacked by "
    "safari.thm5.anisotropic_homogeneous_bound")
NOT_ATTACKED = {
    "safari.thm5.anisotropic_heterogeneous": NEAR_X_STAR.format(where="x*"),
    "safari.thm5.q_condition_heterogeneous": NEAR_X_STAR.format(
        where="the biased point (where the participants' F_i(x_r) < F_i(x*), so G_4 < 0)"),
    "safari.thm5.anisotropic_heterogeneous_conclusion": (
        "the conclusion measured with the q-condition declared outside on purpose (the paper "
        "states nothing there): it reports how loose the bound is off its hypotheses (ratios "
        "1e-3 to 1e-2), not a statement of Theorem 5 with a hypothesis domain to search"),
    "safari.thm4.q_condition_min_reading": (
        "an applicability check on one instance: whether the corrected Theorem 4's q-condition "
        "admits q = 0.8 on the instance that refutes the printed theorem; its right side is q "
        "itself, so a search over other instances would ask where the corrected theorem "
        "applies, not test a bound"),
}
for _claim_id, _reason in NOT_ATTACKED.items():
    no_attack(_claim_id, _reason)
