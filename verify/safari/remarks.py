"""Remark 1 of SAFARI: discussion without a checkable assertion of its own (Remarks 2,
5 and 6 have their own modules, Remarks 3 and 4 :mod:`verify.safari.remark3_4`)."""

from __future__ import annotations

from flbounds.ledger import result

REMARK1 = result(
    "safari.remark1", ref="Remark 1", title="server-side datasets are available in practice",
    not_checked="motivation about deployed systems; no mathematical content to check")
