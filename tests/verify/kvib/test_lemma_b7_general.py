"""Lemma B.7 on arbitrary proper designs: holds, and a planted variance four times too large
fails eq. (19)."""

import numpy as np

import verify.kvib.lemma_b7 as b7


def test_holds_and_a_planted_smaller_bound_fails(monkeypatch):
    run = lambda: b7.general_design(rng=np.random.default_rng(0), max_clients=5,  # noqa: E731
                                    n_designs=10)
    assert run().verdict() == "holds"
    real = b7.design_moments

    class Doubled:
        def __init__(self, m):
            self.variance = 4 * m.variance

    monkeypatch.setattr(b7, "design_moments", lambda *a: Doubled(real(*a)))
    assert run().verdict() == "violated"
