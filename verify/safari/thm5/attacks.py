r"""Attack surfaces of Theorem 5 (SAFARI): its delta_bar against the exact stationary error of
SAFARI with identical clients (closed forms of :mod:`verify.safari.closed_forms`), and its
finite-R bound against the exact E||x_R - x*||^2 with an anisotropic Hessian (L >= mu), in
50-digit arithmetic: as printed (expected violated, :mod:`.large_step`) and under the proof's
hypotheses (part ``bound_corrected``, expected holds)."""

from __future__ import annotations

import mpmath as mp
import numpy as np

from flbounds.falsify import Box, Integers, attack_surface

from ..assumptions import optimisation_instance
from ..closed_forms import ClientQuadratics, homogeneous_stationary_error, thm5_delta_bar
from . import thm5

CLOSED = "rounding: ratio of closed forms, relative error < 1e-13; 1e-12 as in the claim"


@attack_surface("safari.thm5.delta_bar_dominates_stationary",
                # full budget: seeds 0 and 1 at 5000 evaluations reach 0.9090909091 / 0.9090909091,
                # within 1e-3 of it from evaluation 236 / 221; 500 >= twice that
                budget={"quick": 300, "full": 500},
                space={"q": Box(0, 1), "c": Box(1e-4, 0.9, log=True), "K": Integers(1, 50),
                       "m": Integers(1, 10), "mu": Box(0.01, 10, log=True)},
                tolerance=1e-12, tolerance_why=CLOSED,
                fixed=[{"q": 0.5, "c": 0.1, "K": 5, "m": 1, "mu": 1.0}],
                note="identical clients (L = mu), eta_s = c/mu, eta_c = 4 L eta_s/(K(L+mu))")
def delta_bar(*, q, c, K, m, mu):
    """Exact stationary error over Theorem 5's delta_bar."""
    eta_s = c / mu
    eta_c = 4 * mu * eta_s / (K * 2 * mu)
    exact = homogeneous_stationary_error(q=q, step_client=eta_c, step_server=eta_s,
                                         local_steps=K, n_sampled=m, mu=mu, sigma2=1.0,
                                         sigma_s2=1.0)
    db = thm5_delta_bar(q=q, step_client=eta_c, step_server=eta_s, local_steps=K,
                        n_sampled=m, L=mu, mu=mu, sigma2=1.0, sigma_s2=1.0, sigma_G2=0.0)
    return exact / db


def exact_final_error(*, L, mu, q, eta_s, K, m, R, sigma2, sigma_s2, e0):
    r"""Exact :math:`E\|x_R - x^*\|^2` of SAFARI with identical clients f_i = x^T diag(L, mu)
    x/2 - b^T x (d = 2), isotropic noise (:math:`E\|\xi\|^2` = sigma2 / sigma_s2) and
    Theorem 5's coupling :math:`\eta_c = 4L\eta_s/(K(L+\mu))`, from :math:`e_0 = x_0 - x^*`.

    Per coordinate with curvature a the error obeys the random affine recursion of
    :func:`verify.safari.closed_forms.homogeneous_stationary_error`, so its second moment
    :math:`M_{r+1} = [q a_c^2 + (1-q) a_s^2] M_r + q\eta_c^2\sigma^2 S/(2m) +
    (1-q)\eta_s^2\sigma_s^2/2` is exact (the round type is independent of the past)."""
    eta_c = 4 * L * eta_s / (K * (L + mu))
    total = 0  # int: keeps Fraction and mpf arithmetic exact
    for a, e in zip((L, mu), e0, strict=True):
        a_c, a_s = (1 - eta_c * a) ** K, 1 - eta_s * a
        S = sum((1 - eta_c * a) ** (2 * j) for j in range(K))
        contraction = q * a_c ** 2 + (1 - q) * a_s ** 2
        inject = q * eta_c ** 2 * sigma2 / 2 * S / m + (1 - q) * eta_s ** 2 * sigma_s2 / 2
        # M_R = c^R M_0 + inject (1 - c^R)/(1 - c) with c the contraction
        power = contraction ** R
        geometric = R if contraction == 1 else (1 - power) / (1 - contraction)
        total += power * e * e + inject * geometric
    return total


