r"""The MLP sweeps of :mod:`.mlp_task` split into cells, one run per cell (``claim(...,
cells=...)``), with the claim's own numbers, and each run computed once for every claim that
repeats it.

A sweep draws its task, initial model and batch plan from a generator, then runs FedALS once
per (alpha, control, tau, split of the layers); the runs draw nothing more. The grid records
the generator's state (:func:`verify.replay.generator_state`); each cell replays the same
draws from it (:func:`verify.replay.generator_at`) and runs its one setting, so a cell's
numbers are bit for bit those of the sweep run in one task, and the longest task is one run
instead of the whole sweep.

The non-iid sweeps at the paper's tau of Tables 1-3, Remark 5.1 and the alpha claims of V9
repeat runs: FedAvg at tau = 5 is in six of them. They all draw from one stream,
:data:`NONIID_STREAM` (:func:`verify.replay.shared_generator`), so a run is named by the same
description wherever it appears, and :func:`sweep_run` computes it once for the whole ledger
run (:func:`flbounds.ledger.engine.runs.reused_run`); paired comparisons inside a claim are
unchanged (one task, model and plan per claim, as before).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger.engine.runs import reused_run
from verify.replay import generator_at, generator_state, shared_generator

from . import mlp
from .mlp_task import SIZES, RunResult, alpha_sweep

#: the stream the non-iid sweeps draw their task, initial model and plan from: the claim
#: generator of ``fedals.table2.interior_optimum`` (whose numbers are thus those it had
#: alone), shared by the claims that repeat its runs
NONIID_STREAM = "fedals.table2.interior_optimum"

_FIELDS = ("test_acc", "test_loss", "train_loss", "gap")


def noniid_stream(rng: np.random.Generator) -> np.random.Generator:
    """The shared generator of the non-iid sweeps, for the root seed of ``rng``."""
    return shared_generator(rng, NONIID_STREAM)


def sweep_grid(rng, *, settings, **sweep):
    """One cell per setting (a dict of ``alpha``, ``control``, ``local_steps``,
    ``phi_layers``), each with the sweep's parameters and the state the draws start from."""
    state = generator_state(rng)
    return [dict(sweep, **setting, state=state) for setting in settings]


def sweep_run(*, state, alpha, split, n_seeds, n_steps, n_test, local_steps, control="none",
              phi_layers=None, n_clients=5, n_samples=100, batch_size=16,
              step=0.05) -> RunResult:
    """One run of the sweep whose draws start at ``state`` (no consensus record), computed
    once per description (:func:`flbounds.ledger.engine.runs.reused_run`)."""
    phi = len(mlp.layer_slices(SIZES)) - 1 if phi_layers is None else int(phi_layers)
    sweep = dict(split=split, n_seeds=int(n_seeds), n_steps=int(n_steps), n_test=int(n_test),
                 local_steps=int(local_steps), n_clients=int(n_clients),
                 n_samples=int(n_samples), batch_size=int(batch_size), step=float(step),
                 phi_layers=phi)

    def compute():
        res = alpha_sweep(generator_at(state), alphas=[alpha], controls=(control,), **sweep)
        run = res[alpha] if control == "none" else res[(alpha, control)]
        return {f: getattr(run, f) for f in _FIELDS}

    description = dict(run="alpha_sweep", state=state, alpha=int(alpha), control=control,
                       **sweep)
    arrays = reused_run(description, compute, code=__name__)
    return RunResult(*(arrays[f] for f in _FIELDS), [])


def sweep_cell(*, rng, state, alpha, control="none", **sweep):
    """One run of the sweep (``rng``, the cell's own generator, is not used: the run replays
    the claim's draws)."""
    del rng
    run = sweep_run(state=state, alpha=alpha, control=control, **sweep)
    return {f: getattr(run, f) for f in _FIELDS}


def as_run(cell: dict) -> RunResult:
    """A cell's output as the sweep's :class:`~.mlp_task.RunResult` (no consensus)."""
    return RunResult(*(np.asarray(cell[f], dtype=float) for f in _FIELDS), [])
