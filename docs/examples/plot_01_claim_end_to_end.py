"""
A claim, end to end
===================

Run one claim of the ledger from Python and read its evidence: FOCUS's Lemma 4 (the consensus
lemma) fails for rarely participating clients. The claim computes both sides of the lemma's
inequality exactly (every participation set enumerated) on a reachable state, and the ledger
evaluates the lemma's hypotheses on the claim's instance before it accepts ``violated``.
"""

from flbounds.ledger import get

claim = get("focus.lemma4.rare_participation")
print(claim.ref, "|", claim.kind, "| expected:", claim.expected)
print("parts checked:", ", ".join(claim.parts))

row = claim.check(seed=0, profile="quick")
print("verdict:", row.verdict)
print(f"measured {row.measured:.6g} > printed bound {row.theoretical:.6g} "
      f"(ratio {row.details['ratio']:.5f})")

# %%
# Every hypothesis of the parts the claim checks, evaluated on its instance: the verdict
# ``violated`` is only possible because each of them is true.
for hypothesis, holds in row.hypotheses.items():
    print(f"{'true ' if holds is True else holds!s:6} {hypothesis}")

# %%
# The same row is what ``flbounds check focus.lemma4.rare_participation --json out.json``
# writes, and its reproducer re-runs it from the command line:
print(row.reproducer)
