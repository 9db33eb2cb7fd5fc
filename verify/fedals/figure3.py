"""Figure 3 of FedALS (Sec. 7): fine-tuning OPT-125M on MultiNLI (no claim)."""

from flbounds.ledger import result

FIGURE3 = result(
    "fedals.figure3", ref="Figure 3", title="fine-tuning OPT-125M on MultiNLI",
    not_checked="a language-model fine-tune out of reach of the CPU budget")
