"""The numbered results of the FOCUS paper (002), written from its text, for the coverage
table (:mod:`flbounds.ledger.coverage`): every result, and why no claim checks it where none
does; the numbered equations of the main text that claims check on their own are listed
too. Claims whose ref names no numbered result are mapped in ``CLAIM_MAP``."""

from flbounds.ledger import declare_results

ASSUMPTION = ("an assumption: a hypothesis of the theorems, recorded in their claims' "
              "hypotheses")
RESULTS = (
    ("Table 1", "which methods converge exactly under arbitrary participation"),
    ("Figure 1", "graph of one round and its stochastic matrices (S = {1, 3})"),
    ("Eqs. (3)-(5)", "FedAvg's biased limit; pull / average matrices and their means"),
    ("Assumption 1", "arbitrary participation: exact weights q_i, cases 1-3"),
    ("Figure 2", "FedAvg as a graph", "a drawing; its matrices are checked by the eqs. "
     "(6)-(7) claims"),
    ("Eqs. (6)-(7)", "FedAvg in graph (matrix) form"),
    ("Figure 3", "FOCUS's push-pull illustration", "a drawing; Algorithm 1's matrix form is "
     "checked by focus.eq73_74.fl_equals_push_pull"),
    ("Algorithm 1", "FOCUS"),
    ("Assumption 2", "L-smoothness", ASSUMPTION),
    ("Assumption 3", "mu-strong convexity", ASSUMPTION),
    ("Assumption 4", "PL condition", ASSUMPTION),
    ("Theorem 1", "FOCUS's deterministic rates: (a) strongly convex, (b) PL, (c) non-convex"),
    ("Section 5.1", "exactness and the tracking invariant y = sum_i g_i"),
    ("Figure 4", "FL algorithms compared under arbitrary participation"),
    ("Theorem 2", "SG-FOCUS (informal): rates with an O(eta) noise term, linear speedup"),
    ("Figure 5", "decentralized gradient descent illustration",
     "a drawing of the related-work method; no statement"),
    ("Table 2", "notation", "a notation table; nothing to check"),
    ("Assumption 5", "bounded heterogeneity", ASSUMPTION),
    ("Theorem 3", "FedAvg under arbitrary activation: limsup error bound"),
    ("Figure 6", "FL as a graph with mixing matrices (pull and push rows)",
     "a drawing; the matrices are checked by the App. C claims"),
    ("Figure 7", "equivalent FedAvg in terms of the server model",
     "a drawing; the equivalent form is checked by focus.eq44.virtual_fedavg_matrices"),
    ("Appendix C-D matrix facts", "eqs. (33)-(36), (41)-(45): consensus limit, mass "
     "preservation, virtual FedAvg matrices"),
    ("Lemma 1", "FedAvg descent lemma"),
    ("Lemma 2", "FedAvg consensus error"),
    ("Corollary 1", "FedAvg under uniform sampling"),
    ("Corollary 2", "FedAvg under uniform sampling and a single local update"),
    ("Corollary 3", "FedAvg with homogeneous functions"),
    ("Lemma 3", "FOCUS descent lemma"),
    ("Lemma 4", "FOCUS consensus lemma"),
    ("Algorithm 2", "SG-FOCUS", "run by every claim of Lemmas 5-6, Theorems 4-6 and Figure 9 "
     "(flbounds.algorithms.sg_focus); no claim states a property of the pseudocode alone"),
    ("Assumption 6", "unbiased stochastic gradients with bounded variance", ASSUMPTION),
    ("Lemma 5", "SG-FOCUS descent lemma"),
    ("Lemma 6", "SG-FOCUS consensus lemma"),
    ("Theorem 4", "SG-FOCUS, strongly convex"),
    ("Theorem 5", "SG-FOCUS, PL"),
    ("Theorem 6", "SG-FOCUS, general non-convex, eq. (28)"),
    ("Figure 8", "Dirichlet data distribution (alpha = 0.05)",
     "a picture of the CIFAR-10 data split; no statement"),
    ("Figure 9", "SG-FOCUS vs FedAU, MIFA, SCAFFOLD under stochastic gradients"),
)
SEC3 = ("Eqs. (3)-(5)",)
APP_CD = ("Appendix C-D matrix facts",)
CLAIM_MAP = {
    "focus.eq33.consensus_limit_printed": APP_CD,
    "focus.eq44.virtual_fedavg_matrices": APP_CD,
    "focus.matrices.consensus_example34": APP_CD,
    "focus.matrices.mass_preservation": APP_CD,
    "focus.matrices.push_column_stochastic": APP_CD,
    "focus.matrices.pull_row_stochastic": SEC3 + APP_CD,
    "focus.matrices.average_row_stochastic": SEC3,
    "focus.eq5.average_mean": SEC3,
    "focus.eq5.pull_mean_corrected": SEC3,
    "focus.eq5.pull_mean_printed": SEC3,
    "focus.fedavg.full_participation_point": SEC3,
    "focus.fedavg.mc_mean_is_fixed_point": SEC3,
    "focus.eq6_7.fedavg_graph_form": ("Eqs. (6)-(7)", "Appendix C-D matrix facts"),
    "focus.sec5_1.tau1_full_is_gd": ("Section 5.1",),
    "focus.sec5_1.tracking_invariant": ("Section 5.1",),
}

declare_results("focus", RESULTS, claim_map=CLAIM_MAP)
