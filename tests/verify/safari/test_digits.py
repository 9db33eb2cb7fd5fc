"""The digits replication of SAFARI (verify.safari.digits_experiment): partition and runner."""

import numpy as np
import pytest

from verify.safari.digits_experiment import digits_federation, digits_plan, safari_digits


@pytest.mark.parametrize("p", [1, 2, 10])
def test_partition_gives_p_classes_and_disjoint_sets(p):
    fed = digits_federation(np.random.default_rng(0), classes_per_client=p, n_server=50)
    allidx = np.concatenate(fed.client_idx + [fed.server_idx, fed.test_idx])
    assert allidx.size == np.unique(allidx).size
    for idx in fed.client_idx:
        assert np.unique(fed.y[idx]).size == p


def test_q1_plan_never_uses_server_and_excluded_never_sampled():
    rng = np.random.default_rng(1)
    fed = digits_federation(rng, classes_per_client=1, n_server=20)
    plan = digits_plan(rng, fed, n_rounds=5, q=1.0, n_excluded=4, n_sampled=5)
    assert plan.client_round.all() and plan.clients.min() >= 4
    W = safari_digits(fed, plan, tail=2)
    assert W.shape == (2, fed.X.shape[1], 10) and np.all(np.isfinite(W))


def test_bad_inputs():
    with pytest.raises(ValueError, match="classes_per_client"):
        digits_federation(np.random.default_rng(0), classes_per_client=11, n_server=1)
    with pytest.raises(ValueError, match="n_server"):
        digits_federation(np.random.default_rng(0), classes_per_client=2, n_server=5000)


def test_single_server_step_is_one_minibatch_update():
    """server_steps=1 on an all-server plan: one SGD step on the first minibatch per round."""
    from verify.safari.digits_experiment import _grad
    rng = np.random.default_rng(2)
    fed = digits_federation(rng, classes_per_client=2, n_server=40)
    plan = digits_plan(rng, fed, n_rounds=3, q=0.0, n_excluded=0, n_sampled=2)
    W = safari_digits(fed, plan, tail=3, server_steps=1, batch=16)
    V = np.zeros_like(W[0])
    for r in range(3):
        b = fed.server_idx[plan.server_orders[r]][:16]
        V = V - 0.1 * _grad(V, fed.X[b], fed.y[b])
        np.testing.assert_allclose(W[r], V, rtol=1e-12, atol=1e-15)
    epoch = safari_digits(fed, plan, tail=1)
    assert not np.allclose(epoch[-1], W[-1])
    with pytest.raises(ValueError, match="server_steps"):
        safari_digits(fed, plan, server_steps=0)
