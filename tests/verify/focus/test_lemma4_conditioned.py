"""Lemma 4 corrected, with q conditioned on a non-empty round: the witness exceeds the bound
only under that reading (the library's q, an empty round counting 0, leaves it far below),
and the verdict rests on the bound's constant (a constant 2x larger holds)."""

import numpy as np

import verify.focus.lemma4.conditioned as conditioned
from flbounds.participation import Bernoulli
from verify.focus.lemma4 import lemma4_rhs
from verify.focus.lemma4.corrected import corrected_constant
from verify.focus.lemma4.counterexample import lemma4_parts


def test_conditioned_q_sums_to_one():
    q = conditioned.conditioned_q([0.1, 0.3, 0.6])
    assert abs(q.sum() - 1) <= 1e-12
    assert np.all(q > Bernoulli([0.1, 0.3, 0.6]).aggregation_weights())


def test_witness_fails_only_under_the_conditioned_reading():
    n, p, k = conditioned.WITNESS
    lhs, rhs, _, _ = conditioned.conditioned_sides(n, p, k)
    assert lhs > rhs * (1 + 1e-9)
    lhs0, cons0, grad0, q0, step0 = lemma4_parts(n, p, k)
    rhs0 = lemma4_rhs(q_min=q0, n=n, step=step0, consensus=cons0, grad=grad0,
                      constant=corrected_constant(q0, n))
    assert lhs0 < 0.5 * rhs0


def test_a_larger_constant_holds(monkeypatch):
    monkeypatch.setattr(conditioned, "corrected_constant",
                        lambda q, n: 2 * corrected_constant(q, n))
    lhs, rhs, _, _ = conditioned.conditioned_sides(*conditioned.WITNESS)
    assert lhs <= rhs
