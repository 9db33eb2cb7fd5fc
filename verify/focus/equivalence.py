r"""FedAvg and FOCUS in federated form equal their matrix (graph) forms (FOCUS Sec. 4, App. D-E).

Both forms run on the same participation plan (Bernoulli with one never-participating client
and empty rounds) and the same start; the server trajectories are compared entrywise.
Tolerance: the two forms add the same terms in different orders; each round's server update
is a sum of O(N tau) terms of size <= G (largest gradient norm times the step, or model
entry), so rounding is <= c N tau eps G per round and accumulates over R rounds at most
linearly; the criterion of the spec (1e-12 absolute on O(1) iterates) is far above that
(observed ~1e-16).
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms import fedavg, fedavg_matrix, fedavg_virtual, focus, focus_matrix
from flbounds.ledger import Evidence, Tolerance, claim, result
from flbounds.participation import Bernoulli
from flbounds.problems import random_logistic, random_quadratics

AGREEMENT = 1e-12  # spec section 4, row 1

ALG1 = result(
    "focus.alg1", ref="Algorithm 1", title="FOCUS",
    parts={"push_pull": "Sec. 4.2.1 eqs. (13)-(14), App. E (73)-(74): Algorithm 1 is push-pull "
                        "over the time-varying graph, R(S_r) pulling and C(S_{r-1}) = "
                        "R(S_{r-1})' pushing"})

EQ6_7 = result(
    "focus.eq6_7", ref="Sec. 4.1, eqs. (6)-(7)", kind="equation",
    title="FedAvg in graph (matrix) form",
    parts={"graph_form": "FedAvg (2a)-(2c) equals y_k = R_k x_k, y_k^+ = y_k - eta D_k grad "
                         "f(y_k), x_{k+1} = A_k y_k^+ (6)-(7)",
           "virtual_form": "App. D (41)-(43): and the virtual form with the rank-one "
                           "W(S_r) = 1 w_S'"})

FIG2 = result("focus.fig2", ref="Figure 2", title="FedAvg as a graph",
              not_checked="a drawing; its matrices are checked by focus.eq6_7.fedavg_graph_form")

FIG3 = result("focus.fig3", ref="Figure 3", title="FOCUS's push-pull illustration",
              not_checked="a drawing; Algorithm 1's matrix form is checked by "
                          "focus.eq73_74.fl_equals_push_pull")


def _instance(rng, n_clients, dim, n_rounds):
    p = np.linspace(0.1, 1.0, n_clients)
    p[-1] = 0.0  # a client that never participates
    plan = Bernoulli(p).plan(rng, n_rounds)
    plan[::7] = False  # empty rounds
    quad = random_quadratics(rng, n_clients, dim, mu=1.0, L=10.0)
    logi = random_logistic(rng, n_clients, 10, dim, lam=0.1)
    return plan, (quad, logi)


@claim("focus.eq73_74.fl_equals_push_pull", ref="Alg. 1; Sec. 4.2.1 eqs. (13)-(14), (73)-(74)",
       kind="algorithm", expected="holds", result=ALG1, parts=("push_pull",),
       statement="FOCUS (Algorithm 1) is push-pull over the time-varying graph: x_{k+1} = "
                 "R_k(x_k - eta D_k y_{k+1}), y_{k+1} = C_k(y_k + grad f(x_k) - grad f(x_{k-1})), "
                 "with R(S_r) pulling and C(S_{r-1}) = R(S_{r-1})^T pushing at k = r tau.",
       quick=dict(n_clients=6, dim=3, n_rounds=40, taus=(1, 3, 5)),
       full=dict(n_clients=8, dim=5, n_rounds=200, taus=(1, 2, 3, 5, 10)))
def fl_equals_push_pull(*, rng, n_clients, dim, n_rounds, taus):
    """The FL form (compiled, telescoped client tracker) and the literal matrix recursion with
    explicit (N+1)x(N+1) R(S), C(S), D_k (schedule of spec section 1.8: C(S_{r-1}) and R(S_r) at
    t = 0, server step only; local steps at t >= 1) give the same server models
    x_r = x-bar_{r tau + 1}, on quadratics and logistic regression, for several tau. Expected to
    hold: verified by the spec (1.4e-16) and the audit; tolerance in the module docstring."""
    plan, problems = _instance(rng, n_clients, dim, n_rounds)
    worst = []
    for problem in problems:
        for tau in taus:
            step = 0.5 / (problem.L * n_clients)
            a = focus(problem, plan, step=step, local_steps=tau).x
            b = focus_matrix(problem, plan, step=step, local_steps=tau)
            worst.append(float(np.max(np.abs(a - b))))
    return Evidence(measured=max(worst), theoretical=0.0, relation="==",
                    tolerance=Tolerance.rounding(AGREEMENT, "spec criterion 1e-12 >> "
                                                 "R N tau eps |x| (summation order)"),
                    details={"per_problem_and_tau": worst, "taus": list(taus)})


@claim("focus.eq6_7.fedavg_graph_form", ref="Sec. 4.1 eqs. (6a)-(6c), (7); App. D (41)-(43)",
       kind="statement", expected="holds", result=EQ6_7, parts=("graph_form", "virtual_form"),
       statement="FedAvg (2a)-(2c) equals the decentralized recursion y_k = R_k x_k, y_k^+ = y_k - "
                 "eta D_k grad f(y_k), x_{k+1} = A_k y_k^+ (pull R(S_r), average A(S_r)), and the "
                 "virtual form with the rank-one W(S_r) = 1 w_S^T.",
       quick=dict(n_clients=6, dim=3, n_rounds=40, taus=(1, 3)),
       full=dict(n_clients=8, dim=5, n_rounds=200, taus=(1, 2, 5, 10)))
def fedavg_graph_form(*, rng, n_clients, dim, n_rounds, taus):
    """FedAvg's FL loop vs (6)-(7) with the explicit pull/average matrices and vs the virtual
    form (41)-(43), where every node steps and only round ends mix with 1 w_S^T (an empty
    round mixes with 1 e_0^T). Expected to hold (spec: 1.1e-16); same tolerance as above."""
    plan, problems = _instance(rng, n_clients, dim, n_rounds)
    worst = []
    for problem in problems:
        for tau in taus:
            step = 0.5 / problem.L
            a = fedavg(problem, plan, step=step, local_steps=tau).x
            worst.append(float(np.max(np.abs(a - fedavg_matrix(problem, plan, step=step,
                                                                local_steps=tau)))))
            worst.append(float(np.max(np.abs(a - fedavg_virtual(problem, plan, step=step,
                                                                 local_steps=tau)))))
    return Evidence(measured=max(worst), theoretical=0.0, relation="==",
                    tolerance=Tolerance.rounding(AGREEMENT, "spec criterion 1e-12 >> "
                                                 "R N tau eps |x| (summation order)"),
                    details={"max_abs_diffs": worst})
