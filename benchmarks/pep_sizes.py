"""How the worst-case SDPs grow: Gram size, constraints and solve time per round builder.

1. FOCUS one round (``flbounds.pep.focus_rate``: exact expectation through the participation
   moments, so O(N^2) terms), N = 2..8 and tau = 3, 5, at Theorem 1(a)'s printed step; the
   value is the certified upper bound (``flbounds.pep.certify``), ``gap`` the bracket width.
   Full profile: also the corners N = 8, tau = 5, p = linspace(0.2, 0.95, N) at 1x and 5x
   the printed step, and p all 0.95 at 1x and 3x (at 4x the proof's Lyapunov weight
   1 - 8 eta L^2 N/mu is no longer positive).
2. The same expectation written as the 2^N scenario sum (``scenario_focus_rate``), N <= 6:
   the formulation the moments replace (same Gram matrix, exponentially many terms).
3. FOCUS R rounds from the proof's start (``focus_rounds_rate``): 2^{NR} leaves.
4. FedAvg one round with Bernoulli participation, N = 2..8.
7. The rounds as descriptions against raw PEPit, N = 2..8 (both profiles): ``fedavg_rate``
   and ``focus_rate`` (tau = 3, Theorem 1(a)'s step), whose rounds are descriptions built
   by ``flbounds.pep.engine``, beside the same SDPs written by hand in PEPit (FedAvg: the
   moment form written directly; FOCUS: ``_focus_reference.round_problem``, solved as
   ``focus_rate`` solves). Reported, not asserted: the time of building from a description
   against writing the PEPit problem by hand.
5. SAFARI Theorem 4 over the 2^R round types (``safari_nonconvex_rate``, K = 3): ~2^R K
   gradients of one non-convex function.
6. FOCUS under PL (``focus_pl_rate``): the 2^N-pattern sum, N function values per pattern.

8. Against N (table ``against_n``): one FedAvg round (tau = 3, step 0.1, clients sharing
   x*, ``distance``) and one FOCUS round (tau = 2, step 0.1/N, ``focus_lyapunov(1/N)``: its
   server sums the N trackers, so the step scales as 1/N as in its Theorem 1(a)), exact
   Bernoulli participation with two classes (the first half p = 0.3, the rest p = 0.7), in
   the direct form (``pep.worst_case``: one function per client, N <= 8, full profile 16),
   the symmetric form (``classes=``: one representative per class, N = 2 .. 10^4) and raw
   PEPit, N <= 8, full 16 (FedAvg: the moment form written by hand; FOCUS: the one-round
   problem written by hand, ``_focus_reference.round_problem`` with the shared minimizer; both given
   one accurate solve, as the direct form).

The output's notes summarise the growth: the largest one-round N solved within 10 s and the
multi-round sizes that solve at all.

Run: ``python -m benchmarks pep_sizes [--profile full] [--out DIR] [--only against_n]
[--record]``; ``--record`` appends the run to ``benchmarks/results/pep_sizes.json``. Times
are single solves (wall clock, including PEPit's compilation and, for the symmetric form, the
class law; the table against N also gives the process's CPU seconds, steadier on a shared
machine), not best-of-n: they are minutes apart at most.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from benchmarks import _results
from benchmarks._common import (
    DEFAULT_OUT,
    OUT_HELP,
    PROFILE_HELP,
    machine_line,
    markdown_table,
    out_folder,
    prog,
)
from flbounds.ledger import bounds
from flbounds.participation import Bernoulli
from flbounds.pep import (
    PEPSolveError,
    fedavg_rate,
    focus_pl_rate,
    focus_rate,
    focus_rounds_rate,
    safari_nonconvex_rate,
)
from flbounds.pep.tracking import MAX_ALTERNATIVE
from verify.focus.pep_conditions import thm1a_lyapunov_weight, thm1b_consensus_weight

from ._focus_reference import round_problem, scenario_focus_rate

NAME = "pep_sizes"


def _p(n):
    return np.linspace(0.3, 0.9, n)


def _printed_step(theorem, p, tau, **constants):
    """The printed step of FOCUS Theorem 1(a) or 1(b) (``flbounds bound focus.thm1a``)."""
    return bounds.get(theorem).evaluate(L=2.0, p=np.asarray(p), tau=tau, **constants).step


def _focus_rate(n, tau):
    """One FOCUS round at Theorem 1(a)'s printed step and its proof's Lyapunov weight."""
    step = _printed_step("focus.thm1a", _p(n), tau, mu=1.0)
    return focus_rate(1.0, 2.0, _p(n), tau, step,
                      consensus_weight=thm1a_lyapunov_weight(1.0, 2.0, n, step))


def _focus_pl_rate(n):
    """One FOCUS round under PL at Theorem 1(b)'s printed step and its proof's weight."""
    step = _printed_step("focus.thm1b", _p(n), 2, beta=1.0)
    return focus_pl_rate(1.0, 2.0, _p(n), 2, step,
                         consensus_weight=thm1b_consensus_weight(2.0, step))


def _raw_fedavg(n, tau, step, process):
    """One FedAvg round written by hand in PEPit (two runs, the moments W_ij and P(empty)):
    what a user writes without the description."""
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    from flbounds.pep import participation_moments, solve
    from flbounds.pep.anchor import origin
    from flbounds.pep.rounds import gd_steps, weighted_gram

    moments = participation_moments(process, n)
    problem = PEP()
    funcs = [problem.declare_function(SmoothStronglyConvexFunction, mu=1.0, L=2.0)
             for _ in range(n)]
    ref, x = origin(), problem.set_initial_point()
    problem.set_initial_condition((x - ref) ** 2 <= 1)
    diffs = [gd_steps(f, x, step, tau) - gd_steps(f, ref, step, tau) for f in funcs]
    metric = weighted_gram(diffs, diffs, moments.avg_pair)
    if moments.empty > 0:
        metric = metric + moments.empty * (x - ref) ** 2
    problem.set_performance_metric(metric)
    return solve(problem)


def _raw_focus(n, tau):
    """One FOCUS round as written by hand (``_focus_reference.round_problem``), solved as
    ``focus_rate`` solves it (certified common form, heterogeneous form as a retry)."""
    from flbounds.pep import participation_moments
    from flbounds.pep.certify import solve_certified

    step = _printed_step("focus.thm1a", _p(n), tau, mu=1.0)
    c = thm1a_lyapunov_weight(1.0, 2.0, n, step)
    pair = participation_moments(Bernoulli(_p(n)), n).pair
    other = [lambda: round_problem(1.0, 2.0, tau, step, c, pair, form="pepit")[0]] \
        if n * tau <= MAX_ALTERNATIVE else []
    return solve_certified(lambda: round_problem(1.0, 2.0, tau, step, c, pair), 2.0,
                           alternatives=other)


def _row(kind, n, tau, rounds, fn):
    start = time.perf_counter()
    try:
        res = fn()
        worst, gram, gap = res.worst, res.gram_size, res.gap
        ncons, solver = res.n_constraints, res.solver
    except PEPSolveError as exc:
        worst, gram, gap, ncons, solver = float("nan"), None, None, None, f"error: {exc}"[:60]
    row = dict(builder=kind, N=n, tau=tau, R=rounds, gram=gram, constraints=ncons,
               worst=worst, gap=gap, solver=solver,
               seconds=round(time.perf_counter() - start, 2))
    print(row, file=sys.stderr, flush=True)
    return row


def rows(profile):
    out = []
    big = 8 if profile == "full" else 6
    for tau in (3, 5):
        for n in range(2, big + 1):
            out.append(_row("focus one round (moments)", n, tau, 1,
                            lambda n=n, tau=tau: _focus_rate(n, tau)))
    if profile == "full":
        for name, p, mults in (("p 0.2..0.95", np.linspace(0.2, 0.95, 8), (1, 5)),
                               ("p 0.95", np.full(8, 0.95), (1, 3))):
            top = _printed_step("focus.thm1a", p, 5, mu=1.0)
            for m in mults:
                out.append(_row(f"focus one round, {name}, {m}x step", 8, 5, 1,
                                lambda p=p, m=m, top=top: focus_rate(
                                    1.0, 2.0, p, 5, m * top, consensus_weight=thm1a_lyapunov_weight(
                                        1.0, 2.0, len(p), m * top))))
    for n in range(2, (6 if profile == "full" else 4) + 1):
        # focus_rate's step and consensus weight, computed outside the timed solve
        step = _printed_step("focus.thm1a", _p(n), 3, mu=1.0)
        weight = thm1a_lyapunov_weight(1.0, 2.0, n, step)
        out.append(_row("focus one round (2^N scenarios)", n, 3, 1,
                        lambda n=n, step=step, weight=weight: scenario_focus_rate(
                            1.0, 2.0, _p(n), 3, step, weight)))
    sizes = [(2, 1), (2, 2), (3, 1), (2, 3), (3, 2)] if profile == "full" else [(2, 1), (2, 2)]
    for n, r in sizes:
        out.append(_row("focus R rounds (2^{NR} leaves)", n, 2, r,
                        lambda n=n, r=r: focus_rounds_rate(1.0, 2.0, _p(n), 2, 0.05, r)))
    for n in range(2, big + 1):
        out.append(_row("fedavg one round (moments)", n, 3, 1,
                        lambda n=n: fedavg_rate(1.0, 2.0, n, 3, 0.1, Bernoulli(_p(n)))))
    for n in range(2, 9):
        out.append(_row("fedavg one round, description (fedavg_rate)", n, 3, 1,
                        lambda n=n: fedavg_rate(1.0, 2.0, n, 3, 0.1, Bernoulli(_p(n)))))
        out.append(_row("fedavg one round, raw PEPit", n, 3, 1,
                        lambda n=n: _raw_fedavg(n, 3, 0.1, Bernoulli(_p(n)))))
        out.append(_row("focus one round, description (focus_rate)", n, 3, 1,
                        lambda n=n: _focus_rate(n, 3)))
        out.append(_row("focus one round, raw PEPit (round_problem)", n, 3, 1,
                        lambda n=n: _raw_focus(n, 3)))
    for r in range(1, (4 if profile == "full" else 3) + 1):
        out.append(_row("safari thm4 R rounds (2^R round types)", 1, 3, r,
                        lambda r=r: safari_nonconvex_rate(2.0, 0.5, 3, 2 * 0.01 / 3, 0.01, r)))
    for n in range(2, (4 if profile == "full" else 3) + 1):
        out.append(_row("focus PL one round (2^N patterns)", n, 2, 1,
                        lambda n=n: _focus_pl_rate(n)))
    return out


def growth_notes(table, budget=10.0):
    """One line per builder: the largest N (one round) or R (multi-round) solved, and the
    largest solved within ``budget`` seconds."""
    lines = []
    for kind, tau in dict.fromkeys((row["builder"], row["tau"]) for row in table):
        key = "R" if "R rounds" in kind else "N"
        group = [r for r in table if r["builder"] == kind and r["tau"] == tau]
        done = [r for r in group if r["gram"] is not None]
        fast = [r[key] for r in done if r["seconds"] <= budget]
        failed = sorted({r[key] for r in group if r["gram"] is None})
        lines.append(f"{kind}, tau {tau}: largest {key} solved "
                     f"{max((r[key] for r in done), default=None)}"
                     f", within {budget:g} s {max(fast, default=None)}"
                     + (f", no accurate solve at {key} = {failed}" if failed else ""))
    return " | ".join(lines)


def _raw_fedavg_common(n, tau, step, process):
    """One FedAvg round with a shared minimizer written by hand in PEPit (the moment form
    sum_ij W_ij <z_i - x*, z_j - x*> + P(empty) ||x - x*||^2), the direct SDP's twin."""
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    from flbounds.pep import participation_moments, solve
    from flbounds.pep.anchor import anchored_minimizer
    from flbounds.pep.rounds import gd_steps, weighted_gram

    moments = participation_moments(process, n)
    problem = PEP()
    funcs = [problem.declare_function(SmoothStronglyConvexFunction, mu=1.0, L=2.0)
             for _ in range(n)]
    ref, x = anchored_minimizer(funcs, common=True), problem.set_initial_point()
    problem.set_initial_condition((x - ref) ** 2 <= 1)
    ends = [gd_steps(f, x, step, tau) - ref for f in funcs]
    metric = weighted_gram(ends, ends, moments.avg_pair)
    if moments.empty > 0:
        metric = metric + moments.empty * (x - ref) ** 2
    problem.set_performance_metric(metric)
    return solve(problem)


