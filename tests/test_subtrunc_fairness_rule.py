"""The margin decision rule and the root-entropy guard of verify/subtrunc/fairness.py."""

import numpy as np
import pytest

from verify.subtrunc.fairness import _root_entropy, decide_row


def test_decide_row_three_outcomes():
    base = 10.0  # delta = 0.1
    clear_drop = -1.0 + 0.01 * np.array([-1.0, 0.0, 1.0, 0.5, -0.5])
    assert decide_row(clear_drop, base)["decision"] == "holds"
    clear_rise = -clear_drop
    assert decide_row(clear_rise, base)["decision"] == "violated"
    # a detected but sub-margin drop excludes the margin: violated, not undecided
    tiny_drop = -0.01 + 0.001 * np.array([-1.0, 0.0, 1.0, 0.5, -0.5])
    assert decide_row(tiny_drop, base)["decision"] == "violated"
    noisy = np.array([-3.0, 2.0, -1.0, 1.5, 0.2])
    assert decide_row(noisy, base)["decision"] == "undecided"


def test_root_entropy_requires_integer_entropy():
    assert _root_entropy(np.random.default_rng(7)) == 7
    with pytest.raises(ValueError, match="rng"):
        _root_entropy(np.random.default_rng(np.random.SeedSequence([1, 2])))
