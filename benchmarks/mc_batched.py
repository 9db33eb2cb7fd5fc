"""Replicate-batched Monte Carlo against the per-replicate loop, side by side in one run.

Cases (the shapes of the Monte Carlo claims, plus a larger ridge):

- FedAvg over many Bernoulli plans: :func:`flbounds.kernels.replicates.fedavg_replicates`
  (each client's data read once per round for all its replicates, block gradients) against a
  compiled loop calling :func:`flbounds.kernels.rounds.fedavg_rounds` once per replicate (the
  previous replicate kernel, serial). Quadratic, ridge and logistic clients.
- SAFARI on the reference instance (10 clients, d = 2): the batched kernel against
  :func:`flbounds.kernels.mixed_rounds.safari_replicates` (one replicate after the other);
  and its client blocks alone on groups of W replicates ("SAFARI blocks of W", the quick
  case at every profile), where they start to pay.
- The online baselines Vrb and Mabs (``kvib.app_f.*``):
  :func:`flbounds.sampling.online_batched.baseline_costs` against ``run_online`` per (seed,
  budget).

Both sides get the same inputs (plans drawn before timing), run on one numba thread, and are
timed alternately ``REPEATS`` times (best of ``best_time`` batches each); the ratio is loop /
batched, reported as min and median over the repeats. ``identical`` checks every replicate
bit for bit. ``peak_mib`` is the process's peak resident memory during one batched call above
the resident size before it (Linux ``VmHWM`` after resetting it), i.e. the working set the
batched path adds (0: no page beyond what was resident before the call, so its blocks and
scratch, O(B d + n B) by design, stay within a few KiB); ``inputs_mib`` is the size of the
plans / uniforms it is given, the dominant memory of a Monte Carlo run.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see benchmarks.scale_kernels

import numba
import numpy as np
from numba import njit

from benchmarks._common import best_time, parse_args, peak_rss_mib, write
from flbounds.algorithms._common import round_settings
from flbounds.algorithms.batched_safari import safari_plans
from flbounds.algorithms.safari import kernel_plan
from flbounds.kernels.gradients import population
from flbounds.kernels.mixed_rounds import safari_replicates as safari_per_replicate
from flbounds.kernels.replicates import _safari_group, fedavg_replicates, safari_replicates
from flbounds.kernels.rounds import fedavg_rounds
from flbounds.participation import Bernoulli
from flbounds.problems import random_logistic, random_quadratics, random_ridge
from flbounds.sampling import Mabs, Vrb
from flbounds.sampling.online import Assumption51Feedback, run_online
from flbounds.sampling.online_batched import baseline_costs

NAME = "mc_batched"
REPEATS = 5
# FedAvg: (kind, n_clients, n_samples, dim, local_steps, n_rounds, n_reps)
FEDAVG_CASES = {"quick": [("quadratic", 8, 0, 3, 1, 1000, 300),
                          ("quadratic", 8, 0, 3, 5, 300, 300),
                          ("ridge", 8, 20, 3, 5, 300, 300),
                          ("logistic", 8, 20, 5, 5, 300, 100),
                          ("ridge", 100, 20, 10, 5, 100, 64)],
                "full": [("quadratic", 8, 0, 3, 1, 3000, 2000),
                         ("ridge", 8, 20, 3, 5, 1000, 2000),
                         ("logistic", 8, 20, 5, 5, 1000, 500),
                         ("ridge", 1000, 20, 10, 5, 100, 64)]}
# SAFARI: (n_rounds, n_reps); online baselines: (n_clients, n_rounds, n_seeds)
SAFARI_CASES = {"quick": [(500, 64)], "full": [(2000, 256)]}
SAFARI_WIDTHS = (8, 32, 48, 64)
ONLINE_CASES = {"quick": [(100, 2000, 3)], "full": [(100, 8000, 8)]}
KS = (2, 4, 8, 16)


@njit(cache=False)
def _fedavg_loop(data, plans, settings, x0, xs):
    for rep in range(plans.shape[0]):
        fedavg_rounds(data, plans[rep], settings, x0, xs[rep])


def side_by_side(loop, batched):
    """Ratios loop / batched over alternating repeats: (min, median, loop s, batched s)."""
    ratios, lt, bt = [], [], []
    for _ in range(REPEATS):
        lt.append(best_time(loop, repeat=1, min_time=0.3))
        bt.append(best_time(batched, repeat=1, min_time=0.3))
        ratios.append(lt[-1] / bt[-1])
    return float(min(ratios)), float(np.median(ratios)), min(lt), min(bt)


def _problem(kind, n_clients, n_samples, dim, rng):
    if kind == "quadratic":
        return random_quadratics(rng, n_clients, dim, mu=1.0, L=4.0)
    if kind == "ridge":
        return random_ridge(rng, n_clients, n_samples, dim, lam=0.1)
    return random_logistic(rng, n_clients, n_samples, dim, lam=0.05)


def fedavg_inputs(case, seed):
    """(data, Bernoulli plans (B, T, N), round settings) of a FedAvg case."""
    kind, n_clients, n_samples, dim, tau, n_rounds, n_reps = case
    rng = np.random.default_rng(seed)
    problem = _problem(kind, n_clients, n_samples, dim, rng)
    proc = Bernoulli(np.linspace(0.1, 0.95, n_clients))
    plans = np.stack([proc.plan(c, n_rounds) for c in rng.spawn(n_reps)])
    data = problem.kernel_data
    return data, plans, round_settings(0.02, tau, parallel=False, data=data)


def fedavg_row(case, seed):
    kind, n_clients, n_samples, dim, tau, n_rounds, n_reps = case
    data, plans, settings = fedavg_inputs(case, seed)
    x0 = np.zeros(dim)
    xa, xb = np.empty((n_reps, n_rounds + 1, dim)), np.empty((n_reps, n_rounds + 1, dim))
    loop = lambda: _fedavg_loop(data, plans, settings, x0, xa)  # noqa: E731
    batched = lambda: fedavg_replicates(data, plans, settings, x0, xb)  # noqa: E731
    loop(), batched()
    rmin, rmed, tl, tb = side_by_side(loop, batched)
    return dict(case=f"FedAvg {kind} N={n_clients} d={dim} tau={tau} T={n_rounds}",
                reps=n_reps, loop_s=tl, batched_s=tb, ratio_min=rmin, ratio_median=rmed,
                identical=bool(np.array_equal(xa, xb)), peak_mib=peak_rss_mib(batched),
                inputs_mib=plans.nbytes / 2**20)


def safari_inputs(case, seed):
    """(data, population, kernel plan, steps) of a SAFARI case on the reference instance."""
    n_rounds, n_reps = case
    problem = random_quadratics(np.random.default_rng(seed), 10, 2, mu=0.5, L=2.0)
    plan = kernel_plan(safari_plans(np.random.default_rng(seed + 1).spawn(n_reps),
                                    n_rounds=n_rounds, q=0.5, eligible=np.arange(4, 10),
                                    n_sampled=5, local_steps=5, dim=2, client_noise_std=0.1,
                                    server_noise_std=0.1))
    return problem.kernel_data, population(problem.kernel_data), plan, (0.02, 0.05)


def _safari_out(n_reps, n_rounds):
    """A SAFARI kernel's outputs: server iterates and local-gradient norms per replicate."""
    return np.empty((n_reps, n_rounds + 1, 2)), np.empty((n_reps, n_rounds))


