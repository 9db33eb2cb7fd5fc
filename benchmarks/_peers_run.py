"""One thread count of ``python -m benchmarks peers``: builds the problems, checks that every
peer computes flbounds' iterates, times all implementations side by side, and profiles.

Runs in its own process (``benchmarks.peers`` starts one per thread count, with the BLAS and
XLA thread counts fixed in the environment before NumPy and JAX load). Rows go to a JSON file.
"""

from __future__ import annotations

import math
import statistics
from typing import NamedTuple

import numba
import numpy as np

from benchmarks import _peer_jax as pj
from benchmarks import _peer_numpy as pn
from benchmarks._common import check_approaches, rounding_tolerance
from benchmarks._roofline import calibrate, peak_mib, timed_cpu, two_free_cores
from flbounds.algorithms import fedavg, fedavg_sampler_batched, focus
from flbounds.problems import random_logistic, random_quadratics, random_ridge
from flbounds.sampling import UniformISP

KINDS = ("quadratic", "ridge", "logistic")
ALGORITHMS = ("fedavg", "focus", "sampler")
FRACTIONS = (1.0, 0.1)
TAU, SAMPLES, DIM, QUAD_DIM, LAM = 5, 20, 50, 16, 0.1
NUMPY_PEERS = ("einsum", "einsum-blocked", "loop")


class Settings(NamedTuple):
    """Sizes and timing of a run: client counts, client-updates per timed call (fast
    implementations / the loop), seconds per timed block, repeats, problem kinds."""

    sizes: tuple
    work: int
    loop_work: int
    min_block: float
    repeats: int
    kinds: tuple = KINDS


def dim_of(kind: str) -> int:
    return QUAD_DIM if kind == "quadratic" else DIM


def make_problem(kind, n_clients, seed=0):
    rng = np.random.default_rng([seed, n_clients, KINDS.index(kind)])
    if kind == "quadratic":
        return random_quadratics(rng, n_clients, QUAD_DIM, mu=0.1, L=1.0, heterogeneity=1.0)
    if kind == "ridge":
        return random_ridge(rng, n_clients, SAMPLES, DIM, lam=LAM, heterogeneity=0.5)
    return random_logistic(rng, n_clients, SAMPLES, DIM, lam=LAM, heterogeneity=0.5)


def tolerance(kind: str, rounds: int, scale: float) -> float:
    """Agreement tolerance (:func:`benchmarks._common.rounding_tolerance`): each gradient
    entry sums at most max(n, d) * d products; scale = 1 + max |x|. For FOCUS (tracker and
    stored gradients) the same form is used without the non-expansiveness proof; the
    differences observed are O(1e-15), far inside it. A peer computing something else is off
    by O(step) or more (compared where the run still moves: :func:`check_round`)."""
    width = dim_of(kind) * (dim_of(kind) if kind == "quadratic" else max(SAMPLES, DIM))
    return rounding_tolerance(rounds, TAU, width, scale)


class Case(NamedTuple):
    """One configuration: its problem, arrays, plan (masks) and uniforms (sampler)."""

    kind: str
    algorithm: str
    n_clients: int
    p: float
    problem: object
    data: pn.Arrays
    step: float
    prob: float
    uniforms: np.ndarray
    masks: np.ndarray


def step_of(algorithm: str, problem) -> float:
    """The step of a case. FedAvg and the sampler: 1/(2L), local GD steps on one client's
    L-smooth loss, the server averaging (the sampler's estimate is unbiased for the average).
    FOCUS: 1/(N L), since its server step multiplies the tracker y = sum_i g_i, a sum over all
    N clients rather than their mean; at 1/(2L) that step is N/2 times too long and the
    iterates overflow (|x| about 1e100 after 60 rounds at N = 1e3). At 1/(N L) FOCUS converges
    linearly to x* on every problem and participation rate of the benchmark."""
    scale = problem.n_clients if algorithm == "focus" else 2
    return 1.0 / (scale * float(problem.L))


def make_case(kind, algorithm, problem, p, rounds, seed=1):
    n = problem.n_clients
    prob = float(UniformISP(n, p * n).probabilities()[0])
    uniforms = np.random.default_rng(seed).random((rounds, n))
    return Case(kind, algorithm, n, p, problem, pn.arrays(problem, kind),
                step_of(algorithm, problem), prob, uniforms, uniforms < prob)


def check_converging(case: Case, trace: np.ndarray) -> float:
    """:func:`benchmarks._common.check_approaches` of flbounds' trace of a case."""
    return check_approaches(case.problem, trace,
                            f"flbounds' {case.algorithm} on {case.kind} N={case.n_clients} "
                            f"p={case.p} at step {case.step:.3g}")


