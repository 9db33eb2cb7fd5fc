"""Every FOCUS claim is attached to a part of a declared result (issue 36)."""

from flbounds.ledger import select


def test_every_focus_claim_is_attached_to_a_part():
    bare = [c.id for c in select(["focus"]) if not c.parts]
    assert bare == []


def test_the_accused_results_have_claims():
    results = {q.split(":", 1)[0] for c in select(["focus"]) for q in c.parts}
    assert {"focus.thm1a", "focus.thm3", "focus.thm6", "focus.lemma4", "focus.eq5",
            "focus.app_c", "focus.assumption1", "focus.fig1", "focus.fig9"} <= results
