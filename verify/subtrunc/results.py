"""The numbered results of the SubTrunc / UnionFL paper (004), written from its text, for the
coverage table (:mod:`flbounds.ledger.coverage`): every result, and why no claim checks it
where none does; the sections of Sec. III whose claims (selection rules, their limits) have
no number are listed too. Claims whose ref names no numbered result are mapped in
``CLAIM_MAP``."""

from flbounds.ledger import declare_results

DEFINITION = "a definition: nothing to check on its own; used by the claims of the results"
ASSUMPTION = "an assumption: a hypothesis of Theorem 1 and Lemmas 1-3 (see their claims)"
RESULTS = (
    ("Definition 1", "marginal gain", DEFINITION),
    ("Definition 2", "submodularity", DEFINITION),
    ("Definition 3", "monotonicity", DEFINITION),
    ("Section II", "concave transforms of submodular functions (before Prop 1)"),
    ("Proposition 1", "truncation preserves monotone submodularity"),
    ("Proposition 2", "nonnegative linear combinations preserve submodularity"),
    ("Definition 4", "supermodularity", DEFINITION),
    ("Section III-A", "SubTrunc's objective, eqs. (9)-(10), and the role of b and lambda"),
    ("Proposition 3", "W is monotone submodular"),
    ("Section III-B", "UnionFL's window objective, eq. (14), and the role of mu"),
    ("Proposition 4", "the window penalty is supermodular; h_t submodular"),
    ("Section III-C", "greedy and stochastic greedy maximization, eqs. (16)-(17)"),
    ("Algorithm 1", "fairness-aware FL with SubTrunc / UnionFL selection"),
    ("Table I", "client selection methods compared on non-iid MNIST and CIFAR-10"),
    ("Definition 5", "L-smoothness", DEFINITION),
    ("Assumption 1", "L-smooth client losses", ASSUMPTION),
    ("Assumption 2", "nonnegative losses", ASSUMPTION),
    ("Assumption 3", "bounded bias of the selected gradient", ASSUMPTION),
    ("Theorem 1", "convergence of SubTrunc and UnionFL, eq. (19)"),
    ("Table II", "effect of lambda (non-iid MNIST / CIFAR-10)"),
    ("Table III", "effect of the window size"),
    ("Table IV", "phi = identity vs ln(1 + x)"),
    ("Lemma 1", "one-round descent, eq. (27), proof eqs. (28)-(43)"),
    ("Lemma 2", "gradient error of the selection, eq. (44), proof eqs. (45)-(60)"),
    ("Lemma 3", "local growth, eq. (61)"),
)
CLAIM_MAP = {
    "subtrunc.eq9.triangle_bound": ("Section III-A",),
    "subtrunc.greedy.stochastic": ("Section III-C",),
    "subtrunc.eq17.sample_uniform_each_step": ("Section III-C",),
    "subtrunc.intro.nondecreasing_concave": ("Section II",),
    "subtrunc.intro.concave_of_submodular": ("Section II",),
    "subtrunc.limits.huge_lam_b_is_topk": ("Section III-A",),
    "subtrunc.limits.lam0_is_divfl": ("Section III-A",),
    "subtrunc.limits.tiny_b_is_divfl": ("Section III-A",),
    "subtrunc.limits.large_mu_avoids_window": ("Section III-B",),
    "subtrunc.limits.mu0_is_divfl": ("Section III-B",),
    "subtrunc.prop3.control_small_offset": ("Section III-A", "Proposition 3"),
    "subtrunc.unionfl.distorted_greedy": ("Section III-B", "Section III-C"),
    "subtrunc.greedy.ratio_w": ("Section III-C", "Proposition 3"),
    "subtrunc.sec3c.unionfl_greedy_guarantee": ("Section III-C", "Proposition 4"),
    "subtrunc.fl.participation_evens_with_window": ("Section III-B", "Table III"),
}

declare_results("subtrunc", RESULTS, claim_map=CLAIM_MAP)
