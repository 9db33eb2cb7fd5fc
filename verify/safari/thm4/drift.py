r"""The local-drift lemma of Theorem 4's proof (SAFARI, App. A; Yang et al. 2021b, Lemma 2):
exact expectations on quadratic federations (part ``drift`` of :mod:`verify.safari.thm4`)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim

from ..assumptions import heterogeneity, optimisation_instance
from ..closed_forms import ClientQuadratics, drift_bound, drift_terms, exact_drifts
from ..instances import two_group_problem
from . import THM4


@claim("safari.lemma_drift.bound", ref="Proof of Thm 4 (local-drift lemma)", kind="proof-step",
       expected="holds", result=THM4, parts=("drift",),
       statement="For eta_c <= 1/(8LK): E||x_r - x^i_{r,k}||^2 <= 5K eta_c^2 (sigma^2 + "
                 "6K sigma_G^2) + 30 K^2 eta_c^2 ||grad F(x_r)||^2 for all i, k <= K.",
       quick=dict(n_instances=20, n_points=20), full=dict(n_instances=300, n_points=100))
def drift_lemma(*, rng, n_instances, n_points):
    """Exact expectations (affine local SGD, isotropic Gaussian noise), no Monte Carlo: on
    random shared-Hessian quadratics (so sigma_G^2 is finite and exact) and the two-group
    instance, at random points x_r, every client, every k <= K, at eta_c = 1/(8LK). Measured
    the largest ratio exact/bound (bound > 0 since sigma^2 > 0); rounding tolerance 1e-12."""
    worst, instances = 0.0, []
    problems = [two_group_problem()]
    for _ in range(n_instances):
        d, n = int(rng.integers(1, 5)), int(rng.integers(2, 8))
        B = rng.normal(size=(d, d))
        A = B @ B.T / d + 0.1 * np.eye(d)
        problems.append(ClientQuadratics(np.broadcast_to(A, (n, d, d)).copy(),
                                         rng.normal(size=(n, d)) * rng.uniform(0.1, 3)))
    for prob in problems:
        K = int(rng.integers(1, 11))
        eta_c, sigma2, sG2 = 1 / (8 * prob.L * K), float(rng.uniform(0.01, 2)), heterogeneity(prob)
        instances.append(optimisation_instance(prob, sigma_G2=sG2, noise_var=sigma2,
                                               noise_var_s=0.0, step_client=eta_c,
                                               local_steps=K))
        # every k <= K of a client in one pass (exact_drifts: exact_drift's values, bit for bit)
        terms = [drift_terms(prob.A[i], step_client=eta_c, local_steps=K)
                 for i in range(prob.n_clients)]
        for x in rng.normal(size=(n_points, prob.dim)) * 3:
            grads = prob.client_gradients(np.tile(x, (prob.n_clients, 1)))
            bound = drift_bound(step_client=eta_c, local_steps=K, sigma2=sigma2, sigma_G2=sG2,
                                grad_norm2=float(np.sum(prob.gradient(x) ** 2)))
            for i in range(prob.n_clients):
                for value in exact_drifts(terms[i], grads[i], step_client=eta_c, sigma2=sigma2):
                    worst = max(worst, value / bound)
    return Evidence(measured=worst, theoretical=1.0, relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "ratio of exact closed forms"),
                    details={"n_problems": len(problems)}, instance=instances)


