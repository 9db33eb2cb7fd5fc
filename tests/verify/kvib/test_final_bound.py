"""Theorem 4.1's final bound on FL runs: holds on the quick instance, fails when the bound is
planted 1000 times smaller, and Lemma B.5's tuning is the smallest of its three steps."""

import numpy as np

import verify.kvib.thm4_1.final_bound as fb
from flbounds.ledger import get

KW = dict(n_clients=20, k=4, n_rounds=30, local_steps=2, n_seeds=4)


def test_holds_and_a_planted_small_bound_fails(monkeypatch):
    claim = get("kvib.thm4_1.final_bound_fl_run")     # its cells (one per sampler) combined
    assert claim.check(seed=0, **KW).verdict == "holds"
    real = fb.thm41_rhs
    monkeypatch.setattr(fb, "thm41_rhs", lambda **c: real(**c) / 1000)
    assert claim.check(seed=0, **KW).verdict == "violated"


def test_tuned_step_is_lemma_b5s():
    eta = fb.tuned_step(M=1.0, L=1.0, T=1e6, sigma2=1.0, beta1=1.0, beta2=1.0)
    assert np.isclose(eta, min(1 / 8, np.sqrt(2 / (2.25e6)), np.cbrt(2 / (0.625e6))))
