"""The digits replication of SAFARI (flbounds.safari_digits): partition and runner."""

import numpy as np
import pytest

from flbounds.safari_digits import digits_federation, digits_plan, safari_digits


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
