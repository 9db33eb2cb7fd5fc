"""The paired digits runs (FedAvg and SAFARI on one plan, client rounds in one stacked pass)
equal the two unbatched ``safari_digits`` runs bit for bit."""

import numpy as np
import pytest

from verify.safari.digits_experiment import (
    _paired_runs,
    digits_federation,
    digits_plan,
    safari_digits,
)


@pytest.mark.parametrize("server_steps, n_server", [(None, 60), (1, 60), (None, 0)])
def test_paired_runs_equal_single_runs(server_steps, n_server):
    rng = np.random.default_rng(4)
    fed = digits_federation(rng, classes_per_client=3, n_server=n_server)
    plan = digits_plan(rng, fed, n_rounds=12, q=0.6, n_excluded=2, n_sampled=3)
    kw = dict(step_client=0.1, step_server=0.1, batch=16, tail=5, server_steps=server_steps)
    pair = _paired_runs(fed, plan, np.ones(12, dtype=bool), **kw)
    fedavg_plan = plan._replace(client_round=np.ones_like(plan.client_round))
    assert np.array_equal(pair[:, 0], safari_digits(fed, fedavg_plan, **kw))
    assert np.array_equal(pair[:, 1], safari_digits(fed, plan, **kw))
    assert not np.array_equal(pair[:, 0], pair[:, 1])  # the two runs do differ
