r"""Symbolic rounds on PEPit points: the local runs of gradient descent, FedAvg and FOCUS.

Each helper takes PEPit functions and points and returns PEPit points (linear combinations of
the Gram basis); nothing here solves anything. The clients' local runs do not depend on who
else participates, so each is built once and the participation patterns only recombine them
(see :mod:`flbounds.pep.moments`).
"""

from __future__ import annotations


def gd_steps(func, x, step, n_steps):
    """``n_steps`` gradient steps :math:`z_{t+1} = z_t - \\eta \\nabla f(z_t)` from ``x``."""
    z = x
    for _ in range(n_steps):
        z = z - step * func.gradient(z)
    return z


def focus_local_run(func, x, stored_gradient, step, local_steps):
    r"""One FOCUS client's round (``flbounds.algorithms.focus``): from the pulled model ``x``,
    :math:`h_t = \nabla f_i(z_t)`, :math:`z_{t+1} = z_t - \eta (h_t - g_i^{old})`, for
    :math:`t < \tau`; returns the last model :math:`z_{\tau-1}` (where the new stored gradient
    is evaluated) and the pushed correction :math:`v_i = h_{\tau-1} - g_i^{old}`."""
    z, v = x, None
    for t in range(local_steps):
        if t > 0:
            z = z - step * v
        v = func.gradient(z) - stored_gradient
    return z, v


def point_sum(points):
    """Sum of a non-empty list of PEPit points."""
    total = points[0]
    for p in points[1:]:
        total = total + p
    return total


def weighted_gram(points_a, points_b, weights):
    r""":math:`\sum_{ij} W_{ij} \langle a_i, b_j\rangle` as a PEPit expression (zero weights
    skipped)."""
    terms = [float(weights[i, j]) * (a * b) for i, a in enumerate(points_a)
             for j, b in enumerate(points_b) if weights[i, j] != 0.0]
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total