def flbounds_run(case: Case, rounds: int):
    """flbounds' trace (rounds + 1, d) of the case's algorithm over its first rounds."""
    if case.algorithm == "sampler":
        sampler = UniformISP(case.n_clients, case.p * case.n_clients)
        # the peers get the round's uniforms (JAX its draws) and compute the iterates only:
        # flbounds takes the same uniforms (the public replay of fedavg_sampler's draws) and
        # computes the drawn clients only
        return fedavg_sampler_batched(case.problem, [sampler], case.uniforms[None, :rounds],
                                      local_steps=TAU, step=case.step, diagnostics=False).x[0]
    algo = fedavg if case.algorithm == "fedavg" else focus
    return algo(case.problem, case.masks[:rounds], step=case.step, local_steps=TAU).x


def numpy_run(case: Case, peer: str, rounds: int):
    x0 = np.zeros(case.data.a.shape[-1])
    size = pn.block_size(case.data) if peer == "einsum-blocked" else None
    if peer == "loop":
        if case.algorithm == "sampler":
            return pn.sampler_loop(case.data, case.uniforms[:rounds], case.prob, case.step,
                                   TAU, x0)
        fn = pn.fedavg_loop if case.algorithm == "fedavg" else pn.focus_loop
        return fn(case.data, case.masks[:rounds], case.step, TAU, x0)
    if case.algorithm == "sampler":
        return pn.sampler_batched(case.data, case.uniforms[:rounds], case.prob, case.step, TAU,
                                  x0, size)
    fn = pn.fedavg_batched if case.algorithm == "fedavg" else pn.focus_batched
    return fn(case.data, case.masks[:rounds], case.step, TAU, x0, size)


def implementations(case: Case, settings: Settings, rounds: int, threads: int):
    """{name: (callable, rounds per call)}; JAX only if installed; the loop only on 1 thread
    (it is single-threaded Python)."""
    impls = {"flbounds": (lambda: flbounds_run(case, rounds)[-1], rounds)}
    if pj.available():
        impls["jax"] = (pj.runner(case.algorithm, case.kind, case.data.lam, case.step, TAU,
                                  case.prob, case.data.a, case.data.b, case.masks[:rounds],
                                  np.zeros(case.data.a.shape[-1])), rounds)
    for peer in NUMPY_PEERS:
        if peer == "loop" and threads > 1:
            continue
        r = rounds_for(case.n_clients, case.p, settings.loop_work) if peer == "loop" else rounds
        r = min(r, rounds)
        impls[peer] = ((lambda peer=peer, r=r: numpy_run(case, peer, r)), r)
    return impls


def rounds_for(n_clients, p, work):
    return max(1, math.ceil(work / (n_clients * p)))


#: peers are compared at an iterate still this many tolerances away from the run's last one
MOVING = 1e3


def check_round(case: Case, reference: np.ndarray) -> int:
    """The round at which the peers are checked besides the timed last one: the last round
    whose iterate is still :data:`MOVING` tolerances away from the trace's final iterate (the
    last round itself when the run still moves at its end; round 1 when even round 1 is that
    close). Once a run has settled (FOCUS at N = 100, p = 0.1 reaches x* to the last digit
    within the 1000 rounds a timed call runs), its last iterate no longer depends on how it got
    there, and a peer with one local step fewer, or a different step size, would agree with
    it."""
    last = len(reference) - 1
    for r in range(last - 1, 0, -1):
        scale = 1.0 + float(np.max(np.abs(reference[r])))
        if np.max(np.abs(reference[r] - reference[last])) >= MOVING * tolerance(case.kind, r,
                                                                               scale):
            return last if r == last - 1 else r
    return min(1, last)


def agreement(case, impls, reference):
    """Max |peer - flbounds| per implementation; AssertionError if beyond :func:`tolerance`."""
    diffs = {}
    for name, (fn, r) in impls.items():
        ref = reference[r]
        diff = float(np.max(np.abs(fn() - ref)))
        tol = tolerance(case.kind, r, 1.0 + float(np.max(np.abs(ref))))
        if not diff <= tol:
            raise AssertionError(f"{name} disagrees with flbounds on {case.kind} "
                                 f"{case.algorithm} N={case.n_clients} p={case.p}: "
                                 f"max |diff| {diff:.3g} > tolerance {tol:.3g}")
        diffs[name] = (diff, tol)
    return diffs


def time_all(impls, settings):
    """Interleaved repeats: per repeat, one calibrated block of every implementation.
    Returns ({name: rounds/s per repeat}, {name: CPU-time rounds/s per repeat}, calls)."""
    calls = {name: calibrate(fn, settings.min_block) for name, (fn, _) in impls.items()}
    rates = {name: [] for name in impls}
    cpu_rates = {name: [] for name in impls}
    for _ in range(settings.repeats):
        for name, (fn, r) in impls.items():
            wall, cpu = timed_cpu(fn, calls[name])
            rates[name].append(r / wall)
            cpu_rates[name].append(r / max(cpu, 1e-9))
    return rates, cpu_rates, calls


