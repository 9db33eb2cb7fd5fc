r"""The MLP sweeps of :mod:`.mlp_task` split into cells, one run per cell (``claim(...,
cells=...)``), with the claim's own numbers.

A sweep draws its task, initial model and batch plan from the claim's generator, then runs
FedALS once per (alpha, control, tau); the runs draw nothing more. The grid records the
generator's state (:func:`verify.replay.generator_state`); each cell replays the same draws
from it (:func:`verify.replay.generator_at`) and runs its one setting, so a cell's numbers
are bit for bit those of the sweep run in one task, and the longest task is one run instead
of the whole sweep.
"""

from __future__ import annotations

import numpy as np

from verify.replay import generator_at, generator_state

from .mlp_task import RunResult, alpha_sweep


def sweep_grid(rng, *, settings, **sweep):
    """One cell per setting (a dict of ``alpha``, ``control``, ``local_steps``), each with
    the sweep's parameters and the state the claim's draws start from."""
    state = generator_state(rng)
    return [dict(sweep, **setting, state=state) for setting in settings]


def sweep_cell(*, rng, state, alpha, control="none", **sweep):
    """One run of the sweep (``rng``, the cell's own generator, is not used: the run replays
    the claim's draws)."""
    del rng
    res = alpha_sweep(generator_at(state), alphas=[alpha], controls=(control,), **sweep)
    run = res[alpha] if control == "none" else res[(alpha, control)]
    return dict(test_acc=run.test_acc, test_loss=run.test_loss, train_loss=run.train_loss,
                gap=run.gap)


def as_run(cell: dict) -> RunResult:
    """A cell's output as the sweep's :class:`~.mlp_task.RunResult` (no consensus)."""
    return RunResult(*(np.asarray(cell[f], dtype=float)
                       for f in ("test_acc", "test_loss", "train_loss", "gap")), [])
