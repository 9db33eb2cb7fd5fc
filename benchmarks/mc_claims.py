"""Claim compute of the Monte Carlo claims: replicate-batched paths against per-replicate runs.

The Monte Carlo claims run their replicates through batched entry points (FedAvg over many
plans, the online baselines over seeds and budgets, SAFARI over seeds, the digits
runs). Each batched entry point has a per-replicate counterpart that computes the same
numbers one replicate at a time with the library's single-run functions, as the claims did
before batching:

- ``fedavg_batched`` -> ``fedavg`` once per plan;
- ``baseline_costs`` -> ``run_online`` once per (seed, budget);
- ``run_seeds_batched`` -> ``safari_plan`` and ``safari`` once per generator;
- ``lockstep_runs`` (digits: the FedAvg and SAFARI runs of every seed and setting of a
  claim) -> ``safari_digits`` once per run.

Every claim of the selected groups is run once with the batched entry points; those that call
one are measured (a claim that draws SAFARI plans but runs its seeds one by one gets a row
"(seed by seed)" with its time as ``loop_s`` and its ``draw_share``, from one run after a
warm-up): the claim's function (its whole compute, from drawing the instance to the evidence,
without the ledger's bookkeeping) with the batched paths and with the per-replicate ones,
alternately 3 times (``REPEATS``) on one numba thread and one BLAS thread. ``identical``
compares the two runs' evidence (measured, theoretical and details) exactly; the ratio is
per-replicate / batched time, min and median over the repeats; ``batched_share`` is the
fraction of the batched run spent inside the batched entry points (for ``run_seeds_batched``
including the plans it draws), ``draw_share`` the fraction spent drawing the SAFARI and digits
plans (``flbounds.algorithms.safari._draw_plan``, ``digits_plan``), which both paths do alike.
``peak_mib``: the resident memory a batched run (or the seed-by-seed run) added at its peak
(Linux; ``-`` elsewhere), the total row's the largest. ``verdict`` is the claim's own verdict
(a claim expected to be violated says so; it is not a failure of the benchmark). The last row
divides the batched claims' summed best times. Written: ``mc_claims.md`` and ``mc_claims.json``
in ``--out``. """

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see benchmarks.scale_kernels

import argparse
import contextlib
import gc
import inspect
import json
import sys
import time

import numba
import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks._common import (
    DEFAULT_OUT,
    OUT_HELP,
    PROFILE_HELP,
    out_folder,
    peak_rss_mib,
    prog,
    write,
)
from flbounds.algorithms import fedavg, safari, safari_plan
from flbounds.algorithms.batched import BatchedFedAvgTrace, fedavg_batched
from flbounds.algorithms.batched_safari import BatchedSafariTrace
from flbounds.algorithms.safari import SafariPlan, _draw_plan
from flbounds.ledger.api import registry
from flbounds.ledger.api.result import to_jsonable
from flbounds.sampling.online import run_online
from flbounds.sampling.online_batched import KINDS, baseline_costs
from verify.safari import digits_experiment, instances

NAME = "mc_claims"
REPEATS = 3
#: the claim groups whose Monte Carlo runs through a batched entry point
GROUPS = ("focus.fedavg.mc_*", "kvib.app_f.*", "safari.*")


def fedavg_per_plan(problem, plans, *, step, local_steps, x0=None):
    """``fedavg_batched`` one plan at a time."""
    return BatchedFedAvgTrace(np.stack([fedavg(problem, plan, step=step,
                                               local_steps=local_steps, x0=x0).x
                                        for plan in plans]))


def costs_per_run(kind, feedback, budgets, n_rounds, rngs, *, G):
    """``baseline_costs`` one (seed, budget) run at a time."""
    n = feedback.n_clients
    return np.array([[run_online(KINDS[kind](n, k, n_rounds, G=G), feedback, n_rounds,
                                 rng).costs for k in budgets] for rng in rngs])


def seeds_one_by_one(rngs, problem, *, step_server, step_client, x0, **plan_kwargs):
    """``run_seeds_batched`` one generator at a time (chunks of one replicate)."""
    for rng in rngs:
        plan = safari_plan(rng, **plan_kwargs)
        trace = safari(problem, plan, step_client=step_client, step_server=step_server,
                       x0=np.asarray(x0, dtype=float))
        yield SafariPlan(*(f[None] for f in plan)), BatchedSafariTrace(*(f[None] for f in trace))


