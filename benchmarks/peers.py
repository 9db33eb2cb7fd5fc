"""flbounds against its strongest peers, side by side in one run, with the roofline.

``python -m benchmarks peers [--profile quick|full] [--out DIR] [--record]``
(``--record`` appends the run to ``benchmarks/results/peers.json`` and rewrites the README's
table; ``--record-only`` does both from an earlier run's ``<out>/peers.json``)

Algorithms: FedAvg, FOCUS and FedAvg with a uniform ISP sampler (server step 1,
``diagnostics=False``: the iterates only, as the peers compute them; the round's uniforms are
drawn before timing and replayed through ``fedavg_sampler_batched``, as every peer gets them
precomputed), each on a
heterogeneous quadratic (d = 16), ridge and L2-logistic regression
(n = 20 samples per client, d = 50), tau = 5 local steps, step 1/(2L) (FOCUS 1/(N L): its
server step multiplies a sum over all N clients, see ``_peers_run.step_of``), Bernoulli
participation p in {1, 0.1}, N = 1e2, 1e3, 1e4 (``full`` adds 1e5), 1 and 2 threads.

Implementations (``benchmarks._peer_numpy``, ``benchmarks._peer_jax``): flbounds' public
algorithm; JAX (vmap + jit + lax.scan; "not installed" without the ``bench`` extra); NumPy
with a round's participants batched through ``einsum`` and in cache-sized blocks; the
per-client Python loop. Before timing, flbounds' run must approach x*
(``benchmarks._common.check_approaches``), and every peer's iterate is asserted equal to
flbounds' within a derived rounding tolerance (``benchmarks._peers_run.tolerance``), at the
last round, or, for a run that settles before it, at the last round where it still moves
(``benchmarks._peers_run.check_round``).

Timing: a timed call runs a fixed number of rounds (about ``work`` client updates; the loop
fewer rounds); the calls per block are auto-calibrated so a block lasts ``min_block``
seconds; the implementations' blocks are interleaved over ``repeats`` repeats; rates are
rounds/s, ratios flbounds / best peer (the peer with the highest median) are taken per
repeat and reported as min and median. Each thread count runs in its own process (XLA's
thread count is fixed at start-up; BLAS, OpenMP and numba get the same count), the roofline
(``benchmarks._roofline``) in the parent, in the same run. A 2-thread configuration is timed
only if two free cores were measured right before it, and reported only if they are measured
again right after it; otherwise its cells read "(busy: 2 free cores not measured before and
after)". Peak
memory: tracemalloc peak of one call (flbounds and the NumPy peers; XLA's allocations are
invisible to it), and each process's max RSS.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks._common import DEFAULT_OUT, OUT_HELP, out_folder
from flbounds.cli._common import positive_int

KINDS = ("quadratic", "ridge", "logistic")

NAME = "peers"
PROFILES = {"quick": dict(sizes=(100, 1000, 10000), work=10_000, loop_work=1_000,
                          min_block=0.05, repeats=3),
            "full": dict(sizes=(100, 1000, 10000, 100000), work=50_000, loop_work=10_000,
                         min_block=0.2, repeats=5)}
README = Path(__file__).resolve().parent.parent / "README.md"
RESULTS = Path(__file__).resolve().parent / "results"


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m benchmarks peers",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=out_folder, default=str(DEFAULT_OUT), help=OUT_HELP)
    parser.add_argument("--profile", choices=tuple(PROFILES), default="quick",
                        help="quick: N = 1e2 .. 1e4, 3 repeats; full: adds N = 1e5, "
                             "5 repeats, longer blocks")
    parser.add_argument("--record", action="store_true",
                        help="also append the run to benchmarks/results/peers.json (the "
                             "performance page's data) and rewrite the README table (a complete "
                             "run only: N = 1e4, every kind, 1 and 2 threads)")
    parser.add_argument("--record-only", action="store_true",
                        help="no timing: record <out>/peers.json of an earlier run as --record "
                             "does")
    parser.add_argument("--sizes", type=positive_int, nargs="+",
                        help="client counts (default: the profile's)")
    parser.add_argument("--min-block", type=_positive_float,
                        help="seconds per timed block (default: the profile's)")
    parser.add_argument("--repeats", type=positive_int,
                        help="interleaved repeats per implementation (default: the profile's)")
    parser.add_argument("--threads", type=int, nargs="+", choices=(1, 2), default=[1, 2],
                        help="thread counts to run (default: 1 2)")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS),
                        help="problem kinds (default: all)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def readme_gaps(sizes, kinds, threads) -> list[str]:
    """What a run lacks for the README table (its cells are at N = 10^4, every kind, 1 and 2
    threads); empty when it is complete."""
    from benchmarks._peers_report import TARGET_N
    gaps = [] if TARGET_N in sizes else [f"N = {TARGET_N}"]
    gaps += [f"kind {k}" for k in KINDS if k not in kinds]
    gaps += [f"{t} thread{'s' if t > 1 else ''}" for t in (1, 2) if t not in threads]
    return gaps


def settings_of(args) -> dict:
    chosen = dict(PROFILES[args.profile])
    chosen["kinds"] = tuple(args.kinds)
    for key in ("sizes", "min_block", "repeats"):
        if getattr(args, key) is not None:
            chosen[key] = tuple(args.sizes) if key == "sizes" else getattr(args, key)
    return chosen


def child_env(threads: int) -> dict:
    """Environment of a worker process: BLAS / OpenMP / XLA limited to ``threads``."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    env["OMP_WAIT_POLICY"] = "PASSIVE"
    env["XLA_FLAGS"] = (f"--xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'} "
                        f"intra_op_parallelism_threads={threads}")
    return env


