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
   moment form written directly; FOCUS: ``tracking.round_problem``, solved as
   ``focus_rate`` solves). Reported, not asserted: the time of building from a description
   against writing the PEPit problem by hand.
5. SAFARI Theorem 4 over the 2^R round types (``safari_nonconvex_rate``, K = 3): ~2^R K
   gradients of one non-convex function.
6. FOCUS under PL (``focus_pl_rate``): the 2^N-pattern sum, N function values per pattern.

The output's notes summarise the growth: the largest one-round N solved within 10 s and the
multi-round sizes that solve at all.

Run: ``python -m benchmarks pep_sizes [--profile full] [--out DIR]``. Times are single solves
(wall clock, including PEPit's compilation), not best-of-n: they are minutes apart at most.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from benchmarks._common import parse_args, write
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
from flbounds.pep.tracking import MAX_ALTERNATIVE, round_problem, scenario_focus_rate
from verify.focus.pep_conditions import thm1a_lyapunov_weight, thm1b_consensus_weight

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
    """One FOCUS round as written by hand (``tracking.round_problem``), solved as
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


def main(argv=None):
    args = parse_args(argv, __doc__)
    table = rows(args.profile)
    return write(args.out, NAME, "Worst-case SDP sizes and solve times", table,
                 ["builder", "N", "tau", "R", "gram", "constraints", "worst", "gap", "solver",
                  "seconds"],
                 notes="FOCUS one round: certified upper bound (flbounds.pep.certify), gap = "
                       "bracket to the solver's primal value. Others: Clarabel, SCS (eps 1e-8) "
                       "when Clarabel is not 'optimal' "
                       "within the gap tolerance or leaves a dual residual above 1e-5 "
                       "(flbounds.pep.sdp); equivalent forms tried in turn "
                       "(flbounds.pep.sdp.solve_first). Growth: "
                       + growth_notes(table))


if __name__ == "__main__":
    main()
