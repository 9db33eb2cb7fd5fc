r"""What SAFARI's Theorems 4 and 5 of SAFARI ask of the PEP rounds of ``flbounds.pep``: the
step couplings, Theorem 5's q-condition as a constraint on the round's state, the proof's
one-round inequality (83) and Theorem 4's q-condition at :math:`\sigma_G = 0`.

The library's SDPs (:func:`flbounds.pep.safari_rate`, :func:`flbounds.pep.safari_hetero_rate`,
:func:`flbounds.pep.safari_nonconvex_rate`) and witnesses take both steps and an optional
generic state constraint :math:`a\|\nabla F(x_r)\|^2 - b\,G_4 \le 0`; the functions here turn
the theorems' constants into those arguments (:mod:`.thm5.tightness`,
:mod:`.thm5.tightness_hetero`, :mod:`.thm4.tightness`, ``verify.pep_table``,
``figures.safari_pep``).

Why these SDPs are the deterministic, homogeneous case: the theorems carry additive floors from
gradient noise (:math:`\sigma^2, \sigma_s^2`) and heterogeneity (:math:`\sigma_G^2`); a PEP
normalised by the initial distance or gap computes a *rate*, so with
:math:`\sigma = \sigma_s = \sigma_G = 0` (then :math:`\delta = \bar\delta = 0`) each theorem
reduces to a pure rate the PEP bounds over the whole class. Theorem 5's q-condition, in the
proof's linear form :math:`qN \le (1-q)D` (:math:`G_3 = \|\nabla F(x_r)\|^2`,
:math:`G_4 = F(x_r) - F^\star`), is linear in the Gram matrix and the function values: the
library's ``state_constraint``. With heterogeneous clients (``safari_hetero_rate``) the right
side is affine in :math:`(\|x_r - x^\star\|^2, \sigma_G^2)`, so the SDP normalises both, and
:math:`G_4` over the sampled clients is constrained for every drawable set. With
:math:`\sigma_G = 0` Theorem 4's q-condition holds for every :math:`q` once
:math:`2L\eta_s \le 1/2` (:func:`thm4_q_condition_trivial`). Theorem 4 with
:math:`\sigma_G > 0` is not built: its q-condition bounds :math:`\sigma_G^2` by
:math:`G_1, G_2`, maxima over the rounds, so "q-condition holds" is a disjunction over the
rounds (not a convex constraint on the Gram matrix); the audit's min reading would be a
conjunction, expressible, but at :math:`N K 2^R` gradients, and the heterogeneous violation of
Theorem 4 (``safari.thm4.printed_bound``) lives in the :math:`\sigma_G` floor after
:math:`10^5` rounds, which no PEP of a few rounds reaches.

References
----------
SAFARI: Server-assisted FL under incomplete client participation, Theorems 4-5, Appendix A
(eqs. (28), (50), (76)-(83)).
"""

from __future__ import annotations

from flbounds.pep.server_hetero_witness import HeteroWitness, safari_hetero_witness
from flbounds.pep.server_steps_witness import SafariWitness, safari_witness

from .thm5 import client_step


def thm5_steps(mu, L, local_steps, step_server):
    r"""(:math:`\eta_c`, :math:`\bar\eta`) Theorem 5 couples to :math:`\eta_s`:
    :math:`\eta_c = 4L\eta_s/(K(L+\mu))`, :math:`\bar\eta = \eta_c K\mu/2`."""
    eta_c = client_step(step_server=step_server, L=L, mu=mu, local_steps=local_steps)
    return eta_c, eta_c * local_steps * mu / 2


def thm4_client_step(local_steps, step_server):
    r"""Theorem 4's coupling :math:`\eta_c = 2\eta_s/K`."""
    return 2 * step_server / local_steps


def q_condition_coefficients(mu, L, q, eta_bar, corrected=False):
    r"""Coefficients ``(a, b, d)`` of Theorem 5's q-condition in the proof's linear form.

    :math:`qN \le (1-q)D` with :math:`N = \alpha G_3 - 4G_4/\mu`, :math:`D = dG_3` is
    :math:`a G_3 - b G_4 \le 0` with :math:`a = q\alpha - (1-q)d`, :math:`b = 4q/\mu`; the proof
    also needs :math:`d > 0` (printed constants ``c = 4``, ``e = L + mu``; corrected ``16``,
    ``L mu``, as ``verify.safari.closed_forms.thm5_q_condition``).
    """
    c, e = (16.0, L * mu) if corrected else (4.0, L + mu)
    alpha = c * eta_bar / mu**2 * (1 + 30 * L * eta_bar / mu * (1 + 2 * L * eta_bar / mu))
    d = 1 / e - (L + mu) ** 2 * eta_bar / (4 * L**2 * mu**2)
    return q * alpha - (1 - q) * d, 4 * q / mu, d


