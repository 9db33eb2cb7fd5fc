"""Samplers run side by side (one round loop, replicates as an axis) give each sampler's own
run bit for bit, on the softmax problem (NumPy gradients) and on ridge (compiled)."""

import numpy as np
import pytest

from flbounds.algorithms.fedavg_sampler import fedavg_sampler
from flbounds.problems.generators import random_ridge
from flbounds.sampling import Avare, KVib, Mabs, UniformISP, UniformRSP, Vrb
from verify.kvib.fedprox_synthetic import fedprox_synthetic
from verify.kvib.fl import side_by_side


def _samplers(n, k, t):
    return [KVib(n, k, t, G=1.0), UniformISP(n, k), UniformRSP(n, k), Vrb(n, k, t, G=1.0),
            Mabs(n, k, t, G=1.0), Avare(n, k, G=1.0)]


@pytest.mark.parametrize("kind", ["softmax", "ridge"])
@pytest.mark.parametrize("diagnostics", ["variance", False])
def test_side_by_side_is_each_run(kind, diagnostics):
    rng = np.random.default_rng(7)
    problem = (fedprox_synthetic(rng, 0.0, 0.0, n_clients=12, max_samples=60)
               if kind == "softmax" else random_ridge(rng, 12, 8, 4, lam=1.0))
    n, k, t, step = problem.n_clients, 3, 6, 0.05
    seeds = np.random.SeedSequence(11).spawn(6)
    together = side_by_side(problem, _samplers(n, k, t), [np.random.default_rng(s) for s in seeds],
                            n_rounds=t, local_steps=2, step=step, diagnostics=diagnostics)
    for sampler, seed, got in zip(_samplers(n, k, t), seeds, together, strict=True):
        alone = fedavg_sampler(problem, sampler, np.random.default_rng(seed), n_rounds=t,
                               local_steps=2, step=step, diagnostics=diagnostics)
        for a, b in zip(alone, got, strict=True):
            assert np.array_equal(a, b, equal_nan=True)


def test_side_by_side_checks_its_inputs():
    problem = random_ridge(np.random.default_rng(0), 4, 5, 2, lam=1.0)
    with pytest.raises(ValueError, match="samplers and rngs"):
        side_by_side(problem, [UniformISP(4, 2)], [], n_rounds=2, local_steps=1, step=0.1)
    s = UniformISP(4, 2)
    with pytest.raises(ValueError, match="distinct"):
        side_by_side(problem, [s, s], [np.random.default_rng(0)] * 2, n_rounds=2,
                     local_steps=1, step=0.1)
