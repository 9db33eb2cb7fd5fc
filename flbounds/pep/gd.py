r"""Gradient descent, the sanity case: one step's worst contraction of :math:`\|x - x^\star\|^2`."""

from __future__ import annotations

from flbounds.validation import check_positive

from .anchor import anchored_minimizer
from .result import WorstCase, make_result
from .sdp import solve


def check_class(mu, L):
    """Validate the class constants: ``0 < mu <= L`` (``mu = 0``: smooth convex)."""
    mu = float(mu)
    if not mu >= 0:
        raise ValueError(f"mu must be >= 0, got {mu}")
    L = check_positive(L, "L")
    if mu > L:
        raise ValueError(f"L must be >= mu, got L={L}, mu={mu}")
    return mu, L


def gd_contraction(mu, L, step) -> float:
    r"""The known tight rate :math:`\max(|1-\eta\mu|, |1-\eta L|)^2` (attained by quadratics).

    Parameters
    ----------
    mu, L : float
        ``0 < mu <= L``.
    step : float
        :math:`\eta > 0`.

    Returns
    -------
    float
        The worst :math:`\|x_1 - x^\star\|^2 / \|x_0 - x^\star\|^2` of one gradient step.
    """
    return max(abs(1 - step * mu), abs(1 - step * L)) ** 2


def gd_rate(mu, L, step) -> WorstCase:
    r"""Worst :math:`\|x_1 - x^\star\|^2 / \|x_0 - x^\star\|^2` of one step
    :math:`x_1 = x_0 - \eta \nabla f(x_0)` over L-smooth mu-strongly convex f.

    Parameters
    ----------
    mu, L : float
        ``0 < mu <= L``.
    step : float
        :math:`\eta > 0`.

    Returns
    -------
    WorstCase
        ``printed`` is the tight rate :math:`\max(|1-\eta\mu|, |1-\eta L|)^2`.

    References
    ----------
    Taylor, Hendrickx, Glineur, "Smooth strongly convex interpolation and exact worst-case
    performance of first-order methods", Math. Program. 161 (2017).
    """
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    mu, L = check_class(mu, L)
    step = check_positive(step, "step")
    problem = PEP()
    func = problem.declare_function(SmoothStronglyConvexFunction, mu=mu, L=L)
    x_star = anchored_minimizer([func])
    x0 = problem.set_initial_point()
    problem.set_initial_condition((x0 - x_star) ** 2 <= 1)
    x1 = x0 - step * func.gradient(x0)
    problem.set_performance_metric((x1 - x_star) ** 2)
    return make_result(solve(problem), printed=gd_contraction(mu, L, step),
                       metric="||x_1 - x*||^2 / ||x_0 - x*||^2",
                       params=dict(mu=mu, L=L, step=step))
