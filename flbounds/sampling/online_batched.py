r"""Monte Carlo over seeds and budgets of the online bandit baselines (Vrb, Mabs) in one batch.

:func:`baseline_costs` runs ``run_online(Vrb(N, K, T, G=G), feedback, T, rng)`` (or ``Mabs``)
for every budget K of ``budgets`` and every generator of ``rngs``, the runs of one generator
one after the other in the order of ``budgets`` (each continuing that generator's stream), and
returns every run's per-round costs, bit for bit those of the unbatched runs. The uniforms are
drawn up front, T K doubles per run in run order, which is exactly what the unbatched runs'
``rng.choice(N, K, p=q)`` calls consume; the rounds run in
:mod:`flbounds.kernels.bandit_replicates`. Memory: the uniforms (T sum(K) per seed) and
O(N) per replicate.
"""

from __future__ import annotations

import numpy as np

from flbounds.kernels.bandit_replicates import (
    BanditRun,
    mabs_draw,
    mabs_shift,
    mabs_update,
    vrb_rounds,
)

from .bandits import Mabs, Vrb
from .online import Assumption51Feedback

KINDS = {"vrb": Vrb, "mabs": Mabs}


def _check(kind, feedback, budgets, n_rounds, rngs):
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
    if not isinstance(feedback, Assumption51Feedback):
        raise ValueError("feedback must be an Assumption51Feedback")
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, int | np.integer) \
            or n_rounds < 1:
        raise ValueError(f"n_rounds must be a positive integer, got {n_rounds!r}")
    budgets = list(budgets)
    if not budgets:
        raise ValueError("budgets must hold at least one budget")
    rngs = list(rngs)
    if not rngs or not all(isinstance(r, np.random.Generator) for r in rngs):
        raise ValueError("rngs must be a non-empty sequence of numpy Generators")
    return budgets, rngs


def baseline_costs(kind: str, feedback: Assumption51Feedback, budgets, n_rounds: int, rngs,
                   *, G: float) -> np.ndarray:
    """Per-round costs of every (generator, budget) run of a bandit baseline.

    Parameters
    ----------
    kind : {"vrb", "mabs"}
        The sampler, built as ``Vrb(N, K, T, G=G)`` or ``Mabs(N, K, T, G=G)``.
    feedback : Assumption51Feedback
    budgets : sequence of int
        The budgets K, run in this order on each generator.
    n_rounds : int
        T.
    rngs : sequence of numpy.random.Generator
        One per seed; consumed exactly as the unbatched runs consume it.
    G : float

    Returns
    -------
    numpy.ndarray, shape (len(rngs), len(budgets), n_rounds)
        ``out[s, j]`` is ``run_online(sampler(budgets[j]), feedback, T, rngs[s]).costs``.
    """
    budgets, rngs = _check(kind, feedback, budgets, n_rounds, rngs)
    n = feedback.n_clients
    samplers = [KINDS[kind](n, k, n_rounds, G=G) for k in budgets]  # validates K and G
    ks = np.array([s.budget for s in samplers], dtype=np.int64)
    n_reps = len(rngs) * ks.size
    uniforms = np.zeros((n_reps, n_rounds, int(ks.max())))
    for s, rng in enumerate(rngs):
        draws = rng.random(int(n_rounds * ks.sum()))
        start = 0
        for j, k in enumerate(ks):
            uniforms[s * ks.size + j, :, :k] = draws[start:start + n_rounds * k].reshape(
                n_rounds, k)
            start += n_rounds * k
    mix = np.array([s.theta if kind == "vrb" else s.eta for s in samplers] * len(rngs))
    scale = np.array([0.0 if kind == "vrb" else s.delta for s in samplers] * len(rngs))
    run = BanditRun(np.tile(ks, len(rngs)), mix, scale, uniforms, np.empty((n_reps, n_rounds)),
                    np.empty((n_reps, n_rounds), dtype=np.int64))
    fb = tuple(np.ascontiguousarray(a, dtype=float)
               for a in (feedback.lam, feedback.base, feedback.decay))
    if kind == "vrb":
        vrb_rounds(fb, run, np.array([s.s for s in samplers] * len(rngs)))
    else:
        _mabs(fb, run, n_reps, n)
    return run.costs.reshape(len(rngs), ks.size, n_rounds)


def _mabs(fb, run, n_reps, n):
    """Mabs round by round: NumPy's ``exp`` and ``** 3`` between the compiled steps."""
    u, shifted = np.zeros((n_reps, n)), np.empty((n_reps, n))
    q, counts = np.empty((n_reps, n)), np.empty((n_reps, n), dtype=np.int64)
    for t in range(1, run.costs.shape[1] + 1):
        mabs_shift(u, shifted)
        mabs_draw(fb, run, t, np.exp(shifted), q, counts)
        mabs_update(fb, run, t, u, counts, q ** 3)
