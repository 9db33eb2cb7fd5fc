r"""Tables I-IV of SubTrunc (Sec. V): the results, their parts (the sentences of Sec. V that read
them) and the hypothesis their claims share, the experimental protocol.

The printed numbers and the claims on them are in :mod:`paper_checks.subtrunc`; the
re-simulations on label-skewed stand-in problems are the sibling modules ``table1`` ...
``table4`` (runs and decision rule: :mod:`verify.subtrunc.fairness`). Instances carry
``setting``: the protocol of the run the numbers come from (the paper's own for the printed
tables).
"""

from __future__ import annotations

from flbounds.ledger import hypothesis, result

#: Sec. V's protocol for the selection rules, as printed ("|N| = 100 clients ... each client
#: had 3 equally partitioned distinct classes ... r = 10 ... kappa = 10 ... b = 1.10 and
#: mu = 1"); the paper's data sets and model are MNIST / CIFAR10 and LeNet
PROTOCOL = dict(n_clients=100, classes_per_client=3, kappa=10, r=10, b=1.1, mu=1.0)
PAPER_SETTING = dict(PROTOCOL, datasets=("MNIST", "CIFAR10"), model="LeNet")


@hypothesis("setting", "Sec. V's protocol: |N| = 100 non-iid clients with 3 distinct classes "
                       "each, kappa = 10, stochastic greedy with r = 10, b = 1.1, mu = 1 (the "
                       "re-simulations use stand-in data and models, as their statements say)")
def protocol(*, setting):
    return all(setting.get(key) == value for key, value in PROTOCOL.items())


TABLE1 = result(
    "subtrunc.table1", ref="Table I", title="client selection methods compared on non-iid "
    "MNIST and CIFAR-10",
    parts={"subtrunc_lowest": "SubTrunc achieves the (consistently) lowest client "
                              "dissimilarity, below DivFL, Random and Power-of-Choice",
           "unionfl_beats": "SubTrunc and UnionFL outperform the baselines by achieving lower "
                            "client dissimilarity",
           "shared_runs": "Tables I-IV reuse runs: Table I's SubTrunc row is a lam row of "
                          "Table II and Table IV's ln(1+x) row, its UnionFL row Table III's "
                          "window 5",
           "convergence": ("the methods converge at a similar rate, as evidenced by the "
                           "training loss", "only final losses are printed (no curves): "
                                            "nothing beyond the table to compare")},
    hypotheses=(protocol,))

TABLE2 = result(
    "subtrunc.table2", ref="Table II", title="effect of lambda (non-iid MNIST / CIFAR-10)",
    parts={"lambda_trend": "as lam -> 0 (DivFL) client dissimilarity degrades; as lam grows it "
                           "improves"},
    hypotheses=(protocol,))

TABLE3 = result(
    "subtrunc.table3", ref="Table III", title="effect of the window size",
    parts={"window_trend": "increasing the window size gives models that perform better in "
                           "both testing accuracy and client dissimilarity"},
    hypotheses=(protocol,))

TABLE4 = result(
    "subtrunc.table4", ref="Table IV", title="phi = identity vs ln(1 + x)",
    parts={"identity_phi": "phi = identity (a similar Lipschitz constant) lowers client "
                           "dissimilarity compared with ln(1 + x)"},
    hypotheses=(protocol,))
