r"""Local SGD with gossip averaging over the clients present (Koloskova et al., 2020), a
baseline of FOCUS's Table 1 ("doubly stochastic matrix").

Every client keeps its own model and runs :math:`\tau` local GD steps in every round; the
clients of :math:`S_r` then replace their models by their average, the others keep theirs.
The mixing matrix :math:`W(S_r)` (average on the block :math:`S_r`, identity elsewhere) is
doubly stochastic, so the mean model :math:`\bar x_r = N^{-1}\sum_i x_{r,i}` is what the
method outputs. With a constant step it converges to a neighbourhood of :math:`x^\star` only.

References
----------
A. Koloskova, N. Loizou, S. Boreiri, M. Jaggi, S. U. Stich, "A unified theory of
decentralized SGD with changing topology and local updates", ICML 2020.
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms.baselines import BaselineTrace, _setup


def local_sgd_gossip(problem, plan, *, step, local_steps, x0=None) -> BaselineTrace:
    r"""Local SGD (GD here) with :math:`W(S_r)` gossip (module docstring gives the update).

    Parameters
    ----------
    problem : flbounds.problems problem
    plan : array_like of bool, shape (n_rounds, n_clients)
        Row r: the clients that average at the end of round r.
    step : float, Schedule or array
        :math:`\eta > 0`, or one per round (:mod:`flbounds.algorithms.schedules`).
    local_steps : int
        :math:`\tau \ge 1`.
    x0 : array_like, shape (d,), optional
        Common start of every client (default 0).

    Returns
    -------
    BaselineTrace
        ``x`` (n_rounds + 1, d): the mean of the client models after each round.
    """
    plan, step, local_steps, x, xs = _setup(problem, plan, step, local_steps, x0)
    models = np.tile(x, (problem.n_clients, 1))
    for r, mask in enumerate(plan):
        for _ in range(local_steps):
            models -= step[r] * problem.client_gradients(models)
        if mask.any():
            models[mask] = models[mask].mean(axis=0)
        xs[r + 1] = models.mean(axis=0)
    return BaselineTrace(xs)
