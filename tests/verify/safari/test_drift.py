"""The local-drift lemma's exact expectations: every k <= K in one pass (exact_drifts) gives,
bit for bit, the value of k steps computed from scratch."""

import numpy as np

from verify.safari.closed_forms import drift_terms, exact_drift, exact_drifts


def _drift_from_scratch(A, grad, step, k, sigma2):
    """E||x^i_{r,k} - x_r||^2 summed over j < k afresh (the twin of the one-pass form)."""
    d = A.shape[0]
    M = np.eye(d) - step * A
    Mj, mean, var = np.eye(d), np.zeros(d), 0.0
    for _ in range(k):
        mean = mean + Mj @ grad
        var += np.sum(Mj ** 2)
        Mj = M @ Mj
    return float(step ** 2 * (mean @ mean + sigma2 / d * var))


def test_one_pass_equals_each_k_from_scratch_bit_for_bit():
    rng = np.random.default_rng(3)
    for _ in range(50):
        d, K = int(rng.integers(1, 5)), int(rng.integers(1, 11))
        B = rng.normal(size=(d, d))
        A = B @ B.T / d + 0.1 * np.eye(d)
        grad, step, sigma2 = rng.normal(size=d) * 3, float(rng.uniform(1e-3, 0.3)), 0.7
        values = exact_drifts(drift_terms(A, step_client=step, local_steps=K), grad,
                              step_client=step, sigma2=sigma2)
        expected = [_drift_from_scratch(A, grad, step, k, sigma2) for k in range(1, K + 1)]
        assert values == expected
        assert [exact_drift(A, grad, step_client=step, k=k, sigma2=sigma2)
                for k in range(1, K + 1)] == expected


def test_no_local_step_has_no_drift():
    assert exact_drift(np.eye(2), np.ones(2), step_client=0.1, k=0, sigma2=1.0) == 0.0
