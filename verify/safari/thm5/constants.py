r"""Theorem 5's printed q-condition constants (SAFARI, App. A) re-derived by substitution: exact
symbolic algebra (sympy) at a rational point (L, mu), the instance the ledger reads."""

from __future__ import annotations

import sympy as sp

from flbounds.ledger import Evidence, Tolerance, claim

from . import THM5

EXACT = Tolerance.exact("rational arithmetic in sympy")


@claim("safari.thm5.q_condition_constants", ref="Thm 5 and its proof (App. A)",
       kind="proof-step", expected="violated", result=THM5, parts=("q_constants",),
       statement="Substituting eta_c K = 2 eta_bar / mu and eta_s = eta_bar (L+mu)/(2 L mu) into "
                 "the proof's per-round terms gives the printed q-condition coefficients "
                 "4 eta_bar/mu^2 (on G_3) and 1/(L+mu) (server term).",
       quick=dict(L=2, mu_num=1, mu_den=2))
def q_condition_constants(*, rng, L, mu_num, mu_den):
    """Client round: 4 eta_c^2 K^2 [1 + 15 eta_c K L (1 + eta_c K L)] G_3 - 2 eta_c K G_4;
    server round: eta_s (eta_s - 2/(L+mu)) G_3. Dividing by eta_bar (the normalisation under
    which the G_4 term becomes the printed -(4/mu) G_4, checked: ratio 1) gives
    16 eta_bar/mu^2 [1 + 30 L eta_bar/mu (1 + 2 L eta_bar/mu)] on G_3 (printed 4 eta_bar/mu^2:
    ratio 4) and (L+mu)^2 eta_bar/(4 L^2 mu^2) - 1/(L mu) (printed 1/(L+mu): ratio
    (L+mu)/(L mu) = 2.5 at L = 2, mu = 1/2). Spec 7.A.15. Measured: derived/printed for the
    three coefficients, expected [1, 1, 1] if the print were right. The ratios hold for
    every eta_bar (symbolic) and every admissible (L, mu); the instance the hypotheses read
    is an FL system meeting all of Theorem 5's but the q-condition the claim questions:
    six identical clients with Hessian diag(2, 1/2) (sigma_G = 0), the noise of the runs,
    eta_s = 0.01 <= 2/(L + mu), K = 5, eta_c from the coupling. Smallest: one point (L, mu)
    with L != mu fixes the server ratio (L + mu)/(L mu) != 1; the G_3 ratio is 4 at any."""
    eb = sp.symbols("eta_bar", positive=True)
    L, mu = sp.Integer(L), sp.Rational(mu_num, mu_den)
    ecK = 2 * eb / mu                               # eta_c K
    eta_s = eb * (L + mu) / (2 * L * mu)
    g3_client = sp.expand(4 * ecK ** 2 * (1 + 15 * ecK * L * (1 + ecK * L)) / eb)
    g3_printed = sp.expand(4 * eb / mu ** 2 * (1 + 30 * L * eb / mu * (1 + 2 * L * eb / mu)))
    g4_ratio = sp.simplify((2 * ecK / eb) / (4 / mu))
    server = sp.expand(eta_s * (eta_s - 2 / (L + mu)) / eb)
    const_derived = -server.subs(eb, 0)             # the eta_bar-free part, sign as printed
    const_printed = 1 / (L + mu)
    ratios = [float(sp.simplify(g3_client / g3_printed)), float(g4_ratio),
              float(const_derived / const_printed)]
    from .anisotropic import anisotropic_problem
    from .runs import run_instance

    prob = anisotropic_problem(False)   # identical clients, Hessian diag(L, mu) = diag(2, 1/2)
    if not (float(prob.L), float(prob.mu)) == (float(L), float(mu)):
        raise ValueError(f"the FL instance has (L, mu) = ({prob.L}, {prob.mu}), not ({L}, {mu})")
    return Evidence(measured=ratios, theoretical=[1.0, 1.0, 1.0], relation="==",
                    tolerance=EXACT,
                    instance=run_instance(prob, sigma_G2=0.0, step_server=0.01, local_steps=5),
                    details={"G3_coefficient_derived": str(g3_client),
                             "G3_coefficient_printed": str(g3_printed),
                             "server_constant_derived": str(const_derived),
                             "server_constant_printed": str(const_printed)})
