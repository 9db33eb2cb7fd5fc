"""The kernels' LLVM optimisation level: compile time and run time as flbounds compiles them
(``KERNEL_OPT`` = 1, the kernels of ``KEEP_NUMBA_LEVEL`` at numba's level) against every
kernel at numba's default level 3, side by side in one run.

Each setting runs in its own process (flbounds' own: no ``NUMBA_OPT``; level 3:
``NUMBA_OPT=3``), with an empty numba cache and one thread, the two alternating ``--repeats``
times. A process first calls every workload once (``compile_cpu_s``: its CPU seconds, nearly
all compiling) and then times each one (``best_time``). Workloads: the benchmark peers'
FedAvg, FOCUS and FedAvg-with-sampler on quadratic, ridge and logistic clients (N = 1000, p in
{1, 0.1}), and the Monte Carlo cases of ``benchmarks.mc_batched``: replicate-batched FedAvg on
the three kinds, SAFARI, and the online baselines Vrb and Mabs. Reported per workload: seconds
per call in each setting and the ratio flbounds' / level 3 (min and median over the repeats;
above 1: flbounds' setting is slower), and whether both computed the same bits
(``identical``; fastmath is off, so the optimiser may not reorder floating-point arithmetic).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._common import DEFAULT_OUT, OUT_HELP, best_time, out_folder, prog, write
from flbounds.cli._common import positive_int
from flbounds.kernels import KERNEL_OPT

NAME = "opt_level"
LEVELS = (KERNEL_OPT, 3)
N_CLIENTS, WORK = 1000, 10_000


def workloads() -> dict:
    """{name: callable returning an array}, inputs built once (same seeds in every process)."""
    import numpy as np

    from benchmarks._peers_run import (
        ALGORITHMS,
        FRACTIONS,
        KINDS,
        flbounds_run,
        make_case,
        make_problem,
        rounds_for,
    )
    from benchmarks.mc_batched import (
        FEDAVG_CASES,
        KS,
        ONLINE_CASES,
        SAFARI_CASES,
        fedavg_inputs,
        safari_inputs,
    )
    from flbounds.kernels.replicates import fedavg_replicates, safari_replicates
    from flbounds.sampling.online import Assumption51Feedback
    from flbounds.sampling.online_batched import baseline_costs

    out = {}
    for kind in KINDS:
        problem = make_problem(kind, N_CLIENTS)
        for algorithm in ALGORITHMS:
            for p in FRACTIONS:
                rounds = rounds_for(N_CLIENTS, p, WORK)
                case = make_case(kind, algorithm, problem, p, rounds)
                out[f"{algorithm} {kind} p={p}"] = (lambda c=case, r=rounds: flbounds_run(c, r))
    for case in FEDAVG_CASES["quick"][1:4]:
        kind, dim, n_rounds, reps = case[0], case[3], case[5], case[6]
        data, plans, settings = fedavg_inputs(case, 0)
        xs = np.empty((reps, n_rounds + 1, dim))
        out[f"MC FedAvg {kind} B={reps}"] = (
            lambda d=data, pl=plans, s=settings, x=xs:
            (fedavg_replicates(d, pl, s, np.zeros(x.shape[-1]), x), x)[1])
    n_rounds, reps = SAFARI_CASES["quick"][0]
    data, pop, plan, steps = safari_inputs((n_rounds, reps), 20)
    safari_out = (np.empty((reps, n_rounds + 1, 2)), np.empty((reps, n_rounds)))
    out[f"MC SAFARI B={reps}"] = lambda: (
        safari_replicates(data, pop, plan, steps, np.zeros((reps, 2)), safari_out, 1),
        safari_out[0])[1]
    n_clients, n_rounds, n_seeds = ONLINE_CASES["quick"][0]
    feedback = Assumption51Feedback.generate(np.random.default_rng(30), n_clients)
    for kind in ("vrb", "mabs"):
        out[f"online {kind} N={n_clients}"] = (
            lambda kind=kind: baseline_costs(kind, feedback, KS, n_rounds,
                                             np.random.default_rng(31).spawn(n_seeds),
                                             G=feedback.G))
    return out


def child(out: Path, min_time: float) -> None:
    import numba
    import numpy as np

    numba.set_num_threads(1)
    loads = workloads()
    start = time.process_time()
    digests = {name: hashlib.sha256(np.ascontiguousarray(fn()).tobytes()).hexdigest()
               for name, fn in loads.items()}
    compile_cpu = time.process_time() - start
    seconds = {name: best_time(fn, repeat=3, min_time=min_time) for name, fn in loads.items()}
    out.write_text(json.dumps({"compile_cpu_s": compile_cpu, "seconds": seconds,
                               "digests": digests}), encoding="utf-8")


def spawn(level: int, tmp: Path, index: int, min_time: float) -> dict:
    out = tmp / f"level{level}-{index}.json"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp / f"cache{level}-{index}"),
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("NUMBA_OPT", None)
    if level != KERNEL_OPT:       # flbounds' own setting as a user gets it, else NUMBA_OPT
        env["NUMBA_OPT"] = str(level)
    subprocess.run([sys.executable, "-m", "benchmarks.opt_level", "--child", str(out),
                    "--min-time", str(min_time)], env=env, check=True)
    return json.loads(out.read_text(encoding="utf-8"))


def main(argv=None):
    parser = argparse.ArgumentParser(prog=prog(), description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=out_folder, default=str(DEFAULT_OUT), help=OUT_HELP)
    parser.add_argument("--profile", choices=("quick", "full"), default="quick")
    parser.add_argument("--repeats", type=positive_int, default=None)
    parser.add_argument("--min-time", type=float, default=0.3)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        return child(args.child, args.min_time)
    repeats = args.repeats if args.repeats is not None else (2 if args.profile == "quick"
                                                             else 4)
    if repeats < 1:
        parser.error(f"--repeats must be at least 1, got {repeats}")
    if args.min_time <= 0:
        parser.error(f"--min-time must be positive, got {args.min_time}")
    runs = {level: [] for level in LEVELS}
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(repeats):
            for level in (LEVELS if index % 2 == 0 else LEVELS[::-1]):
                runs[level].append(spawn(level, Path(tmp), index, args.min_time))
                print(f"level {level}, repeat {index + 1}/{repeats}: compile "
                      f"{runs[level][-1]['compile_cpu_s']:.1f} s CPU", file=sys.stderr)
    low, high = (runs[level] for level in LEVELS)
    rows = [_row("compile (CPU s, first calls)", [r["compile_cpu_s"] for r in low],
                 [r["compile_cpu_s"] for r in high], None)]
    for name in low[0]["seconds"]:
        same = len({r["digests"][name] for r in low + high}) == 1
        rows.append(_row(name, [r["seconds"][name] for r in low],
                         [r["seconds"][name] for r in high], same))
    return write(args.out, NAME, "Kernel optimisation level: flbounds' (1) against numba's 3",
                 rows,
                 ["workload", "level1_s", "level3_s", "ratio_min", "ratio_median",
                  "identical"],
                 notes=f"{repeats} alternating repeats per setting, each in a fresh process "
                       "with an empty numba cache; level1: flbounds' setting (KERNEL_OPT = 1, "
                       "KEEP_NUMBA_LEVEL at numba's level); level3: NUMBA_OPT=3; seconds are "
                       "the best over the repeats; ratio: level1 / level3 per repeat pair "
                       "(above 1: flbounds' setting slower); identical: every run of both "
                       "settings gave the same bits.")


def _row(name, low, high, identical) -> dict:
    ratios = [a / b for a, b in zip(low, high, strict=True)]
    return {"workload": name, "level1_s": min(low), "level3_s": min(high),
            "ratio_min": min(ratios), "ratio_median": statistics.median(ratios),
            "identical": "" if identical is None else identical}


if __name__ == "__main__":
    main()
