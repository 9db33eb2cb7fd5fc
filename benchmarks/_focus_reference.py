r"""FOCUS's one-round worst case written by hand in PEPit: the independent cross-check of
:func:`flbounds.pep.focus_rate`, whose round is a description built by
:mod:`flbounds.pep.engine`.

Two formulations of the same SDP as :func:`flbounds.pep.focus_rate` (module docstring of
:mod:`flbounds.pep.tracking`: state :math:`x, z_i`, tracker :math:`y = \sum_i g_i`,
:math:`\Psi = \|x - x^\star\|^2 + c \sum_i \|x - z_i\|^2`):

- :func:`round_problem`: the expectation over the participating set expanded by hand in the
  participation moments :math:`P(i, j \in S)` (:func:`_expected_psi`);
- :func:`scenario_focus_rate`: the expectation as the :math:`2^N`-term sum over participating
  sets, no moments.

``benchmarks/pep_sizes.py`` times them against the described round, and the tests of
:mod:`flbounds.pep` compare their values with it (``tests/flbounds/pep/test_pep.py``,
``test_conic.py``, ``test_certify.py``, ``test_describe.py``). Nothing in ``flbounds`` or
``verify`` imports this module.
"""

from __future__ import annotations

from flbounds.pep.anchor import anchored_minimizer, minimizer
from flbounds.pep.rounds import focus_local_run, point_sum
from flbounds.pep.sdp import solve


def _expected_psi(x, x_star, y, z, V, Z, step, c, pair):
    """E Psi^+ from the moments: x+ - x* = a + sum_i s_i b_i, z_k+ = z_k + s_k d_k."""
    n = len(z)
    a = x - step * y - x_star
    b = [-step * v for v in V]
    d = [Z[k] - z[k] for k in range(n)]
    cross = [[b[i] * b[j] for j in range(n)] for i in range(n)]
    bb = sum(pair[i, j] * cross[i][j] for i in range(n) for j in range(n))
    total = a**2 + 2 * sum(pair[i, i] * (a * b[i]) for i in range(n)) + bb
    for k in range(n):
        ck = x - step * y - z[k]
        total = total + c * (ck**2 + 2 * sum(pair[i, i] * (ck * b[i]) for i in range(n))
                             - 2 * pair[k, k] * (ck * d[k]) + bb
                             - 2 * sum(pair[i, k] * (b[i] * d[k]) for i in range(n))
                             + pair[k, k] * d[k] ** 2)
    return total


def _client_functions(problem, mu, L, n, function_class):
    from PEPit.functions import SmoothStronglyConvexFunction, SmoothStronglyConvexQuadraticFunction

    classes = {"smooth-strongly-convex": SmoothStronglyConvexFunction,
               "quadratic": SmoothStronglyConvexQuadraticFunction}
    if function_class not in classes:
        raise ValueError(f"function_class must be one of {sorted(classes)}, got {function_class!r}")
    return [problem.declare_function(classes[function_class], mu=mu, L=L) for _ in range(n)]


def round_problem(mu, L, local_steps, step, c, pair, function_class="smooth-strongly-convex",
                  form="common"):
    """The one-round PEP of :func:`flbounds.pep.focus_rate`, unsolved.

    Parameters
    ----------
    mu, L, local_steps, step, c :
        As in :func:`flbounds.pep.focus_rate` (``c`` the consensus weight).
    pair : (N, N) array
        Participation moments P(i, j in S).
    function_class : {"smooth-strongly-convex", "quadratic"}
        PEPit's class of every client.
    form : {"common", "pepit", "values", "origin"}
        ``"common"``: every client stationary at x* = 0 with value 0 there; otherwise the
        heterogeneous minimizer in that form (:mod:`flbounds.pep.anchor`).

    Returns
    -------
    (PEPit.PEP, list, dict)
        The problem, its client functions and the norm bounds of the initial points for
        :func:`flbounds.pep.certify.leaf_bounds` (from Psi <= 1 with x* = 0: ||x|| <= 1 and
        ||z_i|| <= 1 + c^{-1/2}; valid for ``form="common"``).
    """
    from PEPit import PEP

    n = len(pair)
    problem = PEP()
    funcs = _client_functions(problem, mu, L, n, function_class)
    x_star = anchored_minimizer(funcs, common=True) if form == "common" else \
        minimizer(funcs, form)
    x = problem.set_initial_point()
    z = [problem.set_initial_point() for _ in range(n)]
    g = [f.gradient(zi) for f, zi in zip(funcs, z, strict=True)]
    y = point_sum(g)
    problem.set_initial_condition((x - x_star) ** 2 + c * sum((x - zi) ** 2 for zi in z) <= 1)
    runs = [focus_local_run(f, x, gi, step, local_steps) for f, gi in zip(funcs, g, strict=True)]
    Z, V = [r[0] for r in runs], [r[1] for r in runs]
    problem.set_performance_metric(_expected_psi(x, x_star, y, z, V, Z, step, c, pair))
    return problem, funcs, {x: 1.0, **{zi: 1.0 + c**-0.5 for zi in z}}


def scenario_focus_rate(mu, L, p, local_steps, step, consensus_weight, participation=None):
    """The one-round PEP with the expectation written as the :math:`2^N` scenario sum (no
    moments) over Bernoulli(``p``) or ``participation``, solved by
    :func:`flbounds.pep.sdp.solve`; returns its :class:`~flbounds.pep.sdp.SolveInfo`."""
    import numpy as np
    from PEPit import PEP

    from flbounds.participation import Bernoulli, subset_distribution

    process = Bernoulli(np.asarray(p, dtype=float)) if participation is None else participation
    n = process.n_clients
    masks, probs = subset_distribution(process)
    problem = PEP()
    funcs = _client_functions(problem, mu, L, n, "smooth-strongly-convex")
    x_star = minimizer(funcs, "pepit")
    x = problem.set_initial_point()
    z = [problem.set_initial_point() for _ in range(n)]
    g = [f.gradient(zi) for f, zi in zip(funcs, z, strict=True)]
    c = consensus_weight
    problem.set_initial_condition((x - x_star) ** 2 + c * sum((x - zi) ** 2 for zi in z) <= 1)
    runs = [focus_local_run(f, x, gi, step, local_steps) for f, gi in zip(funcs, g, strict=True)]
    metric = None
    for mask, pr in zip(masks, probs, strict=True):
        y = point_sum(g + [r[1] for r, s in zip(runs, mask, strict=True) if s])
        x_new = x - step * y
        z_new = [r[0] if s else zi for r, zi, s in zip(runs, z, mask, strict=True)]
        psi = (x_new - x_star) ** 2 + c * sum((x_new - zi) ** 2 for zi in z_new)
        metric = pr * psi if metric is None else metric + pr * psi
    problem.set_performance_metric(metric)
    return solve(problem)
