r"""Algorithm 1 of SAFARI ([000]) and Remark 5: the result (the pseudocode's two round types)
and the special cases q = 1 (FedAvg) and q = 0 (server SGD).

The references below are written independently of :mod:`flbounds.algorithms.safari`, from the
pseudocode: FedAvg with K local SGD steps and plain averaging, and centralized SGD.
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms.safari import safari, safari_plan
from flbounds.ledger import Evidence, Tolerance, claim, result

from .closed_forms import ClientQuadratics

ALG1 = result(
    "safari.alg1", ref="Algorithm 1", title="SAFARI: a client round with probability q, else "
    "a server SGD step",
    parts={"client_round": "lines 3-9: with probability q, m sampled clients run K local SGD "
                           "steps from x_r at eta_c and the server averages their models",
           "server_round": "line 11: otherwise one server SGD step x_{r+1} = x_r - eta_s "
                           "grad F(x_r, xi_r) on a minibatch of the server data"})

REMARK5 = result(
    "safari.remark5", ref="Remark 5", title="SAFARI contains FedAvg and server-only SGD",
    parts={"special_cases": "q = 1 is FedAvg and q = 0 is SGD on the server data",
           "classic_bounds": ("in those cases Theorems 4-5 recover the classic bounds, the "
                              "sigma_G terms cancelled",
                              "a reading of the bounds at q in {0, 1}; the sigma_G = 0 claims "
                              "of Theorems 4-5 (homogeneous, tightness) evaluate them there")})


def _fedavg_reference(A, b, x0, clients, noise, step):
    x = x0.copy()
    out = [x.copy()]
    for r in range(clients.shape[0]):
        finals = np.zeros_like(x)
        for c in range(clients.shape[1]):
            i = clients[r, c]
            y = x.copy()
            for k in range(noise.shape[2]):
                y = y - step * ((A[i] @ y - b[i]) + noise[r, c, k])
            finals = finals + y
        x = finals / clients.shape[1]
        out.append(x.copy())
    return np.array(out)


def _sgd_reference(A, b, x0, noise, step):
    x, out = x0.copy(), [x0.copy()]
    for r in range(noise.shape[0]):
        x = x - step * ((A.mean(axis=0) @ x - b.mean(axis=0)) + noise[r])
        out.append(x.copy())
    return np.array(out)


@claim("safari.alg1.special_cases", ref="Alg. 1; Remark 5", kind="algorithm", expected="holds",
       parts=("safari.alg1:client_round", "safari.alg1:server_round",
              "safari.remark5:special_cases"),
       statement="SAFARI with q = 1 is FedAvg (K local SGD steps, plain averaging) and with "
                 "q = 0 is centralized SGD, iterate for iterate under shared random streams.",
       quick=dict(n_rounds=50, n_instances=3), full=dict(n_rounds=500, n_instances=20))
def special_cases(*, rng, n_rounds, n_instances):
    """Same plan (clients, noise) fed to SAFARI and to the references; the numba path and the
    references order floating-point operations differently, so the comparison allows
    rounding: 1e-12 relative to the iterate scale."""
    worst = []
    for child in rng.spawn(n_instances):
        n, d = int(child.integers(3, 8)), int(child.integers(1, 4))
        B = child.normal(size=(n, d, d))
        prob = ClientQuadratics(np.einsum("nij,nkj->nik", B, B) / d + 0.5 * np.eye(d),
                                child.normal(size=(n, d)))
        step_c, step_s = 0.5 / (prob.L * 4), 1.0 / prob.L
        x0 = child.normal(size=d)
        for q in (1.0, 0.0):
            plan = safari_plan(child, n_rounds=n_rounds, q=q, eligible=np.arange(n),
                               n_sampled=int(child.integers(1, n + 1)), local_steps=4, dim=d,
                               client_noise_std=0.3, server_noise_std=0.3)
            got = safari(prob, plan, step_client=step_c, step_server=step_s, x0=x0).x
            ref = (_fedavg_reference(prob.A, prob.b, x0, plan.clients, plan.client_noise,
                                     step_c) if q == 1.0 else
                   _sgd_reference(prob.A, prob.b, x0, plan.server_noise, step_s))
            worst.append(float(np.max(np.abs(got - ref)) / max(1.0, np.max(np.abs(ref)))))
    return Evidence(measured=max(worst), theoretical=0.0, relation="==",
                    tolerance=Tolerance.rounding(1e-12, "different summation order, "
                                                 "O(R K d eps) relative"),
                    details={"per_run": worst})