def thm5_state_constraint(mu, L, q, local_steps, step_server, q_condition="printed"):
    """The library's ``state_constraint=(a, b)`` imposing Theorem 5's q-condition
    (``"printed"`` or ``"corrected"`` constants), or None for ``q_condition=None``."""
    if q_condition is None:
        return None
    if q_condition not in ("printed", "corrected"):
        raise ValueError(f"q_condition must be 'printed', 'corrected' or None, got "
                         f"{q_condition!r}")
    _, eta_bar = thm5_steps(mu, L, local_steps, step_server)
    a, b, _ = q_condition_coefficients(mu, L, q, eta_bar, q_condition == "corrected")
    return a, b


def _d_positive(mu, L, q, local_steps, step_server, corrected):
    _, eta_bar = thm5_steps(mu, L, local_steps, step_server)
    return q_condition_coefficients(mu, L, q, eta_bar, corrected)[2] > 0


def thm5_witness(mu, L, q, local_steps, step_server, *, q_condition="printed",
                 n_grid=201) -> SafariWitness:
    """The best 1-D quadratic witness (``flbounds.pep.server_steps_witness``) at Theorem 5's
    coupled steps whose state meets the q-condition; the proof's ``d > 0`` is a condition on
    the constants, without which no state meets it (the empty witness)."""
    if q_condition is not None and not _d_positive(mu, L, q, local_steps, step_server,
                                                   q_condition == "corrected"):
        return SafariWitness(0.0, float("nan"), False)
    eta_c, _ = thm5_steps(mu, L, local_steps, step_server)
    return safari_witness(
        mu, L, q, local_steps, eta_c, step_server, n_grid=n_grid,
        state_constraint=thm5_state_constraint(mu, L, q, local_steps, step_server, q_condition))


def thm5_hetero_witness(mu, L, q, local_steps, step_server, n_clients, *, n_sampled=None,
                        eligible=None, sigma_g2_ratio=0.0, q_condition="printed",
                        n_grid=21) -> HeteroWitness:
    """As :func:`thm5_witness`, heterogeneous clients
    (``flbounds.pep.server_hetero_witness``)."""
    if q_condition is not None and not _d_positive(mu, L, q, local_steps, step_server,
                                                   q_condition == "corrected"):
        return HeteroWitness(0.0, float("nan"), (), 0.0, False)
    eta_c, _ = thm5_steps(mu, L, local_steps, step_server)
    return safari_hetero_witness(
        mu, L, q, local_steps, eta_c, step_server, n_clients, n_sampled=n_sampled,
        eligible=eligible, sigma_g2_ratio=sigma_g2_ratio, n_grid=n_grid,
        state_constraint=thm5_state_constraint(mu, L, q, local_steps, step_server, q_condition))


def one_round_bound(mu, L, q, local_steps, step_server, s):
    r"""The proof's one-round inequality (83) at :math:`\|x_r - x^\star\|^2 = 1`,
    :math:`\sigma_G^2 = s`, no noise: :math:`(1 - \bar\eta) + \delta(s)`,
    :math:`\delta = 4q\eta_c^2K^2 s + 60 q \eta_c^2 K^2 L \eta_c (1 + K\eta_c L) s`."""
    eta_c, eta_bar = thm5_steps(mu, L, local_steps, step_server)
    K = local_steps
    delta = q * s * (4 * eta_c**2 * K**2 + 60 * eta_c**3 * K**2 * L * (1 + K * eta_c * L))
    return 1 - eta_bar + delta


def thm4_q_condition_trivial(L, step_server):
    r"""With :math:`\sigma_G = 0` Theorem 4's q-condition reads :math:`qX \le (1-q)D` with
    :math:`X = -4G_2(1/(2K^2) - 2L\eta^p/K^2)` and :math:`D = (1 - L\eta_s)G_1`: it holds for
    every q and every trajectory iff :math:`2L\eta_s^p \le 1/2` and :math:`L\eta_s \le 1`, for
    the printed (p = 2) and the proof's (p = 1) power alike."""
    return 2 * L * step_server <= 0.5 and 2 * L * step_server**2 <= 0.5 and L * step_server <= 1


__all__ = ["one_round_bound", "q_condition_coefficients", "thm4_client_step",
           "thm4_q_condition_trivial", "thm5_hetero_witness", "thm5_state_constraint",
           "thm5_steps", "thm5_witness"]
