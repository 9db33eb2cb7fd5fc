"""SAFARI bound claims without an attack, and why (:func:`flbounds.falsify.unattacked`); the
attack surfaces live beside the results they attack (``thm1/``, ``thm4/``, ``thm5/``,
``assumption2/``)."""

from __future__ import annotations

from flbounds.falsify import no_attack

REFUTED = ("the printed statement is refuted by a deterministic witness inside its hypotheses "
           "(expected violated, shrunk instance in the claim); searching for larger ratios "
           "adds nothing")
PEP = ("a tightness claim: performance estimation gives the worst case over the whole "
       "function class and every state meeting the q-condition, an upper bound on any ratio "
       "a search could find")
THM5_SAME = ("Theorem 5's bound on identical clients is attacked exactly over its domain "
             "(safari.thm5.anisotropic_homogeneous_bound: exact E||x_R - x*||^2, L/mu up to "
             "20, q down to 0.01, m up to 16, eta_s up to its limit, R from 1); this claim "
             "evaluates the same bound at the corollary's steps")
THM4_SAME = ("Theorem 4's bound on identical clients is attacked exactly over its domain "
             "(safari.thm4.homogeneous_bound: exact averages, q down to 0.01, m up to 16, "
             "eta_s up to its limit); this claim evaluates the same bound at the corollary's "
             "steps")
NOT_ATTACKED = {
    "safari.cor1.stationarity_biased": REFUTED,
    "safari.thm4.printed_bound": REFUTED,
    "safari.thm4.printed_bound_shrunk": REFUTED,
    "safari.thm4.printed_bound_small_q": REFUTED,
    "safari.thm4.proof_max_bounding": REFUTED,
    "safari.thm4.tightness": PEP,
    "safari.thm5.hetero_tightness": PEP,
    "safari.thm5.mc_below_worst_case": PEP,
    "safari.thm5.tightness": PEP,
    "safari.thm1.event_probability_exact": (
        "the library's failure probability against the exact rational binomial count at every "
        "1 <= m < M and n up to the claim's limits (exhaustive): a residual to rounding, not "
        "a ratio; Theorem 1's bound is attacked by safari.thm1.event_probability"),
    "safari.thm5.homogeneous_bound": THM5_SAME,
    "safari.thm5.large_step_printed": (
        "one shrunk counterexample evaluated exactly; the printed bound over the whole "
        "identical-client domain is attacked by safari.thm5.anisotropic_homogeneous_bound, "
        "whose search starts from this witness"),
    "safari.cor2.rate": THM5_SAME,
    "safari.cor2.rate_anisotropic": THM5_SAME,
    "safari.cor1.rate_first_sentence": THM4_SAME,
    "safari.cor1.linear_speedup": THM4_SAME,
    "safari.thm1.failure_probability": (
        "Theorem 1's bound is attacked exactly by safari.thm1.event_probability (the exact "
        "probability of the failure event over the whole (M, m, n) domain); this claim "
        "measures the failure frequency of four learners with Clopper-Pearson limits"),
    "safari.thm1.independent_of_n": (
        "a trend in n (the failure probability does not vanish), not a bound with a "
        "per-instance ratio; the bound is attacked by safari.thm1.event_probability"),
    "safari.thm2.pooled_rate": (
        "an O~ rate read from a slope across sample sizes: no single instance has a ratio "
        "to maximise"),
    "safari.thm3.no_worse_than_centralized": (
        "a comparison of two estimators' error quantiles across sample sizes (a rate "
        "statement): no single instance has a ratio to maximise"),
    "safari.thm3.tsybakov_no_worse_than_centralized": (
        "a comparison of two estimators' error quantiles across sample sizes (a rate "
        "statement): no single instance has a ratio to maximise"),
    "safari.lemma2.server_risk_gap": (
        "a statement with probability 1 - delta over the sample: its left side is a random "
        "variable whose law has no closed form here, checked as a frequency; a search over "
        "Monte Carlo frequencies would select sampling noise"),
}
for _claim_id, _reason in NOT_ATTACKED.items():
    no_attack(_claim_id, _reason)
