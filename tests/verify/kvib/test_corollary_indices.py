"""Corollaries B.1-B.2's index statements: hold on the library's optimum, and a planted solver
that caps the largest client (l2 < N) is caught."""

import numpy as np

import verify.kvib.corollaries_b1_b2 as cor


def test_holds_and_a_planted_cap_fails(monkeypatch):
    run = lambda: cor.split_indices(rng=np.random.default_rng(0), n_instances=50)  # noqa: E731
    assert run().verdict() == "holds"
    real = cor.optimal_isp_probabilities

    def capped(a, k, p_min=0.0):
        p = real(a, k, p_min=p_min)
        p[np.argmax(p)] = 1.0
        return p

    monkeypatch.setattr(cor, "optimal_isp_probabilities", capped)
    assert run().verdict() == "violated"
