"""Bound claims declared without an attack carry a reason, name registered claims, and never
name a claim that has an attack surface; bad declarations are refused."""

from __future__ import annotations

import pytest

from flbounds.falsify import no_attack, surfaces, unattacked
from flbounds.falsify.surfaces import _NO_ATTACK
from flbounds.ledger import get


def test_every_declaration_names_an_unattacked_registered_claim():
    table = unattacked()
    attacked = surfaces()
    assert len(table) >= 40
    for claim_id, reason in table.items():
        assert get(claim_id).id == claim_id
        assert claim_id not in attacked
        assert len(reason.split()) >= 8, claim_id


def test_a_declaration_on_an_attacked_or_unknown_claim_is_refused(monkeypatch):
    monkeypatch.setitem(_NO_ATTACK, "kvib.lemma2_1.isp_le_rsp_bound", "has an attack already")
    with pytest.raises(ValueError, match="has an attack surface"):
        unattacked()
    monkeypatch.delitem(_NO_ATTACK, "kvib.lemma2_1.isp_le_rsp_bound")
    monkeypatch.setitem(_NO_ATTACK, "kvib.no_such_claim", "names no registered claim at all")
    with pytest.raises(ValueError, match="unknown claim"):
        unattacked()


@pytest.mark.parametrize("claim_id, reason", [("nodot", "a reason of some words"),
                                               ("kvib.x", "too short"), ("kvib.x", None)])
def test_bad_declarations_raise(claim_id, reason):
    with pytest.raises(ValueError):
        no_attack(claim_id, reason)


def test_a_second_different_reason_is_refused(monkeypatch):
    monkeypatch.setitem(_NO_ATTACK, "kvib.some_claim", "the first reason given here")
    with pytest.raises(ValueError, match="declared twice"):
        no_attack("kvib.some_claim", "another reason given here")


def test_falsify_list_shows_the_reasons(capsys):
    """`flbounds falsify --list` prints the unattacked claims with their reasons, filtered by
    the patterns (a pattern matching only unattacked claims is accepted)."""
    from flbounds.cli import main

    assert main(["falsify", "--list", "subtrunc"]) == 0
    out = capsys.readouterr().out
    assert "no attack: reason" in out
    reasons = {cid: why for cid, why in unattacked().items() if cid.startswith("subtrunc.")}
    for cid, why in reasons.items():
        assert f"{cid}: {why}" in out
    assert "subtrunc.prop3.exhaustive" in out and "kvib." not in out
    assert main(["falsify", "--list", "subtrunc.thm1.self_bounding"]) == 0
    out = capsys.readouterr().out
    assert "subtrunc.thm1.self_bounding:" in out
    assert "1 bound claims without an attack (reasons above)" in out
