"""FOCUS Lemma 4's rare-participation family: the expectation by number of participants (the
attack's evaluation) equals the enumeration over the 2^N sets (the claim's) up to rounding."""

import numpy as np
import pytest

from verify.focus.lemma4.attacks import lemma4_rare
from verify.focus.lemma4.counterexample import lemma4_parts, lemma4_sides


@pytest.mark.parametrize(("n", "p", "k"), [(4, 0.02, 80), (5, 0.3, 0), (7, 0.005, 200),
                                           (9, 0.0796, 8)])
def test_by_count_equals_the_enumeration(n, p, k):
    enumerated = lemma4_parts(n, p, k)
    by_count = lemma4_parts(n, p, k, by_count=True)
    np.testing.assert_allclose(by_count, enumerated, rtol=1e-14, atol=0.0)


def test_attack_ratio_is_the_claims_ratio():
    """The attack's ratio at the claim's instance is the claim's (the fixed start)."""
    lhs, rhs, _, _ = lemma4_sides(4, 0.02, 80)
    assert lemma4_rare(n_clients=4, p=0.02, empty_rounds=80) == pytest.approx(lhs / rhs,
                                                                             rel=1e-15)


def test_one_pass_expectations_are_bit_identical():
    """The attacks' one pass over the sets for both sides gives _expect's numbers exactly."""
    from verify.focus.lemma4.attacks import _attack_step
    from verify.focus.one_round import _expect, _expect_all, attack_round, fixed_round

    inst = fixed_round()[0]
    for p in (inst["p"], np.array([0.05, 0.2, 0.6, 1.0])):
        problem, masks, probs, _, step, st = attack_round({**inst, "p": p}, _attack_step)
        fns = (lambda s: s.consensus_error(),
               lambda s, problem=problem: float(np.sum(problem.gradient(s.x) ** 2)))
        both = _expect_all(problem, st, masks, probs, step, inst["tau"], fns)
        assert both == tuple(_expect(problem, st, masks, probs, step, inst["tau"], fn)
                             for fn in fns)