def _raw_focus_common(n, tau, step, c, process):
    """One FOCUS round with a shared minimizer written by hand in PEPit
    (``_focus_reference.round_problem``: E[Psi+] through the pair moments P(i, j in S)), the direct
    SDP's twin, given one accurate solve."""
    from flbounds.pep import participation_moments, solve

    pair = participation_moments(process, n).pair
    return solve(round_problem(1.0, 2.0, tau, step, c, pair)[0])


def _halves(n):
    h = max(1, n // 2)
    return [list(range(h)), list(range(h, n))], np.r_[np.full(h, 0.3), np.full(n - h, 0.7)]


def _described(algorithm, n):
    from flbounds import pep

    setting = pep.Setting(n, 1.0, 2.0, common_minimizer=True)
    if algorithm == "fedavg":
        return pep.fedavg_round(3, 0.1), setting, pep.distance()
    return pep.focus_round(2, 0.1 / n), setting, pep.focus_lyapunov(1.0 / n)


def _against_row(algorithm, form, n, fn):
    start, cpu = time.perf_counter(), time.process_time()
    try:
        res = fn()
        worst, gram, ncons, gap, status = res.worst, res.gram_size, res.n_constraints, \
            res.gap, "optimal"
    except PEPSolveError as exc:
        worst, gram, ncons, gap, status = None, None, None, None, f"error: {exc}"[:60]
    row = dict(algorithm=algorithm, form=form, N=n, classes=2 if n > 1 else 1, gram=gram,
               constraints=ncons, worst=worst, gap=gap, status=status,
               seconds=round(time.perf_counter() - start, 3),
               cpu_seconds=round(time.process_time() - cpu, 3))
    print(row, file=sys.stderr, flush=True)
    return row


def against_n(profile):
    """Table ``against_n``: time and SDP size against N, direct, symmetric and raw PEPit."""
    from flbounds import pep

    small = range(2, (16 if profile == "full" else 8) + 1, 2)
    large = [2, 4, 8, 16, 32, 100, 1000, 10_000]
    out = []
    for algorithm in ("fedavg", "focus"):
        for n in small:
            groups, p = _halves(n)
            out.append(_against_row(algorithm, "direct", n, lambda n=n, p=p, a=algorithm:
                                    pep.worst_case(*_described(a, n), Bernoulli(p))))
            if algorithm == "fedavg":
                out.append(_against_row(algorithm, "raw PEPit", n, lambda n=n, p=p:
                                        _raw_fedavg_common(n, 3, 0.1, Bernoulli(p))))
            else:  # _described's FOCUS: tau = 2, step 0.1/N, weight 1/N
                out.append(_against_row(algorithm, "raw PEPit", n, lambda n=n, p=p:
                                        _raw_focus_common(n, 2, 0.1 / n, 1.0 / n,
                                                          Bernoulli(p))))
        for n in large:
            groups, p = _halves(n)
            out.append(_against_row(algorithm, "symmetric", n,
                                    lambda n=n, p=p, g=groups, a=algorithm: pep.worst_case(
                                        *_described(a, n), Bernoulli(p), classes=g)))
    return out


TITLE = "Worst-case SDP sizes and solve times"
UNITS = {"seconds": "s (wall)", "cpu_seconds": "s (this process's CPU)",
         "gram": "side of the Gram matrix", "constraints": "scalar constraints",
         "worst": "worst-case ratio", "gap": "primal-dual gap"}
TARGETS = [{"what": "one FedAvg round, exact Bernoulli participation, N = 1000 clients in 2 "
                    "classes, symmetric form, one core", "table": "against_n",
            "column": "cpu_seconds", "at_most": 10.0}]
COLUMNS = {"results": ["builder", "N", "tau", "R", "gram", "constraints", "worst", "gap",
                       "solver", "seconds"],
           "against_n": ["algorithm", "form", "N", "classes", "gram", "constraints", "worst",
                         "gap", "status", "seconds", "cpu_seconds"]}


def main(argv=None):
    parser = argparse.ArgumentParser(prog=prog(), description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=out_folder, default=str(DEFAULT_OUT), help=OUT_HELP)
    parser.add_argument("--profile", choices=("quick", "full"), default="quick",
                        help=PROFILE_HELP)
    parser.add_argument("--only", choices=("all", "against_n"), default="all",
                        help="run every table (default) or only the table against N")
    parser.add_argument("--record", action="store_true",
                        help="append the run to benchmarks/results/pep_sizes.json")
    args = parser.parse_args(argv)
    tables = {}
    if args.only == "all":
        tables["results"] = rows(args.profile)
    tables["against_n"] = against_n(args.profile)
    notes = ("FOCUS one round (table results): certified upper bound (flbounds.pep.certify), "
             "gap = bracket to the solver's primal value. Others: Clarabel, SCS (eps 1e-8) "
             "when Clarabel is not 'optimal' within the gap tolerance or leaves a dual "
             "residual above 1e-5 (flbounds.pep.sdp). ")
    if "results" in tables:
        notes += "Growth: " + growth_notes(tables["results"])
    md = f"## {TITLE}\n\n{machine_line()}\n\n" + "\n".join(
        f"### {name}\n\n{markdown_table(table, COLUMNS[name])}" for name, table in tables.items())
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{NAME}.md").write_text(md + f"\n{notes}\n", encoding="utf-8")
    run = _results.run_record(tables, profile=args.profile)
    (args.out / f"{NAME}.json").write_text(_results.dumps(
        {"benchmark": NAME, "title": TITLE, "units": UNITS, **run}) + "\n", encoding="utf-8")
    if args.record:
        _results.append(NAME, run, title=TITLE, command=f"python -m benchmarks {NAME} --record",
                        units=UNITS, targets=TARGETS)
    return tables


if __name__ == "__main__":
    main()
