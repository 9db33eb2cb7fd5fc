"""Every registered claim meets its expected verdict on the quick profile."""

import pytest

from flbounds.ledger import load_all

CLAIMS = load_all()


@pytest.mark.parametrize("claim_id", sorted(CLAIMS))
def test_claim_meets_expected_verdict(claim_id):
    c = CLAIMS[claim_id]
    result = c.check(seed=0, profile="quick")
    assert result.verdict == c.expected, (
        f"{claim_id}: {result.verdict} (expected {c.expected}); measured {result.measured} "
        f"{result.relation} {result.theoretical}; {result.reason}\n{result.traceback}")


@pytest.mark.parametrize("claim_id", sorted(CLAIMS))
def test_claim_is_documented(claim_id):
    c = CLAIMS[claim_id]
    assert c.func.__doc__ and c.func.__doc__.strip(), f"{claim_id} has no docstring"
    assert c.statement and c.ref
