"""Hypotheses of the SAFARI results behind each claim, and how the claim's instance meets them.

One reviewed table (claim id -> {hypothesis: True | text}), attached to the claims through
:func:`flbounds.ledger.declare_hypotheses`; a claim's own ``Evidence.hypotheses`` may refine
or add entries at run time. ``True``: the instance meets it; a text: left on purpose, and why.
A claim expected ``violated`` lists every hypothesis of what it targets, all met.
"""

from flbounds.ledger import declare_hypotheses

THM4 = {"A3-A5: L-smooth F_i, unbiased noise with bounded variance, bounded sigma_G^2": True,
        "eta_c = 2 eta_s / K <= 1/(4 sqrt(30) L K)": True}

declare_hypotheses({
    "safari.assumption2.endpoint_target": {
        "the 1-D threshold example: D = U[a', b'], P = U[a, b]": True, "beta = 1": True},
    "safari.assumption2.example_fails_outside": {
        "the 1-D threshold example (a = 0, b = 1, a' = 0.4, b' = 0.5, t* = 0.49)": True,
        "alpha = 1 - (b' - a')/(b - a), beta = 1 as printed": True},
    "safari.digits.literal_single_server_step": {
        "Algorithm 1 as printed: one server SGD step per server round": True,
        "p = 1, s = 4, n_T = 200, the experiments' lr and batch size": True},
    "safari.remark6.safari_escapes_ball": {**THM4, "incomplete participation (q < 1)": True},
    "safari.tables.fmnist_fedavg_consistent": {"Tables 6 and 7's printed numbers": True},
    "safari.tables.m_negative_effect_text": {"Tables 10-11's printed numbers": True},
    "safari.thm1.binomial_parameter": {"s_hat ~ B(Mn, eps) as printed": True},
    "safari.thm2.gain_matches_centralized": {
        "Assumption 1 (realizable, beta_Q = 1)": True, "Assumption 2 with beta >= 1": True,
        "incomplete participation: supp D misses part of supp P (the paper's setting)": True},
    "safari.thm4.printed_bound": {
        **THM4, "the q-condition with G_1, G_2 = max over rounds, per seed": True},
    "safari.thm4.printed_bound_small_q": {
        **THM4, "the q-condition with G_1, G_2 = max over rounds, per seed": True},
    "safari.thm4.proof_eta_s_power": {**THM4},
    "safari.thm4.proof_max_bounding": {
        **THM4, "the q-condition with G_1, G_2 = max over rounds": True},
    "safari.thm5.printed_closed_form_homogeneous": {
        "A3-A5 with mu-strong convexity": True, "homogeneous instance (sigma_G = 0)": True},
    "safari.thm5.q_condition_constants": {
        "eta_c K = 2 eta_bar / mu, eta_s = eta_bar (L + mu)/(2 L mu)": True},
    # statements that hold
    "safari.assumption2.mixture_alpha": {"Q = l1 U[a', b'] + l2 U[a, b], realizable": True},
    "safari.cor1.linear_speedup": {**THM4, "eta_s = sqrt(mK/R), sigma_s^2 = sigma^2/(mK)": True},
    "safari.cor2.rate": {"A3-A5 with mu-strong convexity, homogeneous clients": True,
                         "eta_bar = 2 log R / R": True},
    "safari.thm1.client_level": {"incomplete participation (m < M)": True},
    "safari.thm1.failure_probability": {"incomplete participation (omega = m/M < 1)": True},
    "safari.thm1.independent_of_n": {"incomplete participation (omega = m/M < 1)": True},
    "safari.thm2.pooled_rate": {"Assumption 1 (realizable / Massart, beta_Q = 1)": True,
                                "Assumption 2 with beta = 1": True},
    "safari.thm3.no_worse_than_centralized": {
        "covariate shift (h*_Q = h*_P) and condition (i)": True},
    "safari.thm4.homogeneous_bound": {**THM4, "the q-condition, per seed": True},
    "safari.thm4.q_condition_min_reading": {
        **THM4, "q-condition (min reading)": "not met at q = 0.8 on purpose: the claim "
                                             "shows the corrected theorem does not apply"},
    "safari.thm5.homogeneous_bound": {"A3-A5 with mu-strong convexity": True,
                                      "the per-round q-condition (proof's linear form)": True},
    "safari.thm4.tightness": {
        **THM4, "sigma = sigma_s = sigma_G = 0 (identical clients, no noise)": True},
    "safari.thm5.tightness": {
        "A3-A5 with mu-strong convexity, identical clients, no noise": True,
        "the per-round q-condition (proof's linear form, imposed in the SDP)": True},
    "safari.thm5.hetero_tightness": {
        "A3-A5 with every client mu-strongly convex, no noise (sigma = sigma_s = 0)": True,
        "A5 (sigma_G^2 = s ||x_r - x*||^2)": "imposed where gradients are taken (a "
                                               "relaxation: the SDP value bounds the worst "
                                               "case from above)",
        "the per-round q-condition for every drawable set (imposed in the SDP)": True},
    "safari.thm5.mc_below_worst_case": {
        "A3-A5 with mu-strong convexity, identical clients, no noise": True,
        "the per-round q-condition (proof's linear form)": True},
    "safari.thm5.q_condition_heterogeneous": {
        "A3-A5 with mu-strong convexity": True,
        "the per-round q-condition": "checked per round; the bound is tested where it holds"},
    # library guards: the statistics the decision rules use, against their definitions
    "safari.stats.holm_step_down": {"p-values in [0, 1], any dependence between the tests": True},
    "safari.stats.exact_law_fits": {"noiseless power laws and geometric sequences": True},
    "safari.stats.clopper_pearson_exact": {"K ~ Bin(n, p), any p in (0, 1)": True},
    "safari.stats.mc_se_coverage": {"i.i.d. normal samples (Student's t law exact)": True},
})
