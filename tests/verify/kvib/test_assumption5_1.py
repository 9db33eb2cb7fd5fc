"""Assumption 5.1's O(log T): V_T within (lambda c)^2 (1 + ln T), and a planted slower rate
(feedback off by c/t^{1/4}) breaks it."""

import numpy as np

import verify.kvib.assumption5_1 as a51


def test_holds_and_a_slower_rate_fails(monkeypatch):
    run = lambda: a51.variation_log(rng=np.random.default_rng(0), n_clients=5)  # noqa: E731
    assert run().verdict() == "holds"
    real = a51.Assumption51Feedback.values
    monkeypatch.setattr(a51.Assumption51Feedback, "values",
                        lambda self, t: real(self, t) + self.lam * self.decay
                        * (t ** -0.25 - t ** -0.5))
    assert run().verdict() == "violated"