def _same_safari(a, b) -> bool:
    return bool(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1], equal_nan=True))


def safari_row(case, seed):
    n_rounds, n_reps = case
    data, pop, plan, steps = safari_inputs(case, seed)
    x0 = np.zeros(2)
    out_a, out_b = _safari_out(n_reps, n_rounds), _safari_out(n_reps, n_rounds)
    loop = lambda: safari_per_replicate(data, pop, plan, steps, x0, out_a)  # noqa: E731
    starts = np.zeros((n_reps, 2))
    batched = lambda: safari_replicates(data, pop, plan, steps, starts, out_b, 1)  # noqa: E731
    loop(), batched()
    rmin, rmed, tl, tb = side_by_side(loop, batched)
    return dict(case=f"SAFARI quadratic N=10 d=2 K=5 T={n_rounds}", reps=n_reps, loop_s=tl,
                batched_s=tb, ratio_min=rmin, ratio_median=rmed,
                identical=_same_safari(out_a, out_b),
                peak_mib=peak_rss_mib(batched),
                inputs_mib=sum(f.nbytes for f in plan) / 2**20)


def safari_block_rows(case, seed):
    """SAFARI's client blocks alone (:func:`~flbounds.kernels.replicates._safari_group`) on
    groups of W replicates, against the one-replicate loop: where the blocks start to pay
    (:data:`~flbounds.kernels.replicates.SAFARI_MIN_BLOCK`)."""
    n_rounds, n_reps = case
    data, pop, plan, steps = safari_inputs(case, seed)
    x0 = np.zeros(2)
    starts = np.zeros((n_reps, 2))
    out_a = _safari_out(n_reps, n_rounds)
    loop = lambda: safari_per_replicate(data, pop, plan, steps, x0, out_a)  # noqa: E731
    loop()
    rows = []
    for width in SAFARI_WIDTHS:
        out_b = _safari_out(n_reps, n_rounds)

        def blocks(width=width, out_b=out_b):
            for lo in range(0, n_reps, width):
                _safari_group(data, pop, plan, steps, starts, out_b, lo, min(n_reps, lo + width))
        blocks()
        rmin, rmed, tl, tb = side_by_side(loop, blocks)
        rows.append(dict(case=f"SAFARI blocks of {width} N=10 d=2 K=5 T={n_rounds}",
                         reps=n_reps, loop_s=tl, batched_s=tb, ratio_min=rmin,
                         ratio_median=rmed, identical=_same_safari(out_a, out_b),
                         peak_mib=None,
                         inputs_mib=sum(f.nbytes for f in plan) / 2**20))
    return rows


