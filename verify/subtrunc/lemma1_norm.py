r"""SubTrunc Lemma 1 under the norm reading of Assumption 3, ``||b_{k,tau}|| <= gamma``: the
exact witness where eq. (27) fails (part ``eq27_norm`` of :data:`verify.subtrunc.lemma1.LEMMA1`;
the squared reading, which the proof uses, is checked in :mod:`verify.subtrunc.lemma1`).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim

from .assumptions import gaussian_noise
from .lemma1 import LEMMA1, lemma1_rhs
from .quadratic_rounds import ClientQuadratics, local_moments, point_law, selected_round

#: the witness of :func:`norm_reading`: n = 3 clients, ||v|| = 33 (the smallest integer
#: above the threshold 32 at which eq. (27) under the norm reading starts to fail)
NORM_WITNESS = dict(n_clients=3, norm_v=33.0)
NORM_STEP = 1.0 / 3.0   # eta = 1/(3 L E) with L = E = 1: the step limit


def norm_family_exact(n_clients: int, norm_v, gamma) -> tuple[Fraction, Fraction]:
    r"""Exact (E f(w_{k+1}), eq. (27)'s right side) on the family of :func:`norm_witness`, as
    fractions: with :math:`s = \|v\|`, :math:`m = n - 1`, :math:`\eta = 1/3`, L = E = 1,

    .. math:: \text{lhs} = \frac{s^2}{2m} + \frac{s^2}{18}, \qquad
       \text{rhs} = \frac{s^2}{2m} + \frac{s^2}{12m} + \frac49\gamma .

    ``norm_v`` and ``gamma`` are converted exactly (``Fraction`` of a float is exact)."""
    s, gamma, m = Fraction(norm_v), Fraction(gamma), Fraction(n_clients - 1)
    start = s * s / (2 * m)
    return start + s * s / 18, start + s * s / (12 * m) + Fraction(4, 9) * gamma


def bias_norms(mom, selected, k: int) -> np.ndarray:
    r""":math:`\|b_\tau\|` for :math:`\tau < E` of a round without noise from one fixed subset
    ``selected`` (a 0/1 mask): then every :math:`\hat u^{(i)}_\tau` is deterministic and
    :math:`b_\tau = \sum_i (1_{i\in S}/k - 1/n)\nabla f_i(w^{(i)}_\tau)`, eq. (18)."""
    n = selected.size
    beta = np.asarray(selected, dtype=float) / k - 1.0 / n
    return np.linalg.norm(np.einsum("i,tia->ta", beta, mom.grad_means[:-1]), axis=-1)


def norm_gamma(norms) -> float:
    """The smallest gamma the norm reading admits for the round: max_tau ||b_tau||."""
    return float(np.max(norms))


def norm_witness(n_clients: int, norm_v: float) -> dict:
    r"""One round of Algorithm 1 on the family where eq. (27) fails under the norm reading of
    Assumption 3, in exact second moments (:mod:`verify.subtrunc.quadratic_rounds`).

    The family: d = 1, n clients :math:`f_i(w) = \frac12 (w - c_i)^2` (identity Hessians, so
    L = 1 and :math:`f_i \ge 0`), no noise (:math:`\sigma^2 = 0`), E = 1 local step,
    :math:`\eta = 1/3 = 1/(3LE)`, :math:`w_k = 0`, and :math:`c_i = -g_i` so that the
    gradients at :math:`w_k` are :math:`g_0 = v`, :math:`g_i = -v/(n-1)` for i >= 1; they
    average to 0, so :math:`\nabla f(w_k) = 0`. The server selects client 0 only
    (:math:`\kappa = 1`), so :math:`b_0 = v - 0 = v` and :math:`w_{k+1} = -\eta v`.

    Derivation (:func:`norm_family_exact`), with :math:`s = \|v\|` and n = 3: f is quadratic
    with Hessian 1 and a stationary point at :math:`w_k`, so :math:`f(w_{k+1}) = f(w_k) +
    \eta^2 s^2/2 = s^2/4 + s^2/18 = 11 s^2/36`. On the right of (27) the descent term is 0,
    the noise term is 0, :math:`\eta^2LE^2\cdot\frac{9\eta LE}4 = \frac1{12}` times
    :math:`\frac1n\sum_i\|g_i\|^2 = s^2/2`, and :math:`\eta(1+\eta LE)E = 4/9`: rhs =
    :math:`7s^2/24 + 4\gamma/9`. The norm reading admits :math:`\gamma = \|b_0\| = s` at the
    least, so lhs/rhs = :math:`22s/(21s + 32)`: above 1 exactly when s > 32, and tending to
    **22/21** as s grows (the bias term is linear in s, the rest quadratic). The squared
    reading's :math:`\gamma = E\|b_0\|^2 = s^2` gives 22/53 ~ 0.415 at every s. n = 3 is
    the fewest clients: for general n the limit is :math:`2(n + 8)/21` (n = 2: 20/21 < 1).

    Returns the exact round (``lhs``, ``bias_sq`` per tau), ``bias_norm`` (max_tau
    ||b_tau||), ``gamma`` (:func:`norm_gamma`), eq. (27)'s ``rhs`` at that gamma, the
    ``instance`` the hypotheses read, and ``scale`` (the largest O(s^2) quantity)."""
    if int(n_clients) != n_clients or n_clients < 2:
        raise ValueError(f"n_clients must be an integer >= 2, got {n_clients!r}")
    if not np.isfinite(norm_v) or norm_v <= 0:
        raise ValueError(f"norm_v must be a finite positive number, got {norm_v!r}")
    n = int(n_clients)
    v = np.array([float(norm_v)])
    grads = np.vstack([v] + [-v / (n - 1)] * (n - 1))
    w = np.zeros(1)
    prob = ClientQuadratics(np.ones((n, 1, 1)), w - grads)
    mom = local_moments(prob, w, step=NORM_STEP, local_steps=1, noise_covs=np.zeros((n, 1, 1)))
    pi, Pi = point_law([0], n)
    lhs, bias_sq = selected_round(prob, mom, pi, Pi, 1, 0.0)
    norms = bias_norms(mom, pi, 1)
    gamma = norm_gamma(norms)
    rhs = lemma1_rhs(prob, w, local_steps=1, step=NORM_STEP, sigma2=0.0, gamma=gamma)
    instance = dict(problem=prob, L=1.0, step=NORM_STEP, local_steps=1,
                    bias_norm=float(norms.max()), gamma=gamma, **gaussian_noise(0.0))
    return dict(lhs=lhs, rhs=float(rhs), bias_sq=bias_sq, bias_norm=float(norms.max()),
                gamma=gamma, instance=instance, scale=float(norm_v) ** 2)


@claim("subtrunc.lemma1.norm_reading", ref="Lemma 1, eq. (27), with Assumption 3 read as "
       "||b_{k,tau}|| <= gamma", kind="statement", expected="violated", result=LEMMA1,
       parts=("eq27_norm",),
       statement="With eta L E <= 1/3 and Assumption 3 read as a bound on the norm, "
                 "||b_{k,tau}|| <= gamma, one round satisfies eq. (27). (The printed "
                 "'b_{k,tau} <= gamma' is ambiguous; the reading eq. (33) uses, "
                 "E||b_{k,tau}||^2 <= gamma, holds: subtrunc.lemma1.one_round.)",
       quick=NORM_WITNESS, full=NORM_WITNESS)
def norm_reading(*, rng, n_clients, norm_v):
    r"""A deterministic counterexample to eq. (27) under the norm reading of Assumption 3
    (:func:`norm_witness` derives it): n = 3 clients, d = 1, identity Hessians, no noise,
    E = 1, :math:`\eta = 1/3` (the step limit), client 0 alone selected, gradients at
    :math:`w_k` equal to v, -v/2, -v/2, and gamma = max_tau ||b_tau|| = ||v||, the smallest
    gamma the reading admits. Every hypothesis of the part is evaluated on the instance and
    true (A1 with L = 1, A2, A3_norm, the noise with sigma^2 = 0, eta L E = 1/3).

    lhs/rhs = 22 s/(21 s + 32) with s = ||v||; ||v|| = 33 is the smallest integer past the
    threshold 32, where the ratio is 726/725 (lhs 332.75 against rhs 332.2917, excess 0.458),
    about 10^10 times the rounding tolerance; larger ||v|| only moves the ratio towards 22/21
    (1.017 at 50). Measured: the round's exact E f(w_{k+1}) (closed-form moments in float64)
    against eq. (27)'s right side. Tolerance: 64 eps s^2, a bound on the rounding of each
    side (fewer than 16 float64 operations on terms of size at most s^2, a few ulps each).
    Guard: the float round must agree with the exact rational closed form
    (:func:`norm_family_exact`) of its left side, and ||b_tau||^2 with the round's exact
    E||b_tau||^2, to that tolerance; else the claim stops with an error instead of judging.
    Expected **violated**; the squared reading on the same instance gives 22/53 (details)."""
    out = norm_witness(n_clients, norm_v)
    tol = 64 * np.finfo(float).eps * out["scale"]
    exact_lhs, exact_rhs = norm_family_exact(n_clients, norm_v, out["gamma"])
    gaps = {"lhs_vs_closed_form": abs(out["lhs"] - float(exact_lhs)),
            "norm_sq_vs_second_moment": abs(out["bias_norm"] ** 2 - float(out["bias_sq"].max()))}
    if max(gaps.values()) > tol:
        raise RuntimeError(f"norm_reading: the exact round disagrees with its closed form "
                           f"beyond rounding ({gaps}, tolerance {tol:.3g})")
    squared = norm_family_exact(n_clients, norm_v, out["bias_sq"].max())
    limit = Fraction(2 * (n_clients + 8), 21)
    m = n_clients - 1      # ratio > 1 iff s^2 (1/18 - 1/(12 m)) > 4 s/9, i.e. s > 16m/(2m-3)
    threshold = float(Fraction(16 * m, 2 * m - 3)) if 2 * m > 3 else None
    at50 = norm_family_exact(n_clients, 50.0, 50.0)
    return Evidence(measured=out["lhs"], theoretical=out["rhs"], relation="<=",
                    instance=out["instance"],
                    tolerance=Tolerance.rounding(tol, "64 eps ||v||^2: each side sums fewer "
                                                      "than 16 float64 terms of size <= "
                                                      "||v||^2"),
                    details={"ratio": out["lhs"] / out["rhs"],
                             "ratio_exact": str(exact_lhs / exact_rhs),
                             "ratio_limit": str(limit), "ratio_limit_value": float(limit),
                             "threshold_norm_v": threshold,
                             "ratio_at_norm_v_50": float(at50[0] / at50[1]),
                             "ratio_squared_reading": float(squared[0] / squared[1]),
                             "gamma": out["gamma"], "bias_norm": out["bias_norm"],
                             "rounding_gaps": gaps,
                             "witness": {"n": n_clients, "d": 1, "hessians": "identity",
                                         "w_k": 0.0, "grads_at_w_k": [
                                             float(norm_v), *[-float(norm_v) / (n_clients - 1)]
                                             * (n_clients - 1)],
                                         "selected": [0], "E": 1, "eta": "1/3",
                                         "sigma2": 0.0, "gamma": out["gamma"]}})