def digits_one_by_one(reps, *, step_client=0.1, step_server=0.1, batch=16, tail=1,
                      server_steps=None):
    """``lockstep_runs`` one replicate at a time (``safari_digits``)."""
    runs = [digits_experiment.safari_digits(
        rep.fed, rep.plan._replace(client_round=rep.client_round), step_client=step_client,
        step_server=step_server, batch=batch, tail=tail, server_steps=server_steps)
        for rep in reps]
    return np.stack(runs, axis=1)


#: batched entry point -> its per-replicate counterpart
SUBSTITUTES = {
    fedavg_batched: fedavg_per_plan,
    baseline_costs: costs_per_run,
    instances.run_seeds_batched: seeds_one_by_one,
    digits_experiment.lockstep_runs: digits_one_by_one,
}


#: the functions drawing the random inputs that both paths share (timed, not replaced)
DRAWS = (_draw_plan, digits_experiment.digits_plan)
#: where the claims and the plan draws bind those functions
PACKAGES = ("verify.", "paper_checks.", "flbounds.algorithms.safari",
            "flbounds.algorithms.batched_safari")


def _bindings(functions):
    """Every (module, attribute, function) binding of one of ``functions`` in the claim
    packages and the SAFARI plan modules."""
    out = []
    for name, module in list(sys.modules.items()):
        if not name.startswith(PACKAGES) or module is None:
            continue
        for attr, value in vars(module).items():
            if any(value is f for f in functions):
                out.append((module, attr, value))
    return out


@contextlib.contextmanager
def patched(bindings, replace):
    """Within the block, every binding calls ``replace(original)`` instead."""
    for module, attr, original in bindings:
        setattr(module, attr, replace(original))
    try:
        yield
    finally:
        for module, attr, original in bindings:
            setattr(module, attr, original)


def _timed(original, clock):
    """``original`` adding its seconds to ``clock[0]`` and its calls to ``clock[1]`` (for a
    generator such as ``run_seeds_batched``, the seconds of producing its items)."""
    def call(*args, **kwargs):
        clock[1] += 1
        start = time.perf_counter()
        try:
            result = original(*args, **kwargs)
        finally:
            clock[0] += time.perf_counter() - start
        return _timed_items(result, clock) if inspect.isgenerator(result) else result

    return call


def _timed_items(generator, clock):
    while True:
        start = time.perf_counter()
        try:
            item = next(generator)
        except StopIteration:
            return
        finally:
            clock[0] += time.perf_counter() - start
        yield item