def online_rows(case, seed):
    n_clients, n_rounds, n_seeds = case
    fb = Assumption51Feedback.generate(np.random.default_rng(seed), n_clients)
    rows = []
    for kind, cls in (("vrb", Vrb), ("mabs", Mabs)):
        def loop(cls=cls):
            out = []
            for child in np.random.default_rng(seed + 1).spawn(n_seeds):
                out.append([run_online(cls(n_clients, k, n_rounds, G=fb.G), fb, n_rounds,
                                       child).costs for k in KS])
            return np.array(out)

        def batched(kind=kind):
            return baseline_costs(kind, fb, KS, n_rounds,
                                  np.random.default_rng(seed + 1).spawn(n_seeds), G=fb.G)
        same = bool(np.array_equal(loop(), batched()))
        rmin, rmed, tl, tb = side_by_side(loop, batched)
        rows.append(dict(case=f"online {kind} N={n_clients} T={n_rounds} K={KS}",
                         reps=n_seeds * len(KS), loop_s=tl, batched_s=tb, ratio_min=rmin,
                         ratio_median=rmed, identical=same, peak_mib=peak_rss_mib(batched),
                         inputs_mib=n_seeds * n_rounds * sum(KS) * 8 / 2**20))
    return rows


def main(argv=None) -> int:
    args = parse_args(argv, __doc__)
    numba.set_num_threads(1)
    rows = []

    def add(new_rows):
        for row in new_rows:
            rows.append(row)
            print(f"{row['case']}: {row['ratio_min']:.2f}x", file=sys.stderr, flush=True)

    for i, case in enumerate(FEDAVG_CASES[args.profile]):
        add([fedavg_row(case, 10 + i)])
    add(safari_row(c, 20) for c in SAFARI_CASES[args.profile])
    add(safari_block_rows(SAFARI_CASES["quick"][0], 20))
    for c in ONLINE_CASES[args.profile]:
        add(online_rows(c, 30))
    cols = ["case", "reps", "loop_s", "batched_s", "ratio_min", "ratio_median", "identical",
            "peak_mib", "inputs_mib"]
    write(args.out, NAME, "Replicate-batched Monte Carlo vs the per-replicate loop (1 thread)",
          rows, cols, notes=__doc__.split("\n\n", 1)[1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
