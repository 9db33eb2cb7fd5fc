r"""The local SGD paths the proof-step claims of Lemma 2 ((56), (57), (59)) read, run once.

The three claims check three inequalities on the same experiment (n = 20 least-squares
clients, eta = 1/(3 L E), ``n_points`` start points, ``n_paths`` paths each), so they share one
run: the problem and the paths come from the generator of ``subtrunc.lemma2.proof_step_56``
(root seed of the calling claim's generator), and each start point's paths are reduced at
once to the per-(point, tau) Monte Carlo mean and standard error of (LHS - RHS) of every
step, so only those numbers are kept (cached per process, and kept in the check's shared runs,
:func:`flbounds.ledger.engine.runs.reused_run`: the claims that run after the first, in
any process of the check, read them; peak memory is one point's paths instead of all of
them).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger.api.seeds import claim_seed_sequence
from flbounds.ledger.engine.runs import reused_run

from ..toy_problems import gradients_of
from . import DIM, N_CLIENTS, PATH_BLOCK, SIGMA2, _setup

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


def _point_diffs_streamed(prob, step, w, rng, n_paths, local_steps) -> dict:
    """:func:`_point_diffs` of one point's :func:`~verify.subtrunc.lemma2.local_paths`, reduced
    as the paths run (a block of paths at a time, the same draws): per path the consensus
    left side of (56)/(57) after each step, the clients' mean gradient u_tau and the squared
    gradients (kept, for (56)'s sums over earlier steps), never every iterate; the same
    numbers."""
    n, d = N_CLIENTS, w.size
    grads_sq = np.empty((n_paths, local_steps, n, d))
    u = np.empty((n_paths, local_steps, d))
    spread_sq = np.empty((local_steps, n_paths))                 # after steps 1..E
    iterates = np.broadcast_to(w, (n_paths, n, d)).copy()
    gradients = gradients_of(prob)
    for tau in range(local_steps):
        for start in range(0, n_paths, PATH_BLOCK):
            paths = slice(start, min(start + PATH_BLOCK, n_paths))
            grads = gradients(iterates[paths])
            if tau == 0 and start == 0:
                first = grads[0].copy()                           # path 0 at w_k
            grads_sq[paths, tau] = grads ** 2
            u[paths, tau] = grads.mean(axis=1)
            noise = np.sqrt(SIGMA2 / d) * rng.normal(size=(paths.stop - start, n, d))
            after = iterates[paths] - step * (grads + noise)
            iterates[paths] = after
            spread = after - after.mean(axis=1, keepdims=True)
            spread_sq[tau, paths] = np.sum(spread**2, axis=(1, 2))
    L = prob.L
    out = {"56": [], "57": [], "59": []}
    g0_i = np.sum(first ** 2, axis=1)                             # ||grad f_i(w_k)||^2
    for tau in range(1, local_steps + 1):
        lhs = spread_sq[tau - 1]
        rhs56 = step**2 * tau * (np.sum(grads_sq[:, :tau], axis=(1, 2, 3))
                                 + N_CLIENTS * tau * SIGMA2)
        out["56"].append(_mc(lhs - rhs56))
        rhs57 = 9 * step**2 * tau**2 / 8 * np.sum(2 * g0_i + SIGMA2)
        out["57"].append(_mc(lhs - rhs57))
    full = first.mean(axis=0)                                     # grad f(w_k)
    g0 = np.sum(first ** 2)
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
                for name, pairs in _point_diffs_streamed(prob, step, w, r, n_paths,
                                                         local_steps).items():
                    steps[name] += pairs
            return {f"{name}:{i}": np.array(x, dtype=float)
                    for name, pairs in steps.items()
                    for i, x in enumerate(zip(*pairs, strict=True))}

        shared = reused_run({"run": "subtrunc.lemma2.proof_paths", "source": SOURCE,
                             "root": str(root), "n_points": n_points, "n_paths": n_paths,
                             "local_steps": local_steps}, compute, code=__name__)
        pairs: dict = {}
        for label, values in shared.items():
            name, _ = label.split(":")
            pairs.setdefault(name, []).append(values)
        _CACHE.clear()                 # one experiment per process is enough to share
        _CACHE[key] = prob, step, {name: tuple(pair) for name, pair in pairs.items()}
    return _CACHE[key]
