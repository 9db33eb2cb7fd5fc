"""Hypotheses of the FOCUS results behind each claim, and how the claim's instance meets them.

One reviewed table (claim id -> {hypothesis: True | text}), attached to the claims through
:func:`flbounds.ledger.declare_hypotheses`; a claim's own ``Evidence.hypotheses`` may refine
or add entries at run time. ``True``: the instance meets it; a text: left on purpose, and why.
A claim expected ``violated`` lists every hypothesis of what it targets, all met.
Assumption numbering as in the paper: A1 arbitrary participation (q_i > 0), A2 L-smoothness,
A3 mu-strong convexity, A4 PL, A5 bounded heterogeneity, A6 unbiased bounded-variance noise.
"""

from flbounds.ledger import declare_hypotheses

A1 = {"A1: every client participates with q_i > 0 (Bernoulli)": True}
SC = {"A2-A3: every f_i L-smooth and mu-strongly convex (quadratics)": True}
SMOOTH = {"A2: every f_i L-smooth": True}
NOISE = {"A6: unbiased gradient noise with variance sigma^2": True}

declare_hypotheses({
    # paper errors (expected violated): every hypothesis met
    # statements that hold
    # other statements, lemmas and their corrected forms
    "focus.assumption1.moments_match_plans": {
        "the participation processes of Assumption 1's cases 2, 3, 3a": True},
    "focus.cor3.rate_tightness": {**SC, "identical clients": True,
                                  "eta <= min{1/(3L), 1/(4(tau-1)L)}": True},
    "focus.cor3.mc_below_worst_case": {**SC, "identical clients": True,
                                       "eta <= min{1/(3L), 1/(4(tau-1)L)}": True},
    "focus.eq6_7.fedavg_graph_form": {"any participation sequence": True},
    "focus.exactness.logistic": {
        **A1, **SMOOTH, "F strongly convex (L2-regularized logistic)": True,
        "step": "from Theorem 1(a)'s bound up to larger steps on purpose (exactness beyond "
                "the theorem's step)"},
    "focus.exactness.quadratic": {
        **A1, **SC, "step": "from Theorem 1(a)'s bound up to larger steps on purpose"},
    "focus.exactness.ridge": {
        **A1, **SC, "step": "from Theorem 1(a)'s bound up to larger steps on purpose"},
    "focus.lemma3.descent": {**A1, **SC, "eta <= 1/(3L(tau-1)) and the proof's conditions": True},
    "focus.sec5_1.fixed_point": {"any step, tau and participation set": True},
    "focus.sec5_1.tracking_invariant": {"deterministic and stochastic gradients": True},
    # library guards: the statistics the decision rules use, against their definitions
    "focus.stats.holm_step_down": {"p-values in [0, 1], any dependence between the tests": True},
    "focus.stats.exact_law_fits": {"noiseless power laws and geometric sequences": True},
    "focus.stats.mc_se_coverage": {"i.i.d. normal samples (Student's t law exact)": True},
    "focus.cor3.worst_case_attained": {
        **SC, "identical clients (common minimizer)": True, "eta <= 1/L": True},
})
