r"""[000]'s printed bounds as functions of their constants (``flbounds bound``).

Each calls the closed form the SAFARI claims use (``verify.safari.closed_forms``,
``flbounds.pac``), so the claims and the calculator share one formula.
"""

from __future__ import annotations

from flbounds.ledger import bound, integer, nonnegative, positive, probability

_NOISE = (nonnegative("sigma2", "client gradient noise sigma^2"),
          nonnegative("sigma_s2", "server gradient noise sigma_s^2"),
          nonnegative("sigma_G2", "heterogeneity sigma_G^2"))


def _mu_le_L(*, mu, L, **_):
    if mu > L:
        raise ValueError(f"L must be >= mu, got L={L}, mu={mu}")


def _check_m(*, n_clients, n_participating, **_):
    if not n_participating < n_clients:
        raise ValueError(f"n_participating must be < n_clients, got {n_participating} >= "
                         f"{n_clients}")


@bound("safari.thm1", ref="Thm 1 (not PAC-learnable), Appendix A",
       constants=(integer("n_clients", "M clients"),
                  integer("n_participating", "m participating (m < M)", low=0),
                  integer("n_samples", "n samples per client")),
       check=_check_m, quantity="P[participating data hold only copies of x_1]")
def thm1(*, n_clients, n_participating, n_samples):
    """Exact binomial probability of the indistinguishability event."""
    from flbounds.pac import impossibility_event_probability
    return impossibility_event_probability(n_clients, n_participating, n_samples)


def _thm4_steps(*, L, local_steps, **_):
    """eta_c <= 1/(4 sqrt30 L K) with eta_c = 2 eta_s/K, i.e. eta_s <= 1/(8 sqrt30 L)."""
    return {"eta_c = 2 eta_s/K <= 1/(4 sqrt30 L K)": 1.0 / (8 * 30**0.5 * L)}


@bound("safari.thm4", ref="Thm 4 (non-convex), as printed",
       constants=(positive("L"), integer("local_steps", "K local steps"),
                  integer("n_sampled", "m sampled clients"), probability("q", "FL-round prob."),
                  integer("R", "rounds"), nonnegative("delta_f", "F(x_0) - F*")) + _NOISE,
       quantity="(1/R) sum_r E||grad F(x_r)||^2",
       steps=_thm4_steps)
def thm4(*, L, local_steps, n_sampled, q, R, delta_f, sigma2, sigma_s2, sigma_G2, step):
    """2 Delta F/(R eta_s) + delta (``closed_forms.thm4_rhs``)."""
    from .closed_forms import thm4_rhs
    return thm4_rhs(delta_f=delta_f, n_rounds=R, step_server=step, q=q, L=L, sigma2=sigma2,
                    sigma_s2=sigma_s2, sigma_G2=sigma_G2, local_steps=local_steps,
                    n_sampled=n_sampled)


@bound("safari.thm5", ref="Thm 5 (strongly convex), as printed",
       constants=(positive("mu"), positive("L"), integer("local_steps"), integer("n_sampled"),
                  probability("q"), integer("R"), nonnegative("dist0", "||x_0 - x*||^2"))
       + _NOISE, check=_mu_le_L, quantity="E||x_R - x*||^2",
       steps=lambda mu, L, **_: {"2/(L+mu)": 2.0 / (L + mu)})
def thm5(*, mu, L, local_steps, n_sampled, q, R, dist0, sigma2, sigma_s2, sigma_G2, step):
    """(1 - eta_bar)^R ||x_0 - x*||^2 + delta_bar (``thm5_delta_bar``)."""
    from .closed_forms import thm5_delta_bar
    eta_c = 4 * L * step / (local_steps * (L + mu))
    eta_bar = eta_c * local_steps * mu / 2
    floor = thm5_delta_bar(q=q, step_client=eta_c, step_server=step, local_steps=local_steps,
                           n_sampled=n_sampled, L=L, mu=mu, sigma2=sigma2, sigma_s2=sigma_s2,
                           sigma_G2=sigma_G2)
    return (1 - eta_bar) ** R * dist0 + floor
