"""The MLP sweep split into cells gives the one-task sweep's numbers, bit for bit."""

import json

import numpy as np

from verify.fedals.mlp_cells import as_run, sweep_cell, sweep_grid
from verify.fedals.mlp_task import alpha_sweep

SWEEP = dict(split="noniid", n_seeds=2, n_steps=30, n_test=50, local_steps=5)


def test_cells_give_the_sweeps_runs():
    whole = alpha_sweep(np.random.default_rng(8), alphas=[1, 10], controls=("none", "scaffold"),
                        **SWEEP)
    settings = [dict(alpha=a, control=c) for a in (1, 10) for c in ("none", "scaffold")]
    cells = json.loads(json.dumps(sweep_grid(np.random.default_rng(8), settings=settings,
                                             **SWEEP)))
    for setting, cell in zip(settings, cells, strict=True):
        out = sweep_cell(rng=np.random.default_rng(0), **cell)
        got = as_run(json.loads(json.dumps({k: v.tolist() for k, v in out.items()})))
        want = whole[(setting["alpha"], setting["control"])]
        for f in ("test_acc", "test_loss", "train_loss", "gap"):
            assert np.array_equal(getattr(got, f), getattr(want, f))
