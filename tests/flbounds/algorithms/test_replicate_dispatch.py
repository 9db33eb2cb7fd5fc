"""With one group of replicates the batched runs skip the parallel kernels: the direct call
of the group function (or, for SAFARI below SAFARI_MIN_BLOCK replicates, the single runs)
gives the parallel kernel's numbers bit for bit."""

import numpy as np
import pytest

from flbounds.algorithms._common import problem_data, round_settings
from flbounds.algorithms.batched_safari import server_population, stack_safari_plans
from flbounds.algorithms.safari import kernel_plan, safari_plan
from flbounds.kernels.replicates import (
    SAFARI_MIN_BLOCK,
    fedavg_replicates,
    run_fedavg_replicates,
    run_safari_replicates,
    safari_replicates,
)
from flbounds.problems import random_ridge


def _setup():
    problem = random_ridge(np.random.default_rng(1), 15, 6, 4, lam=0.1)
    return problem, problem_data(problem)


def test_fedavg_direct_group_equals_the_parallel_kernel():
    problem, data = _setup()
    plans = np.random.default_rng(2).random((5, 8, 15)) < 0.4
    settings = round_settings(0.2, 3, parallel=False)._replace(n_threads=1)
    x0 = np.linspace(-1, 1, problem.dim)
    out = [np.empty((5, 9, problem.dim)) for _ in range(2)]
    fedavg_replicates(data, plans, settings, x0, out[0])
    run_fedavg_replicates(data, plans, settings, x0, out[1])
    assert np.array_equal(out[0], out[1])
    plans[0, 0] = ~plans[0, 0]                 # the comparison can fail
    run_fedavg_replicates(data, plans, settings, x0, out[1])
    assert not np.array_equal(out[0], out[1])


@pytest.mark.parametrize("n_reps", [4, SAFARI_MIN_BLOCK])   # single runs; the direct group
def test_safari_direct_group_equals_the_parallel_kernel(n_reps):
    problem, data = _setup()
    plans = [safari_plan(r, n_rounds=6, q=0.5, eligible=np.arange(15), n_sampled=3,
                         local_steps=2, dim=problem.dim, client_noise_std=0.1,
                         server_noise_std=0.1) for r in np.random.default_rng(3).spawn(n_reps)]
    plan = kernel_plan(stack_safari_plans(plans))
    starts = np.random.default_rng(4).normal(size=(n_reps, problem.dim))
    outs = [(np.empty((n_reps, 7, problem.dim)), np.empty((n_reps, 6))) for _ in range(2)]
    pop = server_population(data)
    safari_replicates(data, pop, plan, (0.05, 0.05), starts, outs[0], 1)
    run_safari_replicates(data, pop, plan, (0.05, 0.05), starts, outs[1], 1)
    for a, b in zip(outs[0], outs[1], strict=True):
        assert np.array_equal(a, b, equal_nan=True)
