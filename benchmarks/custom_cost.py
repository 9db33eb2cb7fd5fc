"""The cost of the generic FedAvg-family round (``flbounds.algorithms.fedavg_family``) against
the built-in FedAvg (``flbounds.algorithms.fedavg``), one thread.

Three paths on the same problem and plan, N = 10^4 clients, tau = 5, p in {1, 0.1} (the
clients of the speed bar of ``benchmarks.peers``: quadratics d = 16 and ridge d = 50 with 20
samples per client):

- ``builtin``: ``fedavg``;
- ``description``: ``fedavg_family`` with the built-in FedAvg step ``local_gd()`` (the
  built-in expressed through the description; it gives ``fedavg``'s bits);
- ``custom``: ``fedavg_family`` with a step written here as a user would (``@numba.njit``,
  :func:`user_gd_step`, the same arithmetic, so the same bits; numba compiles the round loop
  for it at its first call, excluded from the times).

Each repeat times every path (best of a few calls of at least ``--min-time`` s, the order of
the paths rotating between repeats) and forms the ratios ``description / builtin`` and
``custom / builtin``; the table reports their median (and max) over the repeats. Targets (the
FL-vocabulary issue): the custom path within 2x of the built-in, the description within 10%.
Before timing, the three paths' iterates are compared (``identical``: the same bits).
"""

from __future__ import annotations

import argparse
import os
import statistics

import numba
import numpy as np
from numba import njit

from benchmarks import _results
from benchmarks._common import (
    DEFAULT_OUT,
    OUT_HELP,
    best_time,
    check_approaches,
    out_folder,
    prog,
    write,
)
from flbounds.algorithms import fedavg, fedavg_family, local_gd, local_update
from flbounds.cli._common import positive_int
from flbounds.problems import random_quadratics, random_ridge

NAME = "custom_cost"
N_CLIENTS, TAU, WORK = 10_000, 5, 200_000   # WORK: participant-rounds per call
FRACTIONS = (1.0, 0.1)
KINDS = ("quadratic", "ridge")
PATHS = ("builtin", "description", "custom")


@njit(fastmath=False)
def user_gd_step(z, g, x, state, eta, params):
    """A user's gradient step (not cached: a function of this module, as a user's own)."""
    for p in range(z.shape[0]):
        z[p] -= eta * g[p]


def make_problem(kind, seed=0):
    rng = np.random.default_rng([seed, KINDS.index(kind)])
    if kind == "quadratic":
        return random_quadratics(rng, N_CLIENTS, 16, mu=0.1, L=1.0, heterogeneity=1.0)
    return random_ridge(rng, N_CLIENTS, 20, 50, lam=0.1, heterogeneity=0.5)


def paths(problem, plan, step):
    """{path: callable returning the iterates}."""
    user = local_update(user_gd_step, label="user gradient step")
    gd = local_gd()
    return {"builtin": lambda: fedavg(problem, plan, step=step, local_steps=TAU).x,
            "description": lambda: fedavg_family(problem, plan, gd, step=step,
                                                 local_steps=TAU).x,
            "custom": lambda: fedavg_family(problem, plan, user, step=step,
                                            local_steps=TAU).x}


def measure(kind, p, repeats, min_time):
    problem = make_problem(kind)
    rounds = max(1, int(np.ceil(WORK / (N_CLIENTS * p))))
    plan = np.random.default_rng(1).random((rounds, N_CLIENTS)) < p
    step = 0.5 / float(problem.L)
    fns = paths(problem, plan, step)
    traces = {name: fn() for name, fn in fns.items()}       # compiles, checks
    check_approaches(problem, traces["builtin"], f"FedAvg {kind} p={p}")
    identical = all(np.array_equal(traces["builtin"], t) for t in traces.values())
    ratios = {"description": [], "custom": []}
    seconds = {name: [] for name in PATHS}
    for r in range(repeats):
        order = PATHS[r % 3:] + PATHS[:r % 3]
        times = {name: best_time(fns[name], repeat=3, min_time=min_time) for name in order}
        for name in PATHS:
            seconds[name].append(times[name])
        for name in ratios:
            ratios[name].append(times[name] / times["builtin"])
    return {"kind": kind, "N": N_CLIENTS, "p": p, "rounds": rounds, "tau": TAU,
            "builtin_s": statistics.median(seconds["builtin"]),
            "description_s": statistics.median(seconds["description"]),
            "custom_s": statistics.median(seconds["custom"]),
            "description_over_builtin": statistics.median(ratios["description"]),
            "description_over_builtin_max": max(ratios["description"]),
            "custom_over_builtin": statistics.median(ratios["custom"]),
            "custom_over_builtin_max": max(ratios["custom"]),
            "repeats": repeats, "identical": identical}


