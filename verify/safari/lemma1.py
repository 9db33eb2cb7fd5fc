"""Lemma 1 of SAFARI (App. A): the auxiliary generalization lemma, cited from Massart and
Nedelec (2006), Koltchinskii (2006) and Hanneke and Kpotufe (2019, 2020)."""

from __future__ import annotations

from flbounds.ledger import result

LEMMA1 = result(
    "safari.lemma1", ref="Lemma 1", title="auxiliary generalization lemma (cited)",
    not_checked="a cited textbook result, used in the Theorem 2 proof whose rate the Theorem 2 "
                "claims check; its complexity A(m, delta) enters Theorem 3's condition (ii) in "
                "the standard form (spec 7)")
