r"""Algorithm 3 of FedALS (App. D): SCAFFOLD as printed, the result and its claim.

As printed: local step g - c_k + sum_k c_k; refresh c_k <- sum_k c_k - c_k + (theta_0 -
theta_tau)/(eta tau); the standard SCAFFOLD (option II of [KKM+20]) has the mean
c = (1/K) sum_k c_k and c_k <- c_k - c + (theta_0 - theta_tau)/(eta tau). The corrected
version is ``fedals.alg4.corrected_scaffold_exact`` at alpha = 1. Instances as in
:mod:`.alg4`.
"""

from __future__ import annotations

from flbounds.ledger import claim, result

from ._scaffold import FULL, QUICK, _evidence, inputs, strongly_convex_quadratics

ALG3 = result(
    "fedals.alg3", ref="Algorithm 3", title="SCAFFOLD",
    parts={"drift_correction": "lines 5 and 7: the control variates correct the client drift, "
                               "so with exact gradients the averaged model converges to the "
                               "global minimiser"},
    hypotheses=(inputs, strongly_convex_quadratics))


@claim("fedals.alg3.printed_scaffold_exact", ref="Alg. 3, lines 5, 7 (as printed)",
       kind="algorithm", expected="violated", result=ALG3, parts=("drift_correction",),
       statement="SCAFFOLD's control arithmetic as printed in Algorithm 3 (local step "
                 "g - c_k + sum_k c_k; refresh c_k <- sum_k c_k - c_k + drift/(eta P_g)), run "
                 "on the FedALS schedule, converges to the global minimiser.",
       quick=QUICK, full=FULL)
def printed_scaffold(*, rng, n_clients, alphas, n_steps, local_steps, step):
    r"""Algorithm 3 as printed (sum instead of mean and the flipped sign, spec 7.12); alpha
    = 1 is SCAFFOLD itself. Same deterministic instance and tolerance as the corrected claim.
    The iterates diverge (factor per period > 1, overflow in the longer runs; details).
    Expected ``violated``."""
    return _evidence("printed", dict(n_clients=n_clients, alphas=alphas, n_steps=n_steps,
                                     local_steps=local_steps, step=step))


@claim("fedals.alg3.corrected_scaffold_exact", ref="Alg. 3, lines 5, 7 (corrected), [KKM+20]",
       kind="algorithm", expected="holds", corrects="fedals.alg3.printed_scaffold_exact",
       result=ALG3, parts=("drift_correction",),
       statement="SCAFFOLD with the corrected control arithmetic (mean c = (1/K) sum_k c_k in "
                 "the local step, refresh c_k <- c_k - c + drift/(eta P_g)), run on the FedALS "
                 "schedule, converges to the global minimiser.",
       quick=QUICK, full=FULL)
def corrected_scaffold(*, rng, n_clients, alphas, n_steps, local_steps, step):
    r"""Algorithm 3 with both corrections (mean instead of sum, the sign of c_k - c), on the
    printed claim's deterministic instance and cells: the run of
    ``fedals.alg4.corrected_scaffold_exact`` (Algorithm 4 is Algorithm 3 per block; alpha = 1
    is SCAFFOLD itself). measured: the final error per (K, alpha) cell; theoretical 0;
    tolerance the derived float64 floor. Expected ``holds``."""
    return _evidence("scaffold", dict(n_clients=n_clients, alphas=alphas, n_steps=n_steps,
                                      local_steps=local_steps, step=step))
