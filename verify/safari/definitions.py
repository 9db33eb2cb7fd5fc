"""Definitions 1-4 of SAFARI (Sec. 3): declared so that the paper's numbered results are
complete; a definition asserts nothing to check on its own (the claims of Theorems 1-3 compute
the quantities it defines)."""

from __future__ import annotations

from flbounds.ledger import result

_DEFINITION = "a definition: nothing to check on its own; used by the claims of Theorems 1-3"

DEFINITION1 = result("safari.def1", ref="Definition 1", kind="definition",
                     title="generalization and empirical errors R_D(h), R_hat_D(h)",
                     not_checked=_DEFINITION)
DEFINITION2 = result("safari.def2", ref="Definition 2", kind="definition",
                     title="optimal hypotheses h*_D and h_hat*_D", not_checked=_DEFINITION)
DEFINITION3 = result("safari.def3", ref="Definition 3", kind="definition",
                     title="excess errors eps_D(h) and eps_hat_D(h)", not_checked=_DEFINITION)
DEFINITION4 = result("safari.def4", ref="Definition 4", kind="definition",
                     title="PAC learnability", not_checked=_DEFINITION)
