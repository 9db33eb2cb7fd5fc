"""Hypotheses of the K-Vib results behind each claim, and how the claim's instance meets them.

One reviewed table (claim id -> {hypothesis: True | text}), attached to the claims through
:func:`flbounds.ledger.declare_hypotheses`; a claim's own ``Evidence.hypotheses`` may refine
or add entries at run time. ``True``: the instance meets it; a text: left on purpose, and why.
A claim expected ``violated`` lists every hypothesis of what it targets, all met.
"""

from flbounds.ledger import declare_hypotheses

ISP = {"ISP with sum_i p_i = K, 0 < p_i <= 1 (Remark 2.1)": True}
A51 = {"Assumption 5.1: feedback pi_t(i) in [0, G], |pi_t - pi_*| bounded": True}
THM41 = {"Assumptions 4.1-4.3 (L-smooth f_i, bounded local and global variance)": True,
         "eta = R eta_l eta_g <= 1/(8L)": True}
ONLINE = {**A51, "K-Vib with App. F's settings (theta, gamma from the theory)": True,
          "baselines Vrb, Mabs with App. F's hyper-parameters": True}

declare_hypotheses({
    "kvib.appC1.alpha_printed_sign": {**ISP, "a_i >= 0, not all 0": True},
    "kvib.app_f.baselines_regret_in_k": {**ONLINE, "budgets K on a grid, same T and N": True},
    "kvib.app_f.kvib_steeper_than_baselines": {
        **ONLINE, "budgets K on a grid, same T and N": True},
    "kvib.fig2.variance_panels": {
        "FedProx Synthetic(0, 0), FedAvg with Algorithm 1": True,
        "samplers with App. F's hyper-parameters": True},
    "kvib.fig3c.gamma_sensitivity": {
        **ONLINE, "theta = 0.3, gamma in [0.1, 10] x gamma_0, T = 500 (the paper's horizon)": True},
    "kvib.lemmaD2.printed": {**A51, "FTRL over Delta(p_min), p_i^t < p_i^{t+1}": True},
    "kvib.lemma_b6.per_client": {
        **THM41, "Assumption 4.3 as printed (lambda-average of the dissimilarity)": True,
        "eta_l <= 1/(8R L), r <= R": True},
    "kvib.sec6.beats_baselines": {
        **ONLINE, "Avare as the baselines addendum reconstructs it": True},
    "kvib.thm4_1.bound_a_factor_six": {**THM41},
    "kvib.thm4_1.eq33_no_factor_two": {
        **ISP, "X, Y unbiased ISP estimates under p and p* (Def. 4.1, any coupling)": True},
    "kvib.thm4_1.descent_tightness": {
        "L-smooth f (identical clients, full-batch local steps)": True,
        "eta = R eta_l eta_g <= 1/(8L)": True,
        "sampling": "full participation (Q = 0) on purpose: the sampling terms are checked "
                    "by the Monte Carlo claims"},
    "kvib.thm4_1.eta_g_range_needs_l_le_1": {**THM41, "1 <= eta_g <= max(sqrt(1/L), 1)": True},
    "kvib.thm4_1.last_term_printed": {**THM41, "Lemma B.5's tuning with d = 8L": True},
    "kvib.thm4_1.proof_drops_2_over_r": {"eta_l <= 1/(8RL), R >= 2": True},
    "kvib.thm4_1.rho_positive_not_implied": {**THM41, "gamma^t as the proof defines it": True},
    "kvib.thm4_1.sampling_term_exponent_printed": {**THM41, "Lemma B.5's tuning": True},
    "kvib.thm4_1.sigma2_constant_printed": {**THM41},
    "kvib.thm5_1.proof_average_from_above": {**A51},
    "kvib.thm5_1.proof_pi_star_squared_printed": {**A51},
    "kvib.thm5_1.proof_uncapped_minimum": {**ISP, "feedback pi(i) >= 0": True},
    "kvib.thm_d1.last_term_algebra": {**A51},
    "kvib.thm_d1.pmin_branch_ignored": {
        **A51, "p_min = min{K/(2N), G K/(sqrt6 sum_i sqrt(pi^2_{1:T}(i)))}": True},
    # statements that hold
    "kvib.appC1.delta_star_closed_form": {**ISP, "a_i >= 0": True},
    "kvib.appC1.uncapped_bounds": {**ISP, "K max a <= sum a (no capping)": True},
    "kvib.appE1.stragglers": {**ISP, "availability independent of sampling, q_i > 0": True},
    "kvib.assumption5_1.variation_log": {"pi_t = pi_* + c/sqrt(t)": True},
    "kvib.def_c1.gamma_range": {**ISP, "alpha_* in [0, 1]": True},
    "kvib.eq12.mixing_and_estimates": {**ISP, "theta in [0, 1]": True, **A51},
    "kvib.lemmaD1.be_the_leader": {"FTRL over a fixed convex set K with regularizer R": True},
    "kvib.lemmaD2.corrected": {**A51, "FTRL over Delta(p_min), p_i^t < p_i^{t+1}": True},
    "kvib.lemma_b1.sum_bound": {"c_t in [0, 1]": True},
    "kvib.lemma_b2_b4.norm_inequalities": {"independent zero-mean z_i (second part)": True},
    "kvib.lemma_b5.step_size": {"r0, b, e, d > 0": True},
    "kvib.lemma_b6.averaged": {**THM41, "eta_l <= 1/(8RL), r <= R": True},
    "kvib.thm4_1.oracle_beta1_zero": {**ISP, "optimal ISP from every client's update": True},
    "kvib.thm5_1.capped_regime": {
        **A51, "no capping": "left on purpose: some clients capped at p = 1 (outside the "
                             "proof's regime, inside the statement's)"},
    "kvib.thm5_1.rising_feedback": {**A51, "feedback rising to its limit, no capping": True},
    "kvib.thm5_1.tbfp_bound": {**A51},
    "kvib.thm5_2.k_exponent": {**ONLINE},
    "kvib.thm5_2.k_exponent_settings": {**A51, "theory gamma with G = max feedback": True},
    "kvib.thm5_2.n_exponent": {**ONLINE},
    "kvib.thm5_2.sublinear": {**ONLINE, "theta, gamma at their T-dependent theory values": True},
    "kvib.thm5_2.t_exponent": {**ONLINE},
    "kvib.thm_d1.full_information": {**A51, "full information, gamma = G^2": True},
    "kvib.thm_d1.printed_last_term": {**A51, "full information, gamma = G^2": True},
    # library guards: the statistics the decision rules use, against their definitions
    "kvib.stats.holm_step_down": {"p-values in [0, 1], any dependence between the tests": True},
    "kvib.stats.exact_law_fits": {"noiseless power laws and geometric sequences": True},
    "kvib.stats.mc_se_coverage": {"i.i.d. normal samples (Student's t law exact)": True},
    "kvib.eq28.uniform_isp_variance_exact": {
        **ISP, "uniform p_i = K/N, independent inclusions": True},
})
