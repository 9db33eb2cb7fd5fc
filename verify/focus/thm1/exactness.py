r"""FOCUS converges exactly under arbitrary participation (FOCUS abstract, Thm 1, Sec. 5, Fig. 4).

Grid: participation processes (Bernoulli, weighted m-of-N without replacement, uniform m-of-N,
cyclic round robin, Markov on/off), local steps tau, and steps eta = c * eta_bound with
eta_bound the Theorem 1(a) condition as printed (q_min = exact min_i q_i of the process) and
c in a list of multipliers up to 1000. Multipliers whose step exceeds the stability ceiling
1/(N L) (FOCUS's server step is eta * sum of N gradients) are skipped and listed in
``details["skipped"]``, so the steps tested are the grid points c x bound that
are <= min(1000 x bound, 1/(N L)). Every participation process must have at least one run
(the claim errors otherwise); the largest multiplier reached per process is in ``details``.
When a cell is skipped, one run at exactly 1/(N L) is made as a diagnostic, NOT gated
(``ceiling_runs_not_gated``): that step is beyond anything the paper claims, and 1/(N L) is
not a stability guarantee (on the quadratic instance, cyclic participation with tau = 1
diverges there, 64x the bound: a one-client-per-round schedule makes FOCUS a gradient method
with delay N - 1, whose stable step is smaller). Cyclic and Markov participation are outside
the proven theory (rounds are not i.i.d.); the claim there is the paper's "any participation
pattern" remark (Sec. 5.1).

Observable: relative error ||x_r - x*|| / ||x*|| over the last 10% of rounds, after
n_rounds = ceil(decay / (eta N mu)) + ceil(10 decay / pi_min) rounds (the second term lets
the rarest client, included w.p. pi_min, refresh its gradient ~10 decay times). A cell whose
n_rounds exceeds the profile's ``max_rounds`` is not run (a truncated run would measure the
transient, not the limit) and is listed in ``details["skipped"]`` with reason "budget"
(e.g. weighted sampling with a tiny q_min at multiplier 1 needs ~1e6 rounds).
Criterion: <= 1e-10 (the issue's acceptance; the floating-point floor is ~1e-15 cond).
FedAvg on the same plans is recorded for contrast (it plateaus at a strictly positive bias),
at multipliers >= 10 (``FEDAVG_FROM``): no verdict reads it, and at multiplier 1 its bias is
the smallest, its run the longest and, at N = 8 and tau = 1, still in its transient when
FOCUS's is over (FedAvg contracts by about eta tau mu per round, FOCUS by eta N mu): those
runs were 85% of the FedAvg rounds of the full grid for no contrast worth reading.
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms import fedavg, focus
from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.participation import (
    Bernoulli,
    Cyclic,
    MarkovOnOff,
    UniformWithoutReplacement,
    WeightedWithoutReplacement,
)
from flbounds.problems import random_logistic, random_quadratics, random_ridge

from ..assumptions import constants
from ..fig4 import FIG4
from ..instances import thm1a_step_printed
from . import THM1A

#: exactness is claimed beyond the theorem's step on purpose
BEYOND_STEP = {"step": "from Theorem 1(a)'s bound up to 1000x it (below 1/(N L)) on purpose: "
                       "exactness of the fixed point, not the rate"}

EXACT = 1e-10  # acceptance criterion: relative error after the plateau
#: FedAvg's contrast runs from this multiple of the bound up (module docstring)
FEDAVG_FROM = 10
PROCESS_NAMES = ("bernoulli", "weighted", "uniform", "cyclic", "markov")


def processes(n_clients, rng):
    """The five participation processes of the exactness grid (N clients)."""
    p = np.linspace(0.1, 1.0, n_clients)
    weights = rng.random(n_clients) + 0.1  # max/min <= 11, the spread of the paper's notebook
    m = max(1, n_clients // 3)
    return {"bernoulli": Bernoulli(p),
            "weighted": WeightedWithoutReplacement(weights / weights.sum(), m),
            "uniform": UniformWithoutReplacement(n_clients, m),
            "cyclic": Cyclic(n_clients, 1),
            "markov": MarkovOnOff(np.linspace(0.1, 0.9, n_clients), 0.9)}


def exactness_grid(problem, rng, *, taus, multipliers, decay, max_rounds, mu=None):
    """Run FOCUS (and FedAvg) over the grid; returns (rows of runs, skipped cells)."""
    n = problem.n_clients
    mu = problem.mu if mu is None else mu
    mu_clients = float(np.min(problem.client_mu))
    ceiling = 1.0 / (n * problem.L)
    scale = np.linalg.norm(problem.x_star)
    rows, skipped = [], []
    for name, proc in processes(n, rng).items():
        q_min = float(proc.aggregation_weights().min())
        pi_min = float(proc.inclusion_probabilities().min())
        for tau in taus:
            bound = thm1a_step_printed(mu_clients, problem.L, n, tau, q_min)
            cells = []
            for c in multipliers:
                if c * bound > ceiling:
                    skipped.append(dict(process=name, tau=tau, multiplier=c, step=c * bound,
                                        reason="above 1/(N L)", ceiling=ceiling))
                else:
                    cells.append((c, c * bound, False))
            if len(cells) < len(multipliers):
                cells.append((ceiling / bound, ceiling, True))
            for c, step, capped in cells:
                n_rounds = int(np.ceil(decay / (step * n * mu)) + np.ceil(decay * 10 / pi_min))
                if n_rounds > max_rounds:
                    skipped.append(dict(process=name, tau=tau, multiplier=float(c), step=step,
                                        reason="budget", n_rounds_needed=n_rounds))
                    continue
                plan = proc.plan(rng, n_rounds)
                xs = focus(problem, plan, step=step, local_steps=tau).x
                tail = xs[-max(1, n_rounds // 10):]
                err = np.linalg.norm(tail - problem.x_star, axis=1).max() / scale
                rows.append(dict(process=name, tau=tau, multiplier=float(c), step=step,
                                 at_ceiling=capped, n_rounds=n_rounds,
                                 instance=constants(problem, proc, tau=tau, step=step),
                                 focus_rel_err=float(err),
                                 fedavg_rel_err=_fedavg_contrast(problem, plan, step, tau, c,
                                                                 scale)))
    return rows, skipped


def _fedavg_contrast(problem, plan, step, tau, multiplier, scale):
    """FedAvg's relative error at the end of the same plan, or None below
    :data:`FEDAVG_FROM` x the bound (module docstring)."""
    if multiplier < FEDAVG_FROM:
        return None
    x = fedavg(problem, plan, step=step, local_steps=tau).x[-1]
    return float(np.linalg.norm(x - problem.x_star) / scale)


def _evidence(grid, problem):
    rows, skipped = grid
    instances = [r.pop("instance") for r in rows if not r["at_ceiling"]]
    for r in rows:
        r.pop("instance", None)
    ceiling_runs = [r for r in rows if r["at_ceiling"]]
    rows = [r for r in rows if not r["at_ceiling"]]
    missing = sorted(set(PROCESS_NAMES) - {r["process"] for r in rows})
    if missing:
        raise RuntimeError(f"no run for participation processes {missing}: every requested "
                           "step exceeds 1/(N L) or needs more than max_rounds rounds")
    errs = np.array([r["focus_rel_err"] for r in rows])
    reached = {}
    for r in rows:
        reached[r["process"]] = max(reached.get(r["process"], 0), r["multiplier"])
    return Evidence(measured=errs, theoretical=0.0, relation="<=", instance=instances,
                    tolerance=Tolerance(EXACT, "exactness criterion",
                                        "issue acceptance: relative error <= 1e-10 after the "
                                        "plateau (machine floor ~1e-15 cond)"),
                    details={"runs": rows, "skipped": skipped,
                             "ceiling_runs_not_gated": ceiling_runs,
                             "max_multiplier_per_process": reached,
                             "L": problem.L, "mu": problem.mu,
                             "worst_focus": float(errs.max()),
                             "min_fedavg": min((r["fedavg_rel_err"] for r in rows
                                                if r["fedavg_rel_err"] is not None),
                                               default=None)})


_STATEMENT = ("FOCUS converges to the exact optimum x* (no residual bias) under arbitrary "
              "participation with a constant step, for steps from Theorem 1(a)'s bound up to "
              "min(1000x it, the stability ceiling 1/(N L)) and any tau: relative error "
              "<= 1e-10.")


@claim("focus.exactness.quadratic", ref="Abstract; Thm 1; Sec. 5.1", kind="statement",
       expected="holds", result=THM1A, parts=("exact",), outside=BEYOND_STEP,
       statement=_STATEMENT + " (heterogeneous quadratics)",
       quick=dict(n_clients=8, dim=5, taus=(1, 5), multipliers=(1, 10, 100, 1000),
                  max_rounds=60000),
       full=dict(n_clients=8, dim=5, taus=(1, 3, 5, 10), multipliers=(1, 10, 100, 1000),
                 max_rounds=400000))
def quadratic(*, rng, n_clients, dim, taus, multipliers, max_rounds):
    """Quadratics with mu = 1, L = 2 (random rotations, so client drift is present). Expected
    to hold: the tracking invariant makes x* the only fixed point (spec 8: 7e-15 at up to
    1600x the bound; audit: 1e-16 - 1e-15 at 80x - 2450x). Tolerance: the 1e-10 criterion."""
    problem = random_quadratics(rng, n_clients, dim, mu=1.0, L=2.0)
    rows = exactness_grid(problem, rng, taus=taus, multipliers=multipliers, decay=40.0,
                          max_rounds=max_rounds)
    return _evidence(rows, problem)


@claim("focus.exactness.ridge", ref="Abstract; Thm 1; Fig. 4", kind="statement",
       expected="holds", result=THM1A, parts=("exact", FIG4.part("exact")), outside=BEYOND_STEP,
       statement=_STATEMENT + " (federated ridge regression)",
       quick=dict(n_clients=8, dim=5, taus=(3,), multipliers=(10, 1000), max_rounds=60000),
       full=dict(n_clients=8, dim=5, taus=(1, 3, 5, 10), multipliers=(1, 10, 100, 1000),
                 max_rounds=400000))
def ridge(*, rng, n_clients, dim, taus, multipliers, max_rounds):
    """Ridge with 20 samples per client, lam = 0.1, heterogeneous features and targets.
    Same expectation and tolerance as the quadratic claim."""
    problem = random_ridge(rng, n_clients, 20, dim, lam=0.1, heterogeneity=0.5)
    rows = exactness_grid(problem, rng, taus=taus, multipliers=multipliers, decay=40.0,
                          max_rounds=max_rounds)
    return _evidence(rows, problem)


@claim("focus.exactness.logistic", ref="Abstract; Thm 1", kind="statement", expected="holds",
       result=THM1A, parts=("exact",), outside=BEYOND_STEP,
       statement=_STATEMENT + " (L2-regularized logistic regression)",
       quick=dict(n_clients=8, dim=3, taus=(3,), multipliers=(10, 100, 1000), max_rounds=60000),
       full=dict(n_clients=8, dim=5, taus=(1, 3, 5, 10), multipliers=(1, 10, 100, 1000),
                 max_rounds=400000))
def logistic(*, rng, n_clients, dim, taus, multipliers, max_rounds):
    """Logistic regression, lam = 0.1 (mu = lam is a valid strong-convexity bound; the
    rounds budget uses the curvature of F at x*, lambda_min(Hessian), so it is not
    over-long). x* by Newton to ||grad F|| <= 1e-12 scale, i.e. ||x* error|| <~ 1e-11 / mu,
    below the 1e-10 criterion. Same expectation as the quadratic claim."""
    problem = random_logistic(rng, n_clients, 20, dim, lam=0.1, heterogeneity=0.5)
    mu_local = float(np.linalg.eigvalsh(problem.hessian(problem.x_star))[0])
    rows = exactness_grid(problem, rng, taus=taus, multipliers=multipliers, decay=40.0,
                          max_rounds=max_rounds, mu=mu_local)
    return _evidence(rows, problem)
