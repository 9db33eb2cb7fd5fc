"""Numbered results of FOCUS that no claim checks, and why: drawings and a notation table."""

from __future__ import annotations

from flbounds.ledger import result

FIG5 = result("focus.fig5", ref="Figure 5", title="decentralized gradient descent illustration",
              not_checked="a drawing of the related-work method; no statement")
FIG8 = result("focus.fig8", ref="Figure 8", title="Dirichlet data distribution (alpha = 0.05)",
              not_checked="a picture of the CIFAR-10 data split; no statement")
TABLE2 = result("focus.table2", ref="Table 2", title="notation",
                not_checked="a notation table; nothing to check")
