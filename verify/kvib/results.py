"""The coverage table's list of the K-Vib paper's (003) numbered results
(:mod:`flbounds.ledger.coverage`), kept only until the coverage table reads the declared
results: every entry below is now declared with ``result(...)`` in its home module
(``verify/kvib/<result>.py`` or a folder), with its parts, hypotheses and claims; the reasons
given here repeat those of :mod:`verify.kvib.unchecked`. Claims whose ref names no numbered
result (or cites another paper's numbering) are mapped in ``CLAIM_MAP``."""

from flbounds.ledger import declare_results

ASSUMPTION = ("an assumption: a hypothesis of the theorems, recorded in their claims' "
              "hypotheses")
RESULTS = (
    ("Algorithm 1", "FedAvg with an unbiased client sampler"),
    ("Remark 2.1", "constraints on the sampling probability (sum p = K, p > 0)"),
    ("Definition 2.1", "unbiasedness of client sampling, variance eq. (2)"),
    ("Lemma 2.1", "ISP vs RSP variance, eq. (3)"),
    ("Lemma 2.2", "optimal sampling probability, eq. (4)"),
    ("Section 3", "ISP estimates approach full participation; eq. (5)"),
    ("Figure 1", "ISP estimates have lower variance than RSP (scatter and curves)"),
    ("Example 3.1", "ISP vs RSP on a small instance"),
    ("Example 3.2", "worked numbers: RSP full participation, ||d - sum g||^2"),
    ("Definition 4.1", "sampling quality Q(S^t)"),
    ("Assumption 4.1", "smoothness", ASSUMPTION),
    ("Assumption 4.2", "unbiased local gradients with bounded variance", ASSUMPTION),
    ("Assumption 4.3", "bounded global variance", ASSUMPTION),
    ("Theorem 4.1", "FedAvg with arbitrary unbiased client sampling: rate with beta_1, beta_2"),
    ("Assumption 5.1", "convergence of the applied federated optimization (feedback)"),
    ("Theorem 5.1", "bound of the best fixed probability"),
    ("Lemma 5.1", "solution of the FTRL step, eq. (11)"),
    ("Theorem 5.2", "K-Vib's static expected regret with partial feedback"),
    ("Algorithm 2", "K-Vib sampler"),
    ("Figure 2", "dynamic regret, gradient variance and test loss on Synthetic(0, 0)"),
    ("Figure 3", "synthetic data distribution; regret against K; sensitivity to gamma"),
    ("Figure 4", "Federated EMNIST experiments",
     "FEMNIST training at the paper's scale is out of reach of the CPU budget; the "
     "sampler comparisons are checked on the synthetic task (Figures 2-3)"),
    ("Figure 5", "federated text dataset experiments",
     "a language-model task out of reach of the CPU budget; see Figures 2-3"),
    ("Lemma B.1", "sum bound (Borsos et al. 2018, Lemma 13)"),
    ("Lemma B.2", "auxiliary inequality"),
    ("Lemma B.3", "auxiliary inequality"),
    ("Lemma B.4", "auxiliary inequality"),
    ("Lemma B.5", "tuning the step size (Koloskova et al. 2020)"),
    ("Lemma B.6", "upper bound of the local drift (Reddi et al. 2020)"),
    ("Lemma B.7", "arbitrary sampling variance (generalizes Horvath and Richtarik, Lemma 1)"),
    ("Lemma B.8", "optimal ISP probabilities and value, eqs. (25)-(27)"),
    ("Corollary B.1", "uncapped optimal value"),
    ("Corollary B.2", "uncapped optimal value (second form)"),
    ("Appendix C.1", "the optimal ISP variance and its ratio to the uniform one"),
    ("Definition C.1", "the optimal factor, eq. (29)"),
    ("Theorem D.1", "static regret with full information, eqs. (50)-(51)"),
    ("Lemma D.1", "be-the-leader lemma (Kalai and Vempala 2005) and the remark after it"),
    ("Lemma D.2", "monotonicity of 1/p between rounds, eq. (47)"),
    ("Appendix E.1", "stragglers: availability-weighted unbiased estimates"),
    ("Figure 6", "regret of the baselines for different K"),
    ("Figure 7", "gradient variance for different K"),
    ("Appendix G", "O(log N) incremental update of the sampler"),
    ("Released code", "the authors' sampler.py (not in the paper; where it differs)"),
)
CLAIM_MAP = {
    "kvib.appC1.alpha_printed_sign": ("Appendix C.1",),
    "kvib.appC1.delta_star_closed_form": ("Appendix C.1",),
    "kvib.appC1.uncapped_bounds": ("Appendix C.1", "Definition C.1"),
    "kvib.appE1.stragglers": ("Appendix E.1",),
    "kvib.appG.incremental_update": ("Appendix G",),
    "kvib.app_d2.floor_inequality": ("Theorem D.1",),
    "kvib.app_f.adaptive_regret_falls": ("Figure 3", "Figure 6"),
    "kvib.code.no_square_root": ("Released code", "Algorithm 2"),
    "kvib.code.solver_off_by_one": ("Released code",),
    "kvib.eq5.rsp_optimum_bound": ("Section 3", "Lemma 2.1"),
    "kvib.lemma_b1.sum_bound": ("Lemma B.1",),
    "kvib.lemma_b7.rsp_matrix_printed": ("Lemma B.7",),
    "kvib.sec3.optimal_variance_monotone_in_k": ("Section 3",),
    "kvib.sec5.enhanced_rate": ("Theorem 4.1", "Theorem 5.2"),
}

declare_results("kvib", RESULTS, claim_map=CLAIM_MAP)