def bench_case(case: Case, settings: Settings, threads: int):
    """Rows (one per implementation) of one configuration at ``threads`` threads."""
    rounds = rounds_for(case.n_clients, case.p, settings.work)
    base = {"kind": case.kind, "algorithm": case.algorithm, "N": case.n_clients, "p": case.p,
            "threads": threads, "participants": float(case.masks[:rounds].sum()) / rounds}
    if threads > 1:
        free, speedup, load = two_free_cores()
        base.update(free_speedup=speedup, load1=load)
        if not free:
            return [dict(base, impl="all", status="busy")]
    numba.set_num_threads(threads)
    reference = flbounds_run(case, rounds)
    check_converging(case, reference)
    impls = implementations(case, settings, rounds, threads)
    diffs = agreement(case, impls, reference)          # the callables that are timed
    at = check_round(case, reference)
    if at < rounds:                                    # and where the run still moves
        agreement(case, implementations(case, settings, at, threads), reference)
    rates, cpu_rates, calls = time_all(impls, settings)
    if threads > 1:     # two free cores after the timing too, or the cell is not reported
        free, speedup, load = two_free_cores()
        base.update(free_speedup_after=speedup, load1_after=load)
        if not free:
            return [dict(base, impl="all", status="busy")]
    rows = []
    for name, (fn, r) in impls.items():
        traced = name != "jax" and threads == 1
        rows.append(dict(base, impl=name, status="ok", rounds_per_call=r, calls=calls[name],
                         rates=rates[name], rate_min=min(rates[name]),
                         rate_median=statistics.median(rates[name]),
                         cpu_rates=cpu_rates[name],
                         cpu_rate_median=statistics.median(cpu_rates[name]),
                         max_diff=diffs[name][0], tol=diffs[name][1], checked_round=at,
                         peak_mib=peak_mib(fn) if traced else None))
    return rows


def phase_profile(kind, n_small, n_large, p, settings):
    """FedAvg per participating client at 1 thread (process CPU time, best of the repeats,
    robust to other processes): t(tau) = fixed + tau * gradient, fitted from local_steps =
    TAU and 2 TAU - 1 at N = n_large, and the fixed part at n_small (client data in cache) for
    the memory-traffic share. Not from local_steps = 1: the data of a coming participant is
    hinted a slice per local step, so with one step the whole fetch lands in one burst that the
    gradients do not hide, and the slope from 1 to TAU understates a gradient (ridge at
    N = 1e4: 89 ns by that fit, 140-170 ns per step measured from 5 and 9 steps or alone)."""
    out, longer = {}, 2 * TAU - 1
    for label, n in (("small", n_small), ("large", n_large)):
        problem = make_problem(kind, n)
        case = make_case(kind, "fedavg", problem, p, rounds_for(n, p, settings.work))
        per = {}
        for steps in (TAU, longer):
            def run(steps=steps, problem=problem, case=case):
                return fedavg(problem, case.masks, step=case.step, local_steps=steps)
            run()
            calls = calibrate(run, settings.min_block)
            seconds = min(timed_cpu(run, calls)[1] for _ in range(settings.repeats))
            per[steps] = seconds / max(float(case.masks.sum()), 1.0)
        gradient = (per[longer] - per[TAU]) / (longer - TAU)
        out[label] = {"per_client_s": per[TAU], "gradient_s": gradient,
                      "fixed_s": per[TAU] - TAU * gradient}
    return {"kind": kind, "p": p, "n_small": n_small, "n_large": n_large, "fits": out}


def run_all(settings: Settings, threads: int, log=None):
    """Every configuration at ``threads`` threads; returns (rows, profiles). ``log(rows, done,
    total)`` is called after each configuration."""
    rows, profiles = [], []
    total, done = len(settings.kinds) * len(settings.sizes) * len(FRACTIONS) * len(ALGORITHMS), 0
    for kind in settings.kinds:
        for n in settings.sizes:
            problem = make_problem(kind, n)
            for p in FRACTIONS:
                rounds = rounds_for(n, p, settings.work)
                for algorithm in ALGORITHMS:
                    case = make_case(kind, algorithm, problem, p, rounds)
                    new = bench_case(case, settings, threads)
                    rows += new
                    done += 1
                    if log:
                        log(new, done, total)
    if threads == 1:
        target = max(n for n in settings.sizes if n <= 10_000)
        for kind in settings.kinds:
            for p in FRACTIONS:
                profiles.append(phase_profile(kind, min(settings.sizes), target, p, settings))
    return rows, profiles
