"""Figure 2 of FedALS (Sec. 7): ResNet-20 on SVHN, FedALS against FedAvg (no claim)."""

from flbounds.ledger import result

FIGURE2 = result(
    "fedals.figure2", ref="Figure 2", title="ResNet-20 on SVHN: FedALS vs FedAvg curves",
    not_checked="SVHN training at the paper's scale is out of reach of the CPU budget; the "
                "accuracy comparison is checked on the MLP task (Tables 1-2 claims)")
