"""The margin decision rule and the root-entropy guard of verify/subtrunc/fairness.py."""

import numpy as np
import pytest

from verify.subtrunc.fairness import ALPHA, _root_entropy, decide_family, decide_row


def _decision(effect, base):
    return decide_family([decide_row(effect, base)])[0]["decision"]


def test_decide_row_three_outcomes():
    base = 10.0  # delta = 0.1
    clear_drop = -1.0 + 0.01 * np.array([-1.0, 0.0, 1.0, 0.5, -0.5])
    assert _decision(clear_drop, base) == "holds"
    clear_rise = -clear_drop
    assert _decision(clear_rise, base) == "violated"
    # a detected but sub-margin drop excludes the margin: violated, not undecided
    tiny_drop = -0.01 + 0.001 * np.array([-1.0, 0.0, 1.0, 0.5, -0.5])
    assert _decision(tiny_drop, base) == "violated"
    noisy = np.array([-3.0, 2.0, -1.0, 1.5, 0.2])
    assert _decision(noisy, base) == "undecided"


def test_a_family_of_rows_is_decided_by_holm():
    """One row resolved at 0.025 alone but not at Holm's first step 0.025/2: with a second,
    clearly resolved row the family still holds (step-down), with a second undecided row the
    borderline row is undecided too."""
    base, n = 10.0, 30
    noise = np.random.default_rng(0).standard_normal(n)
    noise = (noise - noise.mean()) / noise.std(ddof=1)
    from scipy import stats
    t_mid = stats.t.isf(0.6 * ALPHA, n - 1)  # p_below = 0.6 alpha: 0.5 alpha < p < alpha
    border = -0.1 - t_mid / np.sqrt(n) + noise
    clear = -1.0 + 0.01 * noise
    undecided = 0.3 * noise - 0.1
    assert _decision(border, base) == "holds"
    rows = decide_family([decide_row(border, base), decide_row(clear, base)])
    assert [r["decision"] for r in rows] == ["holds", "holds"]
    rows = decide_family([decide_row(border, base), decide_row(undecided, base)])
    assert [r["decision"] for r in rows] == ["undecided", "undecided"]
    assert rows[0]["p_below_holm"] == 2 * rows[0]["p_below"]


def test_root_entropy_requires_integer_entropy():
    assert _root_entropy(np.random.default_rng(7)) == 7
    with pytest.raises(ValueError, match="rng"):
        _root_entropy(np.random.default_rng(np.random.SeedSequence([1, 2])))