@contextlib.contextmanager
def _no_gc():
    """A timed call without Python's cyclic garbage collector, collected before (as
    ``timeit`` does): a collection landing in one repeat of one path made it half as fast
    again (``focus.fedavg.*``: a batched repeat of 0.25 s against 0.15 s)."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _timed_call(times, claim, params, seed):
    """:func:`_evidence` without the garbage collector, its seconds appended to ``times``."""
    with _no_gc():
        start = time.perf_counter()
        try:
            return _evidence(claim, params, seed)
        finally:
            times.append(time.perf_counter() - start)


def _evidence(claim, params, seed):
    ev = claim.func(rng=claim.rng(seed), **params)
    return json.dumps(to_jsonable(dict(measured=ev.measured, theoretical=ev.theoretical,
                                       details=ev.details, verdict=ev.verdict())),
                      sort_keys=True)


def claim_row(claim, profile, seed, bindings, draws):
    """The claim's compute with the batched and the per-replicate entry points; for a claim
    that calls no batched entry point but draws plans (it runs its seeds one by one), its
    time and the share spent drawing (``loop_s``, ``draw_share``); None for any other."""
    params = claim.params(profile)
    clock, drawing = [0.0, 0], [0.0, 0]
    with patched(bindings, lambda f: _timed(f, clock)), \
            patched(draws, lambda f: _timed(f, drawing)):
        batched_ev = _evidence(claim, params, seed)
    if clock[1] == 0:
        return None if drawing[1] == 0 else _seed_by_seed_row(claim, params, seed, draws)
    with patched(bindings, lambda f: SUBSTITUTES[f]):
        _evidence(claim, params, seed)           # warm-up of the per-replicate path
    loop_ev = None
    times = {"batched": [], "loop": []}
    share, draw_share = [], []
    for _ in range(REPEATS):
        clock[:], drawing[:] = [0.0, 0], [0.0, 0]
        with patched(bindings, lambda f: _timed(f, clock)), \
                patched(draws, lambda f: _timed(f, drawing)):
            peak = peak_rss_mib(lambda: _timed_call(times["batched"], claim, params, seed))
        share.append(clock[0] / times["batched"][-1])
        draw_share.append(drawing[0] / times["batched"][-1])
        with patched(bindings, lambda f: SUBSTITUTES[f]):
            loop_ev = _timed_call(times["loop"], claim, params, seed)
    ratios = np.array(times["loop"]) / np.array(times["batched"])
    return dict(claim=claim.id, loop_s=min(times["loop"]), batched_s=min(times["batched"]),
                ratio_min=float(ratios.min()), ratio_median=float(np.median(ratios)),
                batched_share=float(np.median(share)),
                draw_share=float(np.median(draw_share)), verdict=json.loads(batched_ev)["verdict"],
                identical=loop_ev == batched_ev, peak_mib=peak)


def _seed_by_seed_row(claim, params, seed, draws):
    """One more run (the first warmed it up), timed with its plan draws: nothing to compare,
    so no repeats (at full size such a claim runs for up to half a minute)."""
    drawing, ev, times = [0.0, 0], [], []
    with patched(draws, lambda f: _timed(f, drawing)):
        peak = peak_rss_mib(lambda: ev.append(_timed_call(times, claim, params, seed)))
    elapsed = times[0]
    return dict(claim=f"{claim.id} (seed by seed)", loop_s=elapsed, batched_s=None,
                ratio_min=None, ratio_median=None, batched_share=None,
                draw_share=drawing[0] / elapsed, verdict=json.loads(ev[0])["verdict"],
                identical=None, peak_mib=peak)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog=prog(), description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=out_folder, default=str(DEFAULT_OUT), help=OUT_HELP)
    parser.add_argument("--profile", choices=("quick", "full"), default="quick",
                        help=PROFILE_HELP)
    parser.add_argument("--claims", nargs="+", default=list(GROUPS), metavar="PATTERN",
                        help="claim ids, dotted prefixes or globs (default: "
                             f"{' '.join(GROUPS)}); those calling no batched entry point "
                             "are skipped")
    args = parser.parse_args(argv)
    try:
        args.selected = registry.select(args.claims)
    except ValueError as exc:
        parser.error(f"--claims: {exc}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    numba.set_num_threads(1)
    bindings, draws = _bindings(SUBSTITUTES), _bindings(DRAWS)
    rows = []
    with threadpool_limits(limits=1, user_api="blas"):
        for claim in args.selected:
            row = claim_row(claim, args.profile, 0, bindings, draws)
            if row is not None:
                rows.append(row)
                done = (f"batched {row['ratio_min']:.2f}x the per-replicate speed (lowest "
                        f"of {REPEATS} repeats)" if row["ratio_min"] is not None
                        else f"seed by seed, drawing {row['draw_share']:.0%} of the time")
                print(f"{row['claim']}: {done}", file=sys.stderr, flush=True)
    if not rows:
        print("python -m benchmarks mc_claims: --claims: none of the selected claims runs its "
              "Monte Carlo through a batched entry point or draws SAFARI plans; nothing written",
              file=sys.stderr)
        return 2
    batched = [r for r in rows if r["batched_s"] is not None]
    if batched:
        total_loop = sum(r["loop_s"] for r in batched)
        total_batched = sum(r["batched_s"] for r in batched)
        rows.append(dict(claim="the batched claims together (sum of per-replicate best times / "
                               "sum of batched best times)", loop_s=total_loop,
                         batched_s=total_batched, ratio_min=total_loop / total_batched,
                         ratio_median=None, batched_share=None, draw_share=None, verdict=None,
                         identical=all(r["identical"] for r in batched),
                         peak_mib=max((r["peak_mib"] for r in batched
                                       if r["peak_mib"] is not None), default=None)))
    cols = ["claim", "loop_s", "batched_s", "ratio_min", "ratio_median", "batched_share",
            "draw_share", "verdict", "identical", "peak_mib"]
    write(args.out, NAME, f"Monte Carlo claims' compute, batched vs per-replicate "
          f"({args.profile} parameters, 1 thread)", rows, cols,
          notes=__doc__.split("\n\n", 1)[1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
