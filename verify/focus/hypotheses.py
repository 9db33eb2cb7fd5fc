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
    "focus.assumption1.case3_weights_are_q": {
        "Case 3: m of N clients drawn without replacement, categorical weights w_i": True},
    "focus.assumption1.case3a_printed": {
        "Case 3a: uniform sampling of m of N clients without replacement": True},
    "focus.eq33.consensus_limit_printed": {
        "R primitive and row-stochastic, p its left Perron vector": True},
    "focus.eq5.pull_mean_printed": {
        **A1, "R(S_r) built as Sec. 3 defines it (server row first)": True},
    "focus.fig1.doubly_stochastic_formula": {
        "Figure 1's instance as printed (S = {1, 3})": True},
    "focus.fig9.sg_focus_most_accurate": {
        **A1, **SMOOTH, **NOISE, "high heterogeneity across clients": True,
        "arbitrary (passive and active) participation": True},
    "focus.lemma4.proof_step_104": {"q in (0, 1]": True},
    "focus.lemma4.rare_participation": {
        **A1, **SC, "eta <= min{q^{3/2}/(8L sqrt N), q^{3/2}/(8L(tau-1))}": True,
        "a reachable state of FOCUS": True},
    "focus.lemma5.sg_descent_printed": {
        **A1, **SC, **NOISE,
        "eta <= min{mu/(128(tau-1)^2 L^2 N), 1/(2 sqrt2 (tau-1) L)}": True},
    "focus.thm1a.step_condition_gap": {
        **A1, **SC, "eta at Theorem 1(a)'s printed bound": True},
    "focus.thm1b.proof_step_113": {
        "eta <= min{1/(4LN), 1/(2(tau-1)LN)} (the step (113) cites)": True},
    "focus.thm3.printed_bound": {
        **A1, **SC, "eta <= min{1/(3L), 1/(4(tau-1)L)}": True},
    "focus.thm6.printed_bound": {
        **A1, **SMOOTH, **NOISE, "eta at Theorem 6's bound": True,
        "F lower bounded": True},
    # statements that hold
    "focus.thm1a.mc_below_bound": {
        **A1, **SC, "eta <= min{3mu/(27NL^2), 1/(3L(tau-1)), q_min^{3/2}/(8L sqrt N)}": True},
    "focus.thm1a.fitted_rate": {
        **A1, **SC, "eta at Theorem 1(a)'s printed bound": True},
    "focus.thm1b.printed_rate": {
        **A1, **SMOOTH, "A4: F PL with beta = lambda_min(mean A)": True,
        "eta <= Theorem 1(b)'s bound plus the proof's 1/(4LN), 1/(2(tau-1)LN)": True},
    "focus.thm1b.printed_rate_scalar_pl": {
        **A1, **SMOOTH, "A4: F PL (beta = 1/32), f_i non-convex": True,
        "eta <= Theorem 1(b)'s bound plus the proof's 1/(4LN), 1/(2(tau-1)LN)": True},
    "focus.thm1b.repaired_rate": {
        **A1, **SMOOTH, "A4: F PL with beta = lambda_min(mean A)": True,
        "eta <= Theorem 1(b)'s bound and 3 q_min/(128 N)": True},
    "focus.thm1c.nonconvex_rate": {
        **A1, **SMOOTH, "F lower bounded (non-convex logistic + penalty)": True,
        "eta <= min{1/(2L(tau-1)), q^{3/2}/(8L sqrt N), q/(16L sqrt(2N)), 1/(4LN)}": True},
    "focus.thm1c.no_floor": {
        **A1, **SMOOTH,
        "step": "10x and 100x Theorem 1(c)'s bound on purpose: exactness, not the rate"},
})
