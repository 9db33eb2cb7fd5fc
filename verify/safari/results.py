"""The numbered results of the SAFARI paper (000), written from its text, for the coverage
table (:mod:`flbounds.ledger.coverage`): every result, and why no claim checks it where none
does. Claims whose ref names no numbered result are mapped in ``CLAIM_MAP``."""

from flbounds.ledger import declare_results

DEFINITION = "a definition: nothing to check on its own; used by the claims of the results"
RESULTS = (
    ("Definition 1", "generalization and empirical errors", DEFINITION),
    ("Definition 2", "optimal hypothesis", DEFINITION),
    ("Definition 3", "excess error", DEFINITION),
    ("Definition 4", "PAC learnability", DEFINITION),
    ("Theorem 1", "impossibility: FL with incomplete participation is not PAC learnable"),
    ("Assumption 1", "noise condition (beta_Q, alpha_Q)", "an assumption: met with beta_Q = 1 "
     "by the realizable threshold instances of the Theorem 2-3 claims (their docstrings)"),
    ("Assumption 2", "(alpha, beta)-positively-related client and server distributions"),
    ("Theorem 2", "generalization error bound for SA-FL, eq. (1)"),
    ("Figure 1", "diagram of distribution supports (threshold example in the claims)"),
    ("Theorem 3", "conditions under which SA-FL is no worse than centralized learning"),
    ("Remark 1", "server-side datasets are available in practice",
     "motivation about deployed systems; no mathematical content to check"),
    ("Remark 2", "the server data may come from P' != P (Theorems 2-3 extend)"),
    ("Algorithm 1", "SAFARI: client rounds with probability q, server SGD rounds otherwise"),
    ("Assumption 3", "L-Lipschitz gradients",
     "an assumption: a hypothesis of Theorems 4-5 (see their claims' hypotheses)"),
    ("Assumption 4", "unbiased stochastic gradients with bounded variance",
     "an assumption: a hypothesis of Theorems 4-5 (see their claims' hypotheses)"),
    ("Assumption 5", "bounded gradient dissimilarity sigma_G",
     "an assumption: a hypothesis of Theorems 4-5 (see their claims' hypotheses)"),
    ("Theorem 4", "SAFARI's non-convex rate under the q-condition"),
    ("Remark 3", "SAFARI's biased limit / error floor without the q-condition"),
    ("Corollary 1", "linear speedup in the non-convex case"),
    ("Theorem 5", "SAFARI's strongly convex rate under the q-condition"),
    ("Corollary 2", "strongly convex rate with tuned steps"),
    ("Remark 4", "Theorem 5 mitigates incomplete participation",
     "a paraphrase of Theorem 5, checked by the Theorem 5 claims"),
    ("Remark 5", "SAFARI contains FedAvg and server-only SGD as special cases"),
    ("Remark 6", "FedAvg keeps a sigma_G error ball; SAFARI does not"),
    ("Table 1", "FedAvg test accuracy (digits / CIFAR-10), s and p sweep"),
    ("Table 2", "SAFARI's improvement over FedAvg (q = 0.8)"),
    ("Table 3", "improvement on MNIST against server data size"),
    ("Table 4", "improvement on CIFAR-10 against server data size"),
    ("Figure 2", "test accuracy curves on CIFAR-10 (s = 4, p = 1, q = 0.4)",
     "a CIFAR-10 training curve: no synthetic analogue beyond the digits tables' claims"),
    ("Lemma 1", "auxiliary generalization lemma (cited from the literature)",
     "a cited textbook result (Massart and Nedelec; Hanneke and Kpotufe), used in the "
     "Theorem 2 proof whose rate the Theorem 2 claims check"),
    ("Lemma 2", "server risk gap under Assumption 2"),
    ("Table 5", "SAFARI accuracy for a sweep of q (p = 1)"),
    ("Table 6", "Fashion-MNIST accuracy, different participation"),
    ("Table 7", "Fashion-MNIST accuracy, different server data"),
    ("Table 8", "MNIST accuracy, sampling bias s and non-iid index p (full grid)",
     "the appendix grid of Table 1-2's setting on MNIST; the digits claims re-run the "
     "Table 1-2 configurations, not every cell of this grid"),
    ("Table 9", "CIFAR-10 accuracy, s and p grid",
     "CIFAR-10 training at the paper's scale is out of reach of the CPU budget"),
    ("Table 10", "MNIST accuracy against participating clients m"),
    ("Table 11", "CIFAR-10 accuracy against participating clients m"),
)
CLAIM_MAP = {"safari.thm1.safl_geometric_fall": ("Theorem 1",)}

declare_results("safari", RESULTS, claim_map=CLAIM_MAP)
