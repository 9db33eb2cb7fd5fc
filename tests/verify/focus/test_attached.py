"""FOCUS claims attached to parts of declared results (issue 36)."""

from flbounds.ledger import select


def test_every_focus_accusation_is_attached_to_a_part():
    """A claim expected ``violated`` rests on its result's evaluated predicates."""
    bare = [c.id for c in select(["focus"])
            if "violated" in (c.expected, c.expected_for("full")) and not c.parts]
    assert bare == []


def test_attached_claims_carry_no_labels():
    labelled = [c.id for c in select(["focus"]) if c.parts and c.hypotheses]
    assert labelled == []
