"""Rounds per second of FedAvg and FOCUS on federated ridge, compiled vs a per-client loop.

Ridge with d = 50, 20 samples per client, lam = 0.1, tau = 5 local steps, Bernoulli(0.1)
participation (the same plan for both paths), N from 10^2 to 10^5 clients (quick: to 10^4).
Steps: FedAvg 0.01 (about 1/L); FOCUS 1/(N L), since its server step multiplies the tracker
sum over all N clients (at 0.01 its iterates overflow from N = 10^4 on).
Fast path: ``flbounds.algorithms.fedavg`` / ``focus`` (one compiled call for all rounds).
Baseline, timed in the same run: the way the papers' reference code runs, a Python loop over
participating clients with one NumPy gradient ``X_i'(X_i z - y_i)/n + lam z`` per local step.
Both paths produce the same iterates (checked: max abs difference reported). Times are the
best of 3 batches; compilation is excluded (warm-up call first).
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._common import check_approaches, parse_args, rounding_tolerance, write
from flbounds.algorithms import fedavg, focus
from flbounds.problems import random_ridge

NAME = "focus_rounds"
DIM, SAMPLES, LAM, TAU, P, STEP = 50, 20, 0.1, 5, 0.1, 0.01
PROFILES = {"quick": (100, 1000, 10000), "full": (100, 1000, 10000, 100000)}


def step_for(name: str, problem) -> float:
    """The step of ``name`` ("FedAvg" or "FOCUS") on ``problem`` (module docstring)."""
    return STEP if name == "FedAvg" else 1.0 / (problem.n_clients * float(problem.L))


def loop_fedavg(problem, plan, x0, step=STEP):
    X, Y, n = problem.features, problem.targets, SAMPLES
    x = x0.copy()
    for mask in plan:
        finals = []
        for i in np.flatnonzero(mask):
            z = x.copy()
            for _ in range(TAU):
                z -= step * (X[i].T @ (X[i] @ z - Y[i]) / n + LAM * z)
            finals.append(z)
        if finals:
            x = np.mean(finals, axis=0)
    return x


def loop_focus(problem, plan, x0, step):
    X, Y, n = problem.features, problem.targets, SAMPLES
    x, y = x0.copy(), np.zeros(DIM)
    g = np.zeros((problem.n_clients, DIM))
    for mask in plan:
        for i in np.flatnonzero(mask):
            z, v = x.copy(), np.zeros(DIM)
            for t in range(TAU):
                if t > 0:
                    z -= step * v
                h = X[i].T @ (X[i] @ z - Y[i]) / n + LAM * z
                v = v + h - g[i]
                g[i] = h
            y += v
        x = x - step * y
    return x


def check_same(diff, rounds, x, what):
    """AssertionError unless the compiled and the loop iterate after ``rounds`` rounds agree
    within :func:`benchmarks._common.rounding_tolerance` (ridge: max(n, d) * d products per
    gradient entry; for FOCUS the same form without the non-expansiveness argument, as in the
    peers benchmark; the differences observed are O(1e-15))."""
    tol = rounding_tolerance(rounds, TAU, DIM * max(SAMPLES, DIM), 1.0 + float(np.max(np.abs(x))))
    if not diff <= tol:
        raise AssertionError(f"{what}: the compiled run and the loop differ by {diff:.3g} "
                             f"> tolerance {tol:.3g}")


def checked_against_loop(algo, loop, problem, plan, step, slow_rounds, what):
    """Before timing (the call also compiles): ``algo`` over the whole ``plan`` does not move
    away from x* (:func:`~benchmarks._common.check_approaches`), and its iterate after
    ``slow_rounds`` rounds agrees with ``loop`` over those rounds (:func:`check_same`).
    Returns that difference."""
    trace = algo(problem, plan, step=step, local_steps=TAU).x
    check_approaches(problem, trace, what)
    x = trace[slow_rounds]
    diff = float(np.max(np.abs(x - loop(problem, plan[:slow_rounds], np.zeros(DIM), step))))
    check_same(diff, slow_rounds, x, what)
    return diff


def rate(fn, n_rounds, repeat=3):
    """Best rounds per second over ``repeat`` calls."""
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return n_rounds / best


def bench(n_clients, rng):
    problem = random_ridge(rng, n_clients, SAMPLES, DIM, lam=LAM, heterogeneity=0.5)
    fast_rounds = max(3, int(2e6 // n_clients))
    slow_rounds = max(2, int(2e4 // n_clients))
    plan = rng.random((fast_rounds, n_clients)) < P
    x0 = np.zeros(DIM)
    rows = []
    for name, algo, loop in (("FedAvg", fedavg, loop_fedavg), ("FOCUS", focus, loop_focus)):
        step = step_for(name, problem)
        same = checked_against_loop(algo, loop, problem, plan, step, slow_rounds,
                                    f"{name} N={n_clients}")
        fast = rate(lambda a=algo, s=step: a(problem, plan, step=s, local_steps=TAU),
                    fast_rounds)
        slow = rate(lambda lp=loop, s=step: lp(problem, plan[:slow_rounds], x0, s),
                    slow_rounds, repeat=2)
        rows.append({"algorithm": name, "N": n_clients, "rounds_per_s": fast,
                     "loop_rounds_per_s": slow, "speedup": fast / slow,
                     "max_abs_diff": same})
    return rows


def main(argv=None):
    args = parse_args(argv, __doc__.splitlines()[0])
    rng = np.random.default_rng(0)
    rows = [row for n in PROFILES[args.profile] for row in bench(n, rng)]
    for row in rows:
        print(f"{row['algorithm']:7s} N={row['N']:>6d} compiled {row['rounds_per_s']:10.1f} "
              f"rounds/s, loop {row['loop_rounds_per_s']:9.2f} rounds/s, "
              f"speed-up {row['speedup']:7.1f}, max|diff| {row['max_abs_diff']:.1e}")
    return write(args.out, NAME, "FedAvg and FOCUS rounds per second (ridge, d = 50, "
                 "20 samples/client, tau = 5, Bernoulli 0.1)", rows,
                 ["algorithm", "N", "rounds_per_s", "loop_rounds_per_s", "speedup",
                  "max_abs_diff"],
                 notes="Compiled: one numba call for all rounds. Loop: Python loop over "
                       "participating clients, NumPy gradient per local step (as the "
                       "papers' reference code). Same plan and iterates (max_abs_diff).")


if __name__ == "__main__":
    main()
