"""Remarks 1 and 4 of SAFARI ([000]): discussion without a checkable assertion of their own
(Remarks 2, 3, 5 and 6 have their own modules)."""

from __future__ import annotations

from flbounds.ledger import result

REMARK1 = result(
    "safari.remark1", ref="Remark 1", title="server-side datasets are available in practice",
    not_checked="motivation about deployed systems; no mathematical content to check")
REMARK4 = result(
    "safari.remark4", ref="Remark 4", title="Theorem 5 mitigates incomplete participation",
    not_checked="a paraphrase of Theorem 5, checked by the Theorem 5 claims "
                "(verify/safari/thm5/)")
