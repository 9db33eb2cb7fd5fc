"""Hypotheses of the SubTrunc / UnionFL results behind each claim, and how the claim's
instance meets them.

One reviewed table (claim id -> {hypothesis: True | text}), attached to the claims through
:func:`flbounds.ledger.declare_hypotheses`. ``True``: the instance meets it; a text: left on
purpose, and why. A claim expected ``violated`` lists every hypothesis of what it targets,
all met.
"""

from flbounds.ledger import declare_hypotheses

LEMMA1 = {"Assumptions 1-2 (L-smooth f_i, bounded gradient noise sigma^2)": True,
          "eta L E <= 1/3": True}

declare_hypotheses({
    "subtrunc.eq31.noise_bound": {**LEMMA1, "unbiased, independent minibatch noise": True},
    "subtrunc.fl.dissimilarity_falls_with_window": {
        "UnionFL with mu = 1, windows 2 and 10, same data and seeds": True},
    "subtrunc.intro.concave_of_submodular": {
        "f submodular (facility location)": True, "psi concave": True},
    "subtrunc.prop3.printed_phi_hypothesis": {
        "phi monotone nondecreasing and Lipschitz": True, "losses nonnegative": True},
    "subtrunc.prop4.proof": {"U_t a fixed set, S subset T, e not in T": True},
    "subtrunc.sec3c.unionfl_greedy_guarantee": {
        "h_t = G - mu |U_t cap S| with G facility location, mu > 0": True,
        "cardinality constraint |S| = k": True},
    "subtrunc.tables.unionfl_beats_baselines": {
        "Table I's printed numbers, both datasets": True},
    "subtrunc.tables.window_improves_dissimilarity": {
        "Table III's printed numbers": True},
    "subtrunc.thm1.one_minus_zeta_k": {
        "eta = 1/(L E sqrt K), K >= 9": True},
    "subtrunc.thm1.recursion_factor": {
        **LEMMA1, "(1/n) sum_i ||grad f_i||^2 <= 2 L f (nonnegative f_i)": True},
})
