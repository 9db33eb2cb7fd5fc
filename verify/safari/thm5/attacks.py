r"""Attack surface of Theorem 5's delta_bar ([000]) against the exact stationary error of
SAFARI with identical clients (closed forms of :mod:`verify.safari.closed_forms`)."""

from __future__ import annotations

from flbounds.falsify import Box, Integers, attack_surface

from ..closed_forms import homogeneous_stationary_error, thm5_delta_bar

CLOSED = "rounding: ratio of closed forms, relative error < 1e-13; 1e-12 as in the claim"


@attack_surface("safari.thm5.delta_bar_dominates_stationary",
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
