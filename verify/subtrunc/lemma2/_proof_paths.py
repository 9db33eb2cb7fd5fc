r"""The local SGD paths the proof-step claims of Lemma 2 ((56), (57), (59)) read, run once.

The three claims check three inequalities on the same experiment (n = 20 least-squares
clients, eta = 1/(3 L E), ``n_points`` start points, ``n_paths`` paths each), so they share one
run: the problem and the paths come from the generator of ``subtrunc.lemma2.proof_step_56``
(root seed of the calling claim's generator), and each start point's paths are reduced at
once to the per-(point, tau) Monte Carlo mean and standard error of (LHS - RHS) of every
step, so only those numbers are kept (cached per process, and kept in the check's shared runs,
:func:`flbounds.ledger.engine.shared_runs.stored`: the claims that run after the first, in
any process of the check, read them; peak memory is one point's paths instead of all of
them).
"""

from __future__ import annotations

import json

import numpy as np

from flbounds.ledger.api.seeds import claim_seed_sequence
from flbounds.ledger.api.taskkey import code_digest
from flbounds.ledger.engine.shared_runs import stored

from . import DIM, N_CLIENTS, SIGMA2, _setup, local_paths

#: the claim whose generator draws the shared paths
SOURCE = "subtrunc.lemma2.proof_step_56"
_CACHE: dict = {}


def _root_entropy(rng: np.random.Generator) -> int:
    """The root seed of a claim's generator (an int for ledger-made generators)."""
    entropy = getattr(getattr(rng.bit_generator, "seed_seq", None), "entropy", None)
    if not isinstance(entropy, int):
        raise ValueError("rng must come from a SeedSequence with integer entropy (the ledger's "
                         f"claim rng); got entropy {entropy!r}")
    return entropy


def _mc(d) -> tuple[float, float]:
    """MC mean and standard error of per-path differences."""
    return d.mean(), d.std(ddof=1) / np.sqrt(d.size)


def _point_diffs(prob, step, iterates, grads, local_steps) -> dict:
    """(mean, SE) of (LHS - RHS) per tau of steps (56), (57) and (59) on one point's paths."""
    L, n = prob.L, N_CLIENTS
    out = {"56": [], "57": [], "59": []}
    g0_i = np.sum(grads[0, 0] ** 2, axis=1)                      # ||grad f_i(w_k)||^2
    grads_sq = grads ** 2                                         # squared once, not per tau
    for tau in range(1, local_steps + 1):
        spread = iterates[:, tau] - iterates[:, tau].mean(axis=1, keepdims=True)
        lhs = np.sum(spread**2, axis=(1, 2))
        rhs56 = step**2 * tau * (np.sum(grads_sq[:, :tau], axis=(1, 2, 3))
                                 + N_CLIENTS * tau * SIGMA2)
        out["56"].append(_mc(lhs - rhs56))
        rhs57 = 9 * step**2 * tau**2 / 8 * np.sum(2 * g0_i + SIGMA2)
        out["57"].append(_mc(lhs - rhs57))
    u = grads.mean(axis=2)                                        # (paths, E, d)
    full = grads[0, 0].mean(axis=0)                               # grad f(w_k)
    g0 = np.sum(grads[0, 0] ** 2)
    for tau in range(local_steps):
        lhs = np.sum((full - u[:, tau]) ** 2, axis=1)
        rhs = (2 * step**2 * L**2 * tau * np.sum(u[:, :tau] ** 2, axis=(1, 2))
               + 9 * step**2 * L**2 * tau**2 / (2 * n) * g0
               + step**2 * L**2 * tau * SIGMA2 * (2 / n + 9 * tau / 4))
        out["59"].append(_mc(lhs - rhs))
    return out


def proof_step_diffs(rng, *, n_points: int, n_paths: int, local_steps: int):
    """(problem, step, {"56": ..., "57": ..., "59": ...}): per step, the (means, SEs) arrays
    of (LHS - RHS) over (point, tau) in point-major order, from the shared run."""
    root = _root_entropy(rng)
    key = (root, n_points, n_paths, local_steps)
    if key not in _CACHE:
        source = np.random.default_rng(claim_seed_sequence(root, SOURCE))
        prob, step = _setup(source, local_steps, 1.0)

        def compute():
            steps = {"56": [], "57": [], "59": []}
            for r in source.spawn(n_points):
                w = 2 * r.normal(size=DIM)
                iterates, grads = local_paths(prob, w, local_steps=local_steps, step=step,
                                              rng=r, n_paths=n_paths)
                for name, pairs in _point_diffs(prob, step, iterates, grads,
                                                local_steps).items():
                    steps[name] += pairs
            return {name: [list(x) for x in zip(*pairs, strict=True)]
                    for name, pairs in steps.items()}

        shared = stored(json.dumps([SOURCE, "proof_paths", str(root), n_points, n_paths,
                                    local_steps, code_digest(__name__)]), compute)
        _CACHE.clear()                 # one experiment per process is enough to share
        _CACHE[key] = prob, step, {name: tuple(np.array(x) for x in pair)
                                   for name, pair in shared.items()}
    return _CACHE[key]
