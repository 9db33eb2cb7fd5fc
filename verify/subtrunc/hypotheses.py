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
    # statements that hold
    "subtrunc.eq9.triangle_bound": {"nearest-representative clusters, gamma_j = |C_j|": True},
    "subtrunc.greedy.ratio_w": {"W monotone submodular (Prop 3), |S| <= k": True},
    "subtrunc.greedy.stochastic": {"W monotone submodular, sample size r": True},
    "subtrunc.intro.nondecreasing_concave": {"f monotone submodular": True,
                                             "psi nondecreasing concave": True},
    "subtrunc.lemma1.one_round": {**LEMMA1, "any selection rule": True},
    "subtrunc.lemma3.local_growth": {**LEMMA1},
    "subtrunc.prop1.truncation": {"g monotone submodular, b > 0": True},
    "subtrunc.prop2.linear_combination": {"g_j submodular, alpha_j >= 0": True},
    "subtrunc.prop3.exhaustive": {"phi(f_i) >= 0, phantom or DivFL offset for G": True},
    "subtrunc.prop3.sampled_n100": {"phi(f_i) >= 0": True},
    "subtrunc.prop4.statement": {"a fixed window of past selections": True},
    "subtrunc.thm1.end_to_end": {**LEMMA1, "eta = 1/(L E sqrt K), K >= 9": True,
                                 "Assumption 3 (bounded bias gamma)": True},
    "subtrunc.unionfl.distorted_greedy": {"G monotone submodular, c modular >= 0": True},
    "subtrunc.lemma2.gradient_error": {"eta L E <= 1/3": True, "L-smooth f_i": True,
                                       "unbiased noise, E||xi||^2 = sigma^2": True},
    "subtrunc.eq17.sample_uniform_each_step": {
        "modular objective with distinct weights (one maximizer in every R)": True,
        "R drawn from N minus S, as in [33]": True},
})