COLUMNS = ["kind", "N", "p", "rounds", "tau", "builtin_s", "description_s", "custom_s",
           "description_over_builtin", "description_over_builtin_max", "custom_over_builtin",
           "custom_over_builtin_max", "repeats", "identical"]
UNITS = {"N": "clients", "p": "participation probability", "rounds": "rounds per call",
         "tau": "local steps", "builtin_s": "s per call (median)",
         "description_s": "s per call (median)", "custom_s": "s per call (median)",
         "description_over_builtin": "ratio (median over repeats)",
         "description_over_builtin_max": "ratio", "custom_over_builtin":
         "ratio (median over repeats)", "custom_over_builtin_max": "ratio",
         "identical": "same bits on all three paths"}
TARGETS = [
    {"what": "the custom path with a numba step within 2x of the built-in FedAvg",
     "table": "results", "column": "custom_over_builtin", "at_most": 2.0},
    {"what": "the built-in expressed through the description costs under 10%",
     "table": "results", "column": "description_over_builtin", "at_most": 1.1},
]


def main(argv=None):
    parser = argparse.ArgumentParser(prog=prog(), description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=out_folder, default=str(DEFAULT_OUT), help=OUT_HELP)
    parser.add_argument("--profile", choices=("quick", "full"), default="quick")
    parser.add_argument("--repeats", type=positive_int, default=None,
                        help="timing repeats per cell (default: 3 quick, 7 full)")
    parser.add_argument("--min-time", type=float, default=None,
                        help="seconds per timed batch (default: 0.1 quick, 0.3 full)")
    parser.add_argument("--record", action="store_true",
                        help="append the run to benchmarks/results/custom_cost.json")
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.profile == "quick" else 7)
    min_time = args.min_time if args.min_time is not None else (
        0.1 if args.profile == "quick" else 0.3)
    if not min_time > 0:
        parser.error(f"--min-time must be positive, got {min_time}")
    numba.set_num_threads(1)
    load_before = os.getloadavg()[0]
    rows = [measure(kind, p, repeats, min_time) for kind in KINDS for p in FRACTIONS]
    for row in rows:
        print(f"{row['kind']:9s} p={row['p']:<4} builtin {row['builtin_s'] * 1e3:8.1f} ms, "
              f"description x{row['description_over_builtin']:.3f}, custom "
              f"x{row['custom_over_builtin']:.3f}, identical {row['identical']}")
    title = ("Generic FedAvg-family round against the built-in FedAvg (N = 10^4, tau = 5, "
             "one thread)")
    paths_written = write(args.out, NAME, title, rows, COLUMNS,
                          notes="Ratios: seconds per call over the built-in's, median over "
                                "repeats (the order of the paths rotates). 'description': "
                                "fedavg_family with local_gd(); 'custom': fedavg_family with a "
                                "user's @njit step.", units=UNITS, profile=args.profile)
    if args.record:
        paths_written.append(_results.append(
            NAME, _results.run_record({"results": rows}, profile=args.profile,
                                      caveat=busy_caveat(load_before)),
            title=title, command="python -m benchmarks custom_cost --record", units=UNITS,
            targets=TARGETS))
    return paths_written


def busy_caveat(load_before):
    """A caveat when the machine ran more processes than it has cores (the 1-minute load
    average before or after the run): other processes share the cores and the times and
    ratios are noisier than on an idle machine."""
    cores = os.cpu_count() or 1
    load = max(load_before, os.getloadavg()[0])
    if load <= cores:
        return None
    return (f"busy machine: load average up to {load:.1f} on {cores} cores during the run "
            "(other processes shared the cores; the paths were timed in turn, so the ratios "
            "hold better than the times)")

if __name__ == "__main__":
    main()
