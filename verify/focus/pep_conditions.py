r"""What FOCUS's Theorem 1 proofs of FOCUS ask of the PEP rounds of ``flbounds.pep``: the
Lyapunov weights of :math:`\Psi` (Theorem 1(a), proof E.5) and :math:`\Phi` (Theorem 1(b),
proof E.6). The library's :func:`flbounds.pep.focus_rate` and
:func:`flbounds.pep.focus_pl_rate` take the weight as ``consensus_weight`` (no default).

References
----------
FOCUS: Ying, Li, Yang, NeurIPS 2025, Theorem 1(a)-(b), Appendix E.5-E.6.
"""

from __future__ import annotations


def thm1a_lyapunov_weight(mu, L, n_clients, step):
    r"""Theorem 1(a)'s proof weight :math:`1 - 8\eta L^2 N/\mu` of :math:`\Psi` (must be > 0)."""
    c = 1 - 8 * step * L**2 * n_clients / mu
    if not c > 0:
        raise ValueError(f"step={step} makes the Lyapunov weight 1 - 8 step L^2 N / mu = {c:.3g}"
                         " <= 0: Psi is no longer a Lyapunov function (pass consensus_weight)")
    return c


def thm1b_consensus_weight(L, step):
    r"""Theorem 1(b)'s proof weight :math:`1 - 4\eta L^2` of :math:`\Phi` (must be > 0)."""
    c = 1 - 4 * step * L**2
    if not c > 0:
        raise ValueError(f"step={step} makes the consensus weight 1 - 4 step L^2 <= 0 "
                         "(pass consensus_weight)")
    return c


__all__ = ["thm1a_lyapunov_weight", "thm1b_consensus_weight"]
