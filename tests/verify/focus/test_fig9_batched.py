"""Fig. 9's baselines run all seeds at once: each seed's curve is the per-plan method on a
:class:`NoiseTape` of that seed's draws, bit for bit."""

import numpy as np

from flbounds import algorithms
from flbounds.problems import random_quadratics
from verify.focus import fig9


def test_batched_seeds_equal_per_seed_runs_on_noise_tapes():
    rng = np.random.default_rng(3)
    problem = random_quadratics(rng, fig9.N_CLIENTS, fig9.DIM, mu=0.5, L=1.0)
    process = fig9._modes(rng)["active"]
    n_rounds, seeds = 40, rng.spawn(3)
    runs = fig9._run_seeds(problem, process, seeds, n_rounds)
    scale = fig9.SIGMA / np.sqrt(fig9.DIM)
    for seed, run in zip(seeds, runs, strict=True):
        child = np.random.default_rng(seed.bit_generator.seed_seq)   # the same draws again
        plan = process.plan(child, n_rounds)
        child.standard_normal((n_rounds, fig9.N_CLIENTS, fig9.TAU, fig9.DIM))
        n_draws = int(plan.sum()) * fig9.TAU
        for name in fig9.BASELINES:
            tape = fig9.NoiseTape(problem, scale * child.standard_normal((n_draws, fig9.DIM)))
            xs = getattr(algorithms, name)(tape, plan, step=fig9.STEP, local_steps=fig9.TAU).x
            np.testing.assert_array_equal(run[name], fig9._gap_curve(problem, xs))
