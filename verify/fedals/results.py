"""The numbered results of the FedALS paper (001), written from its text, for the coverage
table (:mod:`flbounds.ledger.coverage`): every result, and why no claim checks it where none
does; the numbered definitions and appendix equations that claims check on their own are
listed too. Claims whose ref names no numbered result are mapped in ``CLAIM_MAP``."""

from flbounds.ledger import declare_results

RESULTS = (
    ("Example 1", "deeper layers drift apart more between averagings"),
    ("Figure 1", "average consensus distance per layer while training ResNet-20 (FedAvg)"),
    ("Definition (7)", "the R-round generalization error of Sec. 4.2, eq. (7)"),
    ("Theorem 4.1", "one-round generalization bound: sum_k K(k)(L/mu)(K(k)^2 G_k + ...)"),
    ("Remark 4.2", "partial participation: Case I (with replacement) and Case II bounds"),
    ("Theorem 4.3", "R-round bound: more local steps lower the generalization error"),
    ("Remark 5.1", "training risk against tau"),
    ("Algorithm 1", "FedALS: head every tau steps, body every alpha tau steps"),
    ("Figure 2", "ResNet-20 on SVHN: FedALS vs FedAvg curves",
     "SVHN training at the paper's scale is out of reach of the CPU budget; the accuracy "
     "comparison is checked on the MLP task (Tables 1-2 claims)"),
    ("Figure 3", "fine-tuning OPT-125M on MultiNLI",
     "a language-model fine-tune out of reach of the CPU budget"),
    ("Table 1", "test performance for 5 nodes: FedAvg, FedALS, SCAFFOLD, FedALS+SCAFFOLD"),
    ("Table 2", "accuracy and communication per client against alpha (non-iid)"),
    ("Table 3", "splits of layers between body phi and head h (non-iid, alpha = 10)"),
    ("Lemma A.1", "leave-one-out identities, eqs. (9)-(13)"),
    ("Theorem A.2", "stability-based generalization bound behind Thm 4.1, App. A"),
    ("Theorem B.1", "local SGD generalization bound, eq. (37), proof eqs. (38)-(50)"),
    ("Theorem B.2", "Theorem 4.3 in full, eqs. (53)-(56)"),
    ("Lemma C.1", "identities of the random participation weights, eqs. (62)-(65)"),
    ("Lemma C.2", "identities for Case II, eqs. (66)-(69)"),
    ("Algorithm 2", "FedAvg (local SGD)"),
    ("Algorithm 3", "SCAFFOLD"),
    ("Algorithm 4", "FedALS + SCAFFOLD"),
    ("Released code", "the authors' plotting script (not in the paper; where it differs)"),
    ("Closed form (OLS, iid)", "not in the paper: the exact one-round gap of least squares, "
     "the reference the iid claims compare with"),
)
CLAIM_MAP = {
    "fedals.authors_check.bound_with_kappa": ("Released code", "Theorem 4.1"),
    "fedals.authors_check.kappa_dropped": ("Released code",),
    "fedals.authors_check.plotted_curve_is_bound": ("Released code",),
    "fedals.claim70.iid": ("Remark 4.2",),
    "fedals.claim70.noniid": ("Remark 4.2",),
    "fedals.closed_form.ols_iid": ("Closed form (OLS, iid)",),
    "fedals.def7.literal_is_degenerate": ("Definition (7)",),
    "fedals.thm41.proof_steps": ("Theorem 4.1", "Theorem A.2"),
    "fedals.thm43.eq56_follows_from_thmB1": ("Theorem B.2", "Theorem B.1"),
    "fedals.thm43.eq56_printed": ("Theorem B.2",),
    "fedals.thmB1.proof_steps": ("Theorem B.1",),
}

declare_results("fedals", RESULTS, claim_map=CLAIM_MAP)
