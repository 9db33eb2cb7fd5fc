"""The rule of K-Vib's comparisons with its baselines (verify/kvib/fig2/_paired.py): shown when
every cell shows K-Vib better, contradicted (violated) only by a baseline significantly better,
and a failed rejection is inconclusive with the detectable difference in the reason."""

import numpy as np

from verify.kvib.fig2._paired import compare

RNG = np.random.default_rng(0)


def _run(diffs):
    cells = [dict(label=f"cell{i}") for i in range(len(diffs))]
    return compare(cells, [np.asarray(d, float) for d in diffs], alpha=0.05, power=0.8,
                   instance={}, details={})


def test_every_cell_better_holds():
    ev = _run([5 + RNG.normal(size=8), 3 + RNG.normal(size=8)])
    assert ev.verdict() == "holds" and not ev.undecided


def test_a_baseline_significantly_better_is_violated():
    ev = _run([5 + RNG.normal(size=8), -5 + RNG.normal(size=8)])
    assert ev.verdict() == "violated"
    assert ev.details["baselines_significantly_better"] == ["cell1"]


def test_a_failed_rejection_is_inconclusive_never_violated():
    ev = _run([5 + RNG.normal(size=8), 0.01 * RNG.normal(size=8) + RNG.normal(size=8)])
    assert ev.verdict() == "inconclusive"
    assert "cell1" in ev.undecided and "detectable" in ev.undecided
