r"""The label-skew Gaussian-mixture task of spec V9 and the FedALS runs on it.

Classes c = 0..C-1 have means :math:`\mu_c \sim N(0, s^2 I_{20})` (s^2 = 0.36), x = mu_y +
N(0, I). Non-iid: client k holds classes {2k, 2k+1} (the "sorted labels" split of the paper's
experiments); iid control: every client samples all classes. The population is the uniform
mixture over all classes (= the clients' mixture with uniform weights in both splits).
Every random quantity (means, datasets, test sets, initial weights, batch indices) is drawn
here from the caller's generator; the algorithm only consumes them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.algorithms.fedals import fedals, fedals_periods, intended_schedule
from flbounds.theory.generalization import single_threaded_blas
from verify.fedals import mlp

N_CLASSES, N_INPUTS, MEAN_VAR = 10, 20, 0.36
SIZES = (N_INPUTS, 64, 64, N_CLASSES)
#: steps whose batch keys :func:`make_plan` draws at a time
PLAN_CHUNK = 50


class Task(NamedTuple):
    """Per replicate (axis 0): training data (S, K, n, 20) / (S, K, n), test data (S, m, 20)."""

    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def make_task(rng, n_seeds: int, n_clients: int, n_samples: int, n_test: int,
              split: str) -> Task:
    """Draw class means, client datasets and a test set for each replicate."""
    if split not in ("noniid", "iid"):
        raise ValueError("split must be 'noniid' or 'iid'")
    means = np.sqrt(MEAN_VAR) * rng.standard_normal((n_seeds, N_CLASSES, N_INPUTS))
    if split == "noniid":
        per = N_CLASSES // n_clients
        own = (np.arange(n_clients)[:, None] * per + np.arange(per)[None, :])
        pick = rng.integers(0, per, size=(n_seeds, n_clients, n_samples))
        y = np.take_along_axis(np.broadcast_to(own, (n_seeds, n_clients, per)), pick, axis=2)
    else:
        y = rng.integers(0, N_CLASSES, size=(n_seeds, n_clients, n_samples))
    seeds = np.arange(n_seeds)[:, None, None]
    X = means[seeds, y] + rng.standard_normal((n_seeds, n_clients, n_samples, N_INPUTS))
    y_test = rng.integers(0, N_CLASSES, size=(n_seeds, n_test))
    X_test = means[np.arange(n_seeds)[:, None], y_test] + \
        rng.standard_normal((n_seeds, n_test, N_INPUTS))
    return Task(X, y, X_test, y_test)


def make_plan(rng, n_steps: int, n_seeds: int, n_clients: int, n_samples: int,
              batch_size: int) -> np.ndarray:
    """Batch indices (T, S, K, b): b distinct samples per step, uniform over the client's n
    (the b smallest of n uniform keys). Drawn and selected in chunks of steps: the keys are
    the generator's doubles in the same order, so the plan is the one of a single draw of
    all (T, S, K, n) keys, without holding them all (240 MB at the full profile's size)."""
    plan = np.empty((n_steps, n_seeds, n_clients, batch_size), dtype=np.int64)
    for start in range(0, n_steps, PLAN_CHUNK):
        stop = min(n_steps, start + PLAN_CHUNK)
        keys = rng.random((stop - start, n_seeds, n_clients, n_samples))
        plan[start:stop] = np.argpartition(keys, batch_size, axis=-1)[..., :batch_size]
    return plan


def batch_oracle(task: Task):
    """grad(theta (S, K, P), idx (S, K, b)) -> gradients on the clients' mini-batches."""
    data = mlp.batch_data(task.X, task.y, SIZES)

    def grad(theta, idx):
        return mlp.batch_gradients(theta, data, idx)
    return grad


def batch_descent(task: Task):
    """descend(theta (S, K, P), step, idx (S, K, b)[, c_k, c]): the local SGD step on the
    clients' mini-batches in place, fused into the gradient kernel (the numbers of
    :func:`batch_oracle` and the step; with control variates, of the step along
    ``(grad - c_k) + c``)."""
    data = mlp.batch_data(task.X, task.y, SIZES)

    def descend(theta, step, idx, c_k=None, c=None):
        mlp.sgd_step(theta, data, idx, step, c_k, c)
    return descend


class RunResult(NamedTuple):
    """Per replicate: test accuracy, test loss, train loss (uniform over clients), gap, and per
    layer the time-averaged consensus distance per parameter (when recorded)."""

    test_acc: np.ndarray
    test_loss: np.ndarray
    train_loss: np.ndarray
    gap: np.ndarray
    consensus: list


def run_fedals(task: Task, theta0: np.ndarray, plan: np.ndarray, *, step: float,
               local_steps: int, alpha: int, n_steps: int,
               record_consensus: bool = False, convention: str = "end",
               control: str = "none", phi_layers: int | None = None) -> RunResult:
    """FedALS with phi = the hidden layers (period alpha tau), h = the output layer (tau).

    Sync convention (spec 2.2): the default ``"end"`` averages group g after the steps s with
    (s + 1) mod P_g = 0, i.e. at the end of each period, the round structure of Algorithm 2
    (alpha = 1 is FedAvg round for round, ``fedals.alg1.alpha1_is_fedavg``; floor(T/P_g)
    syncs). The authors' code (spec 2.2, ``convention="code"``) averages after the steps
    with s mod P_g = 0: the same period, shifted one step earlier, plus one extra average
    after the very first step (ceil(T/P_g) syncs). Every client starts from the same
    model, so that first average only removes one step of drift; the two conventions differ
    by a one-step phase and the last partial period, not in the algorithm. The V9-V11 runs
    use ``"end"``; the toolkit output is the full average in both. ``control="scaffold"``
    runs FedALS+SCAFFOLD (per-group control variates, :func:`flbounds.algorithms.fedals`);
    with alpha = 1 that is SCAFFOLD. ``phi_layers``: the leading layers in phi (default:
    all but the output layer; the number of layers puts the whole model in phi).
    """
    layers = mlp.layer_slices(SIZES)
    split = len(layers) - 1 if phi_layers is None else phi_layers
    if not 1 <= split <= len(layers):
        raise ValueError(f"phi_layers must lie in [1, {len(layers)}], got {split}")
    body = slice(layers[0].start, layers[split - 1].stop)
    head_p, body_p = fedals_periods(local_steps, alpha)
    if record_consensus:   # one group per layer, each with its own period
        groups = layers
        periods = [body_p] * split + [head_p] * (len(layers) - split)
    elif split == len(layers):
        groups, periods = [body], [body_p]
    else:
        groups = [body, slice(layers[split].start, layers[-1].stop)]
        periods = [body_p, head_p]
    sync = intended_schedule(n_steps, periods, convention=convention)
    with single_threaded_blas():   # small products (the consensus record)
        tr = fedals(batch_oracle(task), theta0, plan, step=step, sync=sync, groups=groups,
                    record_consensus=record_consensus, control=control,
                    periods=periods if control != "none" else None,
                    descend=batch_descent(task))
    test_loss, test_acc = mlp.loss_accuracy(tr.output, task.X_test, task.y_test, SIZES)
    K = task.X.shape[1]
    out_b = np.broadcast_to(tr.output[:, None, :], (tr.output.shape[0], K, tr.output.shape[1]))
    train_loss = mlp.loss_accuracy(out_b, task.X, task.y, SIZES)[0].mean(axis=1)
    sizes = [s.stop - s.start for s in groups]
    cons = [c.mean(axis=0) / n for c, n in zip(tr.consensus, sizes, strict=True)] \
        if record_consensus else []
    return RunResult(test_acc, test_loss, train_loss, test_loss - train_loss, cons)


def alpha_sweep(rng, *, split, alphas, n_seeds, n_clients=5, n_samples=100, n_test=2000,
                n_steps=3000, batch_size=16, step=0.05, local_steps=5, controls=("none",),
                phi_layers=None):
    """Same task, initial model and batch plan for every alpha (paired across alpha); with
    several ``controls`` the keys are (alpha, control) pairs."""
    task = make_task(rng, n_seeds, n_clients, n_samples, n_test, split)
    init = mlp.init_params(rng, n_seeds, SIZES)
    theta0 = np.repeat(init[:, None, :], n_clients, axis=1)
    plan = make_plan(rng, n_steps, n_seeds, n_clients, n_samples, batch_size)
    runs = {(a, c): run_fedals(task, theta0, plan, step=step, local_steps=local_steps,
                               alpha=a, n_steps=n_steps, control=c, phi_layers=phi_layers)
            for a in alphas for c in controls}
    return {a: runs[(a, c)] for a, c in runs} if controls == ("none",) else runs