def run_child(args_out: Path, threads: int, settings: dict) -> dict:
    """Runs ``_peers_run.run_all`` at ``threads`` threads in this process; writes JSON."""
    from benchmarks import _peer_jax
    from benchmarks._peers_run import Settings, run_all

    def log(rows, done, total):
        rates = ", ".join(f"{row['impl']} {row['rate_median']:.4g}" if row["status"] == "ok"
                          else f"{row['impl']} {row['status']}" for row in rows)
        first = rows[0]
        print(f"[{threads} thread{'s' if threads > 1 else ''}, {done}/{total}] {first['kind']} "
              f"{first['algorithm']} N={first['N']} p={first['p']:g}: rounds/s {rates}",
              file=sys.stderr, flush=True)

    rows, profiles = run_all(Settings(**settings), threads, log)
    result = {"threads": threads, "rows": rows, "profiles": profiles,
              "jax": _peer_jax.available(),
              "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10}
    args_out.write_text(json.dumps(result, default=float), encoding="utf-8")
    return result


def _one_core() -> None:
    """Pin the calling (child) process to one core: a 1-thread run then runs on one core,
    whatever threads a library starts on the side (XLA's CPU runtime, told to use one thread,
    still ran part of the JAX peer's work on the second core: its wall time was 0.6-0.9x its
    CPU time)."""
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def spawn(threads: int, settings: dict, profile: str, tmp: Path) -> dict:
    out = tmp / f"child-{threads}.json"
    cmd = [sys.executable, "-m", "benchmarks.peers", "--child", str(out), "--profile", profile,
           "--threads", str(threads), "--min-block", str(settings["min_block"]),
           "--repeats", str(settings["repeats"]), "--sizes", *map(str, settings["sizes"]),
           "--kinds", *settings["kinds"]]
    pin = threads == 1 and hasattr(os, "sched_setaffinity")
    subprocess.run(cmd, env=child_env(threads), check=True, preexec_fn=_one_core if pin else None)
    return json.loads(out.read_text(encoding="utf-8"))


def _usage(message: str) -> None:
    print(f"python -m benchmarks peers: {message}", file=sys.stderr)
    sys.exit(2)


def main(argv=None) -> list[Path]:
    args = parse_args(argv)
    settings = settings_of(args)
    if args.child is not None:
        run_child(args.child, args.threads[0], settings)
        return [args.child]
    from benchmarks import _peers_report as report
    if args.record and (gaps := readme_gaps(settings["sizes"], settings["kinds"], args.threads)):
        _usage(f"--record: the stored results and the README table need a complete run; this "
               f"one lacks {', '.join(gaps)}")
    if args.record_only:
        source = args.out / f"{NAME}.json"
        if not source.is_file():
            _usage(f"--record-only: no {source}; run the benchmark first")
        old = json.loads(source.read_text(encoding="utf-8"))
        children, machine, profile = old["children"], old["machine"], old["profile"]
        rows = [r for child in children for r in child["rows"]]
        gaps = readme_gaps({r["N"] for r in rows}, {r["kind"] for r in rows},
                           {child["threads"] for child in children})
        if gaps:
            _usage(f"--record-only: {source} is not a complete run; it lacks {', '.join(gaps)}")
    else:
        from benchmarks._roofline import measure_machine
        machine, profile = measure_machine(), args.profile
        with tempfile.TemporaryDirectory() as tmp:
            children = [spawn(t, settings, profile, Path(tmp))
                        for t in sorted(set(args.threads))]
        machine["after"] = measure_machine(light=True)
    markdown, data = report.render(children, machine, profile)
    paths = report.write(args.out, NAME, markdown, data)
    if args.record or args.record_only:
        from benchmarks import _peers_record
        stored = _peers_record.append(data, RESULTS)
        report.update_readme(README, report.readme_section(data))
        paths += [stored, README]
    for path in paths:
        print(path)
    return paths


if __name__ == "__main__":
    main()
