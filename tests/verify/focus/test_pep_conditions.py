"""FOCUS Theorem 1's Lyapunov weights (verify.focus.pep_conditions), passed to flbounds.pep."""

import pytest

from verify.focus.pep_conditions import thm1a_lyapunov_weight, thm1b_consensus_weight


def test_weights_are_the_proofs():
    assert thm1a_lyapunov_weight(1.0, 2.0, 2, 0.01) == 1 - 8 * 0.01 * 4.0 * 2 / 1.0
    assert thm1b_consensus_weight(2.0, 0.05) == 1 - 4 * 0.05 * 4.0


@pytest.mark.parametrize("call", [lambda: thm1a_lyapunov_weight(1.0, 2.0, 2, 0.1),
                                  lambda: thm1b_consensus_weight(2.0, 0.2)])
def test_a_step_that_kills_the_weight_is_refused(call):
    with pytest.raises(ValueError, match="weight"):
        call()