def _anisotropic_instance(*, mu, q, K, m, sigma2, sigma_s2, **p):
    """Theorem 5's hypotheses (part ``bound_linear``) at a search point: m identical clients
    with Hessian diag(L, mu), the coupling eta_c = 4 L eta_s/(K(L + mu)) and the round that
    is worst for the linear q-condition. With identical clients G_4 = F(x) - F* >=
    G_3/(2L) at every x (equality along the L-direction), N falls as G_4 grows and q N <=
    (1 - q) D is homogeneous in the scale, so G_3 = 1, G_4 = 1/(2L) meets it iff every
    round of every trajectory does. The printed closed form is negative on identical
    clients (safari.thm5.printed_closed_form_homogeneous), so the attacked claim and its
    attack use the proof's reading."""
    pt = _point(dict(p, mu=mu))
    L, eta_s = pt["L"], pt["eta_s"]
    prob = ClientQuadratics(np.tile(np.diag([L, mu]), (m, 1, 1)), np.zeros((m, 2)))
    eta_c = 4 * L * eta_s / (K * (L + mu))
    return optimisation_instance(prob, sigma_G2=0.0, noise_var=sigma2, noise_var_s=sigma_s2,
                                 mu=mu, step_server=eta_s, step_client=eta_c, local_steps=K,
                                 q=q, G3=np.ones(1), G4=np.full(1, 1 / (2 * L)),
                                 eta_bar=eta_c * K * mu / 2)


#: Both sides of the anisotropic attacks in 50-digit arithmetic from the point's binary
#: floats: a float64 evaluation is not accurate to 1e-12 over the whole space ((1 - eta_bar)
#: near 0 and the contraction near 1 cancel; raised to R <= 10^4 that amplifies a unit
#: rounding by up to R/(1 - x), e.g. 1e-9 relative at R = 1, eta_bar = 1 - 1e-7).
DIGITS = 50
EXTENDED = ("rounding: both sides in 50-digit arithmetic from the point's binary floats; "
            "cancellation (1 - eta_bar >= 2^-53 unless exactly 0) and powers R <= 10^4 "
            "amplify the 1e-50 unit rounding to < 1e-28 relative; 1e-12 as in the claims")

#: The shrunk counterexample to Theorem 5 as printed (safari.thm5.large_step_printed):
#: L = mu = 10, eta_s = 2/(L + mu) = 1/10, K = 1 (eta_c = 1/5), q = 1/100, one round.
WITNESS = {"mu": 10.0, "kappa": 1.0, "q": 0.01, "c": 1.0, "K": 1, "m": 1, "R": 1,
           "sigma2": 1e-4, "sigma_s2": 1.0, "e0": [1.0, 0.0]}

SPACE = {"mu": Box(0.01, 10, log=True), "kappa": Box(1, 20, log=True),
         "q": Box(0.01, 1), "c": Box(1e-4, 1, log=True), "K": Integers(1, 10),
         "m": Integers(1, 16), "R": Integers(1, 10_000),
         "sigma2": Box(1e-4, 10, log=True), "sigma_s2": Box(1e-4, 10, log=True),
         "e0": Box(-5, 5, shape=2)}


def sides(*, mu, kappa, q, c, K, m, R, sigma2, sigma_s2, e0, number=None):
    """(exact E||x_R - x*||^2, Theorem 5's printed bound) at a search point, in ``number``
    arithmetic (default: 50-digit mpmath floats made from the point's binary floats;
    ``fractions.Fraction`` for exact rationals). L and eta_s are the point's own floats
    (:func:`_point`), the values the hypotheses read."""
    p = _point(dict(mu=mu, kappa=kappa, q=q, c=c, K=K, m=m))
    num = number or mp.mpf
    L, mu_, eta_s = num(p["L"]), num(mu), num(p["eta_s"])
    q_, s2, ss2 = num(q), num(sigma2), num(sigma_s2)
    e = [num(float(x)) for x in e0]
    exact = exact_final_error(L=L, mu=mu_, q=q_, eta_s=eta_s, K=K, m=m, R=R, sigma2=s2,
                              sigma_s2=ss2, e0=e)
    bound = thm5(mu=mu_, L=L, local_steps=K, n_sampled=m, q=q_, R=R,
                 dist0=e[0] * e[0] + e[1] * e[1], sigma2=s2, sigma_s2=ss2,
                 sigma_G2=num(0), step=eta_s)
    return exact, bound


