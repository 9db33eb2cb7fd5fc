r"""Algorithm 1 of FedALS (Sec. 5): the result, its parts, its hypotheses and its claims
(spec V8): the algorithm as printed vs as intended, alpha = 1 == FedAvg (Algorithm 2).

FedALS averages the head h every tau local steps and the body phi every alpha tau steps
(alpha = tau_phi / tau_h a positive integer). As printed, lines 6-10 test
``mod(r tau + t, tau) = 0`` and, in an ``else if``, ``mod(r tau + t, alpha tau) = 0``. The
SCAFFOLD variants (Algorithms 3-4) are :mod:`.alg3` and :mod:`.alg4`. Instances carry
``alphas`` and ``local_steps``.
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms.fedals import (
    fedals,
    fedals_periods,
    intended_schedule,
    local_sgd_fedavg,
    printed_schedule,
)
from flbounds.ledger import Evidence, Tolerance, claim, result
from verify.fedals import mlp

from ._predicates import integer_alpha
from .alg2 import ALG2
from .mlp_task import SIZES, batch_oracle, make_plan, make_task

ALG1 = result(
    "fedals.alg1", ref="Algorithm 1",
    title="FedALS: head every tau steps, body every alpha tau steps",
    parts={"printed": "lines 6-10 as printed: h averaged when mod(r tau + t, tau) = 0, else "
                      "phi when mod(r tau + t, alpha tau) = 0, i.e. h every tau steps and phi "
                      "every alpha tau steps",
           "intended": "h averaged every tau steps and phi every alpha tau steps (the authors' "
                       "DSGDAlg: two independent checks)",
           "alpha1": "Sec. 6: alpha = 1 is FedAvg with tau local steps (Algorithm 2)"},
    hypotheses=(integer_alpha,))

PAPER_ALPHAS = [1, 5, 10, 25, 50, 100]


@claim("fedals.alg1.alpha1_is_fedavg", ref="Alg. 1 vs Alg. 2; Sec. 6", kind="algorithm",
       expected="holds", parts=(ALG1.part("alpha1"), ALG2.part("fedavg")),
       statement="FedALS with alpha = 1 is FedAvg with tau local steps.",
       quick=dict(n_seeds=2, n_rounds=12, local_steps=5),
       full=dict(n_seeds=4, n_rounds=200, local_steps=5))
def alpha1_is_fedavg(*, rng, n_seeds, n_rounds, local_steps):
    r"""The toolkit's FedALS (group-wise schedule, alpha = 1) against an independent textbook
    double-loop FedAvg on the label-skew MLP task, same initial model and batch plan. Both
    perform the same floating-point operations in the same order, so the outputs must agree
    bit for bit: measured max |difference|, tolerance exact."""
    n_steps = n_rounds * local_steps
    task = make_task(rng, n_seeds, 5, 100, 10, "noniid")
    theta0 = np.repeat(mlp.init_params(rng, n_seeds, SIZES)[:, None, :], 5, axis=1)
    plan = make_plan(rng, n_steps, n_seeds, 5, 100, 16)
    layers = mlp.layer_slices(SIZES)
    groups = [slice(0, layers[-2].stop), layers[-1]]
    sync = intended_schedule(n_steps, fedals_periods(local_steps, 1)[::-1])
    ours = fedals(batch_oracle(task), theta0, plan, step=0.05, sync=sync, groups=groups).output
    ref = local_sgd_fedavg(batch_oracle(task), theta0, plan, step=0.05,
                           local_steps=local_steps, n_rounds=n_rounds)
    return Evidence(measured=float(np.max(np.abs(ours - ref))), theoretical=0.0, relation="==",
                    instance=dict(alphas=[1], local_steps=local_steps),
                    tolerance=Tolerance.exact("identical operations in identical order"),
                    details={"n_steps": n_steps, "max_abs_param": float(np.max(np.abs(ref)))})


@claim("fedals.alg1.printed_averages_body", ref="Alg. 1, lines 6-10", kind="algorithm",
       expected="violated", result=ALG1, parts=("printed",),
       statement="Algorithm 1 as printed averages the head every tau steps and the body phi "
                 "every alpha tau steps.",
       quick=dict(n_rounds=4000, local_steps=5, alphas=PAPER_ALPHAS),
       full=dict(n_rounds=4000, local_steps=5, alphas=PAPER_ALPHAS))
def printed_averages_body(*, rng, n_rounds, local_steps, alphas):
    r"""Enumerate the printed conditions for R = 4000 rounds, tau = 5 (T = 20,000, the
    experiments' length) and every alpha of Table 2. mod(r tau + t, alpha tau) = 0 implies
    mod(r tau + t, tau) = 0, so the ``else if`` body branch never runs for integer alpha: phi is
    averaged only by the final output. measured: body-averaging counts; theoretical: the
    intended R/alpha; tolerance exact. A presentation error (audit 6): the authors' code uses
    two independent checks, and so does the toolkit (``intended_schedule``). Expected
    ``violated``. Details add the head count (every round, always at t = 0) and the one
    non-integer alpha = 6/5 for which the branch fires."""
    counts, heads = [], []
    for a in alphas:
        sched = printed_schedule(n_rounds, local_steps, a)
        counts.append(int(sched[:, 1].sum()))
        heads.append(int(sched[:, 0].sum()))
    odd = printed_schedule(n_rounds, local_steps, 6 / 5)
    return Evidence(measured=counts, theoretical=[n_rounds // a for a in alphas],
                    relation="==", tolerance=Tolerance.exact("integer counts"),
                    instance=dict(alphas=alphas, local_steps=local_steps),
                    details={"alphas": alphas, "head_counts": heads,
                             "body_count_alpha_6_5": int(odd[:, 1].sum())})


@claim("fedals.alg1.intended_schedule", ref="Alg. 1 (intended; authors' DSGDAlg)",
       kind="algorithm", expected="holds",
       corrects="fedals.alg1.printed_averages_body", result=ALG1, parts=("intended",),
       statement="The intended schedule averages h ceil(T/tau) times and phi ceil(T/(alpha tau)) "
                 "times (code convention s mod P = 0); right after an h-only averaging the "
                 "clients agree on h exactly and still disagree on phi.",
       quick=dict(n_steps=43, local_steps=5, alpha=4),
       full=dict(n_steps=2003, local_steps=5, alpha=10))
def intended_counts(*, rng, n_steps, local_steps, alpha):
    r"""V8(b)-(c). Counts from the schedule (exact integers), then a short MLP run ending right
    after an h-only averaging: the head's consensus distance must be exactly 0 (all clients
    hold the same weighted average) and the body's > 0. measured [count_h, count_phi,
    consensus_h, -consensus_phi] == / <= ... encoded as <= with exact tolerance."""
    head_p, body_p = fedals_periods(local_steps, alpha)
    sync = intended_schedule(n_steps, [body_p, head_p], convention="code")
    last = int(np.nonzero(sync[:, 1] & ~sync[:, 0])[0][-1]) + 1
    task = make_task(rng, 1, 5, 100, 10, "noniid")
    theta0 = np.repeat(mlp.init_params(rng, 1, SIZES)[:, None, :], 5, axis=1)
    plan = make_plan(rng, last, 1, 5, 100, 16)
    layers = mlp.layer_slices(SIZES)
    groups = [slice(0, layers[-2].stop), layers[-1]]
    tr = fedals(batch_oracle(task), theta0, plan, step=0.05, sync=sync[:last], groups=groups)
    spread = [float(np.max(np.ptp(tr.clients[..., g], axis=-2))) for g in groups]
    expected_counts = [-(-n_steps // head_p), -(-n_steps // body_p)]
    got = [int(sync[:, 1].sum()), int(sync[:, 0].sum())]
    measured = [abs(got[0] - expected_counts[0]), abs(got[1] - expected_counts[1]),
                spread[1], -spread[0]]
    return Evidence(measured=measured, theoretical=[0, 0, 0, 0], relation="<=",
                    instance=dict(alphas=[alpha], local_steps=local_steps),
                    tolerance=Tolerance(np.array([0, 0, 0, -1e-12]), "exact / strict",
                                        "integer counts; averaged entries are copies of one "
                                        "vector; the body spread must exceed 1e-12"),
                    details={"counts_h_phi": got, "expected": expected_counts,
                             "stopped_after_step": last, "spread_phi_h": spread})
