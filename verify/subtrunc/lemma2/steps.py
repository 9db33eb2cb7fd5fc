r"""Lemma 2 of SubTrunc, proof steps (57)-(60): the consensus bound with Lemma 3 plugged in, the
per-step gradient error (58)-(59) and its sum over the local steps (60).

Same instance and local SGD paths as :mod:`verify.subtrunc.lemma2` (the result's home):
n = 20 heterogeneous least-squares clients, d = 5, sigma^2 = 1, eta = 1/(3 L E), the
boundary of eta L E <= 1/3.
Notation: :math:`w^{(i)}_\tau` the local iterates, :math:`\bar w_\tau` their mean,
:math:`u_\tau = \frac1n\sum_i\nabla f_i(w^{(i)}_\tau)`. Expectations over the noise are Monte
Carlo means over paths of (left side - right side) per path, compared with 0 within 4 SE;
(56), (57) and (59) read one shared run (:mod:`._proof_paths`).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim

from . import LEMMA2, lemma2_instance
from ._proof_paths import proof_step_diffs


def _tolerance(ses):
    """4 MC SE of the means of per-path differences."""
    return Tolerance.mc(ses, what="mean of (LHS - RHS) per path")


@claim("subtrunc.lemma2.proof_step_57", ref="Lemma 2 proof, eq. (57) (with Lemma 3)",
       kind="proof-step", expected="holds", result=LEMMA2, parts=("step57",),
       statement="sum_i E||w^(i)_tau - w_bar_tau||^2 <= (9 eta^2 tau^2/8) sum_i "
                 "(2||grad f_i(w_k)||^2 + sigma^2) for tau = 1..E.",
       quick=dict(n_paths=400, n_points=3, local_steps=5),
       full=dict(n_paths=2000, n_points=10, local_steps=10))
def proof_step_57(*, rng, n_paths, n_points, local_steps):
    """(56) with Lemma 3's bound on E||grad f_i(w^(i)_t)||^2 (spec: printed with w_{k,tau},
    read as the mean w_bar_tau). Measured: per start point and tau, the MC mean of
    (LHS - RHS); theoretical 0. Tolerance: 4 MC SE. The paths are those of (56)
    (:mod:`._proof_paths`), 2,000 per point at full (power argument there: with 20,000 the
    rows of (57) stayed at least 2,178 tolerances inside the bound, so more than 600 at
    2,000)."""
    prob, step, steps = proof_step_diffs(rng, n_points=n_points, n_paths=n_paths,
                                         local_steps=local_steps)
    means, ses = steps["57"]
    return Evidence(measured=means, theoretical=0.0, relation="<=", tolerance=_tolerance(ses),
                    instance=lemma2_instance(prob, step, local_steps),
                    details={"step": step, "L": prob.L, "local_steps": local_steps})


@claim("subtrunc.lemma2.proof_step_59", ref="Lemma 2 proof, eqs. (58)-(59)",
       kind="proof-step", expected="holds", result=LEMMA2, parts=("step59",),
       statement="E||grad f(w_k) - u_tau||^2 <= 2 eta^2 L^2 tau sum_{t<tau} E||u_t||^2 + "
                 "(9 eta^2 L^2 tau^2/(2n)) sum_i ||grad f_i(w_k)||^2 + eta^2 L^2 tau sigma^2 "
                 "(2/n + 9 tau/4), for tau = 0..E-1.",
       quick=dict(n_paths=400, n_points=3, local_steps=5),
       full=dict(n_paths=2000, n_points=10, local_steps=10))
def proof_step_59(*, rng, n_paths, n_points, local_steps):
    """(49) with (57) plugged in. The right side's E||u_t||^2 is taken per path (a sample of
    it), so per path (LHS - RHS) has the claimed sign in expectation. Measured: per start
    point and tau, the MC mean of (LHS - RHS); theoretical 0. Tolerance: 4 MC SE. The paths
    are those of (56) (:mod:`._proof_paths`), 2,000 per point at full (power argument there:
    with 20,000 the rows of (59) with tau >= 1 stayed at least 96,000 tolerances inside the
    bound, the tau = 0 rows are exactly 0)."""
    prob, step, steps = proof_step_diffs(rng, n_points=n_points, n_paths=n_paths,
                                         local_steps=local_steps)
    means, ses = steps["59"]
    return Evidence(measured=means, theoretical=0.0, relation="<=", tolerance=_tolerance(ses),
                    instance=lemma2_instance(prob, step, local_steps),
                    details={"step": step, "L": prob.L, "local_steps": local_steps})


@claim("subtrunc.lemma2.proof_step_60", ref="Lemma 2 proof, eq. (60)", kind="proof-step",
       expected="holds", result=LEMMA2, parts=("step60",),
       statement="Summing (59) over tau = 0..E-1 gives at most eta^2 L^2 E^2 sum_tau "
                 "E||u_tau||^2 + (9 eta^2 L^2 E^3/(2n)) sum_i ||grad f_i||^2 + "
                 "eta^2 L^2 E^2 (1/n + 3E/4) sigma^2: coefficient by coefficient, for every E.",
       quick=dict(max_local_steps=200, n_clients=(1, 2, 20, 1000)),
       full=dict(max_local_steps=5000, n_clients=(1, 2, 20, 1000, 10**6)))
def proof_step_60(*, rng, max_local_steps, n_clients):
    r"""Exact algebra (the common factor eta^2 L^2 dropped). Per coefficient, summed (59)
    against (60): the E||u_t||^2 term, sum_{tau} 2 tau 1{t < tau} <= E^2 (worst t = 0:
    E(E-1)); the gradient term, sum_tau 9 tau^2/(2n) = 3(E-1)E(2E-1)/(4n) <= 9E^3/(2n) (a
    factor-3 slack, spec); the noise term, sum_tau tau (2/n + 9 tau/4) <= E^2 (1/n + 3E/4).
    Measured: the largest ratio summed/printed over E = 1..max and the n given; theoretical
    1 (<=). Tolerance: rounding of sums of integers (exact in float64 at these sizes)."""
    E = np.arange(1, max_local_steps + 1, dtype=float)
    s1, s2 = E * (E - 1) / 2, (E - 1) * E * (2 * E - 1) / 6      # sum tau, sum tau^2
    ratios = [np.max(2 * s1 / E**2)]
    for n in n_clients:
        ratios.append(np.max((9 * s2 / (2 * n)) / (9 * E**3 / (2 * n))))
        ratios.append(np.max((2 * s1 / n + 9 * s2 / 4) / (E**2 * (1 / n + 3 * E / 4))))
    return Evidence(measured=np.array(ratios), theoretical=1.0, relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "integer sums, exact in float64"),
                    details={"max_local_steps": max_local_steps, "n_clients": list(n_clients),
                             "gradient_term_slack_at_max_E": float(E[-1] ** 3 / s2[-1])})