def _ratio(**point):
    with mp.workdps(DIGITS):
        exact, bound = sides(**point)
        return float(exact / bound)


@attack_surface("safari.thm5.anisotropic_homogeneous_bound", space=SPACE,
                # full budget: seeds 0 and 1 at 5000 evaluations reach 2.0096098 / 2.0096098,
                # within 1e-3 of it from evaluation 1 / 1; 200 >= twice that
                budget={"quick": 200, "full": 200},
                instance=lambda **p: _anisotropic_instance(**p),
                tolerance=1e-12, tolerance_why=EXTENDED, expected="violated",
                fixed=[{"mu": 0.5, "kappa": 4.0, "q": 0.2, "c": 0.025, "K": 5, "m": 3,
                        "R": 1500, "sigma2": 0.01, "sigma_s2": 0.01, "e0": [0.0, 3.0]},
                       WITNESS],
                note="identical clients, Hessian diag(L, mu), L = kappa mu, eta_s = c "
                     "2/(L + mu), exact E||x_R - x*||^2; corners: q down to 0.01, K up to 10, "
                     "m up to 16, eta_s up to its limit 2/(L + mu), R from 1. Expected "
                     "violated: the printed statement fails at eta_s = 2/(L + mu) with mu > 2 "
                     "(fixed point: the shrunk witness of safari.thm5.large_step_printed, "
                     "ratio 2.01); the claim's own run instances (L = 2, mu = 1/2) hold")
def anisotropic_bound(*, mu, kappa, q, c, K, m, R, sigma2, sigma_s2, e0):
    """Exact E||x_R - x*||^2 over Theorem 5's printed bound at the same point (50 digits)."""
    return _ratio(mu=mu, kappa=kappa, q=q, c=c, K=K, m=m, R=R, sigma2=sigma2,
                  sigma_s2=sigma_s2, e0=e0)


@attack_surface("safari.thm5.large_step_corrected", space=SPACE,
                # full budget: seeds 0 and 1 at 5000 evaluations reach 0.9999985579 / 0.9999985579,
                # within 1e-3 of it from evaluation 52 / 91; 250 >= twice that
                budget={"quick": 250, "full": 250},
                instance=lambda **p: _anisotropic_instance(**p),
                tolerance=1e-12, tolerance_why=EXTENDED,
                fixed=lambda: [corrected_edge()],
                note="the space of safari.thm5.anisotropic_homogeneous_bound, points admitted "
                     "by the proof's hypotheses (part bound_corrected: the q-condition with "
                     "the constants (81)-(82) give, eta_c <= 1/(8LK))")
def corrected_bound(*, mu, kappa, q, c, K, m, R, sigma2, sigma_s2, e0):
    """Exact E||x_R - x*||^2 over the same bound, on points of part ``bound_corrected``."""
    return _ratio(mu=mu, kappa=kappa, q=q, c=c, K=K, m=m, R=R, sigma2=sigma2,
                  sigma_s2=sigma_s2, e0=e0)


def corrected_edge() -> dict:
    """The witness family at the corrected hypotheses' edge: L = mu = 10, K = 1, eta_c at
    the drift limit 1/(8LK) (c = 1/16 of the step limit), q the largest the proof's
    q-condition admits (rounded down to 6 digits)."""
    point = dict(WITNESS, c=1 / 16)
    inst = _anisotropic_instance(**point)
    L, mu, eb = inst["L"], inst["mu"], inst["eta_bar"]
    n = (16 * eb / mu ** 2 * (1 + 30 * L * eb / mu * (1 + 2 * L * eb / mu))
         - 4 / mu * float(inst["G4"][0]))
    d = 1 / (L * mu) - (L + mu) ** 2 * eb / (4 * L ** 2 * mu ** 2)
    q_max = 1.0 if n <= 0 else d / (n + d)
    return dict(point, q=max(0.01, np.floor(q_max * 1e6) / 1e6))


def _point(p):
    """(L, eta_s) of a search point: L = kappa mu, eta_s = c 2/(L + mu)."""
    L = p["kappa"] * p["mu"]
    return dict(p, L=L, eta_s=p["c"] * 2 / (L + p["mu"]))
