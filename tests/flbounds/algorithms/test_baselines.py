"""FedAWE and gossip Local SGD (FOCUS Table 1 baselines): reductions to FedAvg, the echo
factor, and validation."""

import numpy as np
import pytest

from flbounds.algorithms import fedavg, fedawe, local_sgd_gossip
from flbounds.problems import random_quadratics

RTOL = 1e-12


@pytest.fixture
def problem():
    return random_quadratics(np.random.default_rng(3), 4, 3, mu=0.5, L=1.0)


def test_fedawe_with_full_participation_is_fedavg(problem):
    # every client present every round: the echo factor is 1 after round 0 (and 1 at
    # round 0 since the start counts as round -1), so FedAWE is FedAvg
    plan = np.ones((20, 4), dtype=bool)
    np.testing.assert_allclose(fedawe(problem, plan, step=0.1, local_steps=3).x,
                               fedavg(problem, plan, step=0.1, local_steps=3).x, rtol=RTOL)


def test_fedawe_echo_scales_a_returning_clients_innovation(problem):
    # client 0 alone in rounds 0 and 3: its round-3 innovation is echoed 3 times
    plan = np.zeros((4, 4), dtype=bool)
    plan[0, 0] = plan[3, 0] = True
    xs = fedawe(problem, plan, step=0.1, local_steps=2).x
    one = fedavg(problem, plan[3:], step=0.1, local_steps=2, x0=xs[3]).x[-1]
    np.testing.assert_allclose(xs[4], xs[3] + 3 * (one - xs[3]), rtol=RTOL)
    np.testing.assert_array_equal(xs[2], xs[1])   # empty rounds change nothing


def test_local_sgd_gossip_with_full_participation_is_fedavg(problem):
    plan = np.ones((15, 4), dtype=bool)
    np.testing.assert_allclose(local_sgd_gossip(problem, plan, step=0.1, local_steps=2).x,
                               fedavg(problem, plan, step=0.1, local_steps=2).x, rtol=RTOL)


@pytest.mark.parametrize("func", [fedawe, local_sgd_gossip])
@pytest.mark.parametrize("kwargs, pattern", [
    (dict(plan=np.ones((3, 5), bool), step=0.1, local_steps=1), "plan"),
    (dict(plan=np.ones((3, 4), bool), step=-0.1, local_steps=1), "step"),
    (dict(plan=np.ones((3, 4), bool), step=0.1, local_steps=0), "local_steps")])
def test_bad_input(problem, func, kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        func(problem, **kwargs)


def test_fedawe_bad_server_step(problem):
    with pytest.raises(ValueError, match="server_step"):
        fedawe(problem, np.ones((2, 4), bool), step=0.1, local_steps=1, server_step=0.0)


@pytest.mark.parametrize("method", ["fedau", "mifa", "scaffold", "proxskip"])
def test_a_diverging_local_run_raises_as_before(method):
    """The local steps check the clients once per round, but a non-finite point still raises
    the ValueError of ``client_gradients`` naming ``X``."""
    from flbounds import algorithms
    from flbounds.participation import Bernoulli
    from flbounds.problems import random_quadratics

    rng = np.random.default_rng(0)
    problem = random_quadratics(rng, 3, 2, mu=1.0, L=2.0)
    plan = Bernoulli(np.full(3, 0.9)).plan(rng, 400)
    with pytest.raises(ValueError, match="X"):
        getattr(algorithms, method)(problem, plan, step=5.0, local_steps=3)
