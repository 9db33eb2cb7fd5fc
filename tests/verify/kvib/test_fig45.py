"""Figs. 4-5's stand-in: the calibrated weights hold the stated shares, and planted gains
ordered with the imbalance (or against it) are reproduced (or not reproduced)."""

import numpy as np
import pytest

import verify.kvib.fig45 as fig45


@pytest.mark.parametrize("level", list(fig45.LEVELS))
def test_weights_hold_the_stated_share(level):
    top, share = fig45.LEVELS[level]
    w = np.sort(fig45.level_weights(100, top, share))[::-1]
    assert np.isclose(w.sum(), 1) and np.isclose(w[:int(top * 100)].sum(), share)


@pytest.mark.parametrize("order,verdict", [((0.5, 0.4, 0.3), "holds"),
                                           ((0.3, 0.4, 0.5), "violated")])
def test_planted_gains_decide(monkeypatch, order, verdict):
    means = iter(order)
    monkeypatch.setattr(fig45, "_gains", lambda rng, fb, k, t, s: next(means)
                        + 0.001 * rng.standard_normal(s))
    ev = fig45.gain_grows_with_imbalance(rng=np.random.default_rng(0), n_clients=20,
                                         n_rounds=5, n_seeds=8)
    assert ev.verdict() == verdict
