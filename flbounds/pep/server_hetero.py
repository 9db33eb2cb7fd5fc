r"""SAFARI (a server-assisted FedAvg, Algorithm 1 of SAFARI) with heterogeneous clients: one
strongly convex round as a PEP.

Clients :math:`f_1, \dots, f_N`, each L-smooth and mu-strongly convex,
:math:`F = \frac1N \sum_i f_i`, :math:`x^\star = \arg\min F`. A round is, with probability
:math:`q`, a client round (every sampled client runs :math:`K` gradient steps with
:math:`\eta_c` from :math:`x_r`, the server averages over the sampled set :math:`S`) and
otherwise one server step :math:`x_r - \eta_s \nabla F(x_r)`. The sampled set is SAFARI's:
``n_sampled`` clients uniformly without replacement from ``eligible`` (a strict subset of the
clients is biased participation). The expectation over the coin and over :math:`S` is exact
(:mod:`flbounds.pep.moments`).

Bounded heterogeneity: :math:`\|\nabla f_i(x) - \nabla F(x)\|^2 \le \sigma_G^2` for every
client and every :math:`x`. A bound affine in :math:`(\|x_r - x^\star\|^2, \sigma_G^2)` scales
like both under :math:`x \mapsto tx`, so the SDP normalises :math:`\|x_r - x^\star\|^2 \le 1`
and :math:`\sigma_G^2 \le s` (``sigma_g2_ratio``), and the family of values over
:math:`s \ge 0` is equivalent to the affine inequality over the class. The heterogeneity bound
is imposed at every point where a gradient is taken (:math:`x^\star`, :math:`x_r` and every
local iterate), with every client's gradient evaluated there; at other points it is not, so
the SDP value is an UPPER bound on the class's worst case: "worst <= printed" certifies a
printed inequality at these constants, an excess needs a replayed witness.

An optional constraint on the round's state (``state_constraint=(a, b)``) reads
:math:`a\|\nabla F(x_r)\|^2 - b\,G(S) \le 0` with :math:`G(S) = \frac1m\sum_{i \in S}
[f_i(x_r) - f_i(x^\star)]`, which depends on the sampled clients: it is imposed for every set
:math:`S` that can be drawn, so every state in the SDP meets it whatever the draw (with
identical clients it is :func:`flbounds.pep.server_steps.safari_rate`'s).

The SDP is built from the description :func:`flbounds.pep.described_server.safari_round`
(the client round under :func:`sampled_sets`' law); the heterogeneity bound is imposed at
every point where the round takes a gradient (:class:`flbounds.pep.scenarios.Recorder`),
and at :math:`x^\star`.

References
----------
SAFARI: Server-assisted FL under incomplete client participation, Algorithm 1.
"""

from __future__ import annotations

import itertools

import numpy as np

from flbounds.validation import check_int

from .describe import Setting, distance
from .described_server import safari_round
from .engine import initial_state
from .expect import ParticipationLaw
from .result import WorstCase, make_result
from .scenarios import Recorder, declare, expected, heterogeneity
from .sdp import solve_first
from .server_steps import check_round_args


def sampled_sets(n_clients, n_sampled=None, eligible=None):
    """SAFARI's subset law: ``n_sampled`` of ``eligible`` uniformly without replacement.

    Returns ``(masks, probs)``: (k, n) bool masks and their probabilities.
    """
    n = check_int(n_clients, "n_clients", minimum=1)
    elig = np.arange(n) if eligible is None else np.asarray(eligible)
    if (elig.ndim != 1 or elig.size == 0 or not np.issubdtype(elig.dtype, np.integer)
            or np.unique(elig).size != elig.size or elig.min() < 0 or elig.max() >= n):
        raise ValueError(f"eligible must be distinct client indices in [0, {n}), got {eligible!r}")
    m = elig.size if n_sampled is None else check_int(n_sampled, "n_sampled", minimum=1)
    if m > elig.size:
        raise ValueError(f"n_sampled must be <= the number of eligible clients ({elig.size}), "
                         f"got {m}")
    subsets = list(itertools.combinations(elig.tolist(), m))
    masks = np.zeros((len(subsets), n), dtype=bool)
    for row, subset in enumerate(subsets):
        masks[row, list(subset)] = True
    return masks, np.full(len(subsets), 1.0 / len(subsets))


def _check_args(mu, L, q, local_steps, step_client, step_server, n_clients, sigma_g2_ratio,
                state_constraint):
    mu, L, q, K, eta_c, step, constraint = check_round_args(mu, L, q, local_steps, step_client,
                                                            step_server, state_constraint)
    n = check_int(n_clients, "n_clients", minimum=1)
    try:
        s = float(sigma_g2_ratio)
    except (TypeError, ValueError):
        s = float("nan")
    if not (np.isfinite(s) and s >= 0):
        raise ValueError(f"sigma_g2_ratio must be a finite number >= 0, got {sigma_g2_ratio!r}")
    return mu, L, q, K, eta_c, step, constraint, n, s


def safari_hetero_rate(mu, L, q, local_steps, step_client, step_server, n_clients, *,
                       printed=None, n_sampled=None, eligible=None, sigma_g2_ratio=0.0,
                       state_constraint=None, drop_heterogeneity=False,
                       drop_server_step=False) -> WorstCase:
    r"""Worst :math:`E\|x_{r+1} - x^\star\|^2` of one SAFARI round over heterogeneous clients,
    with :math:`\|x_r - x^\star\|^2 \le 1` and :math:`\sigma_G^2 \le s` (module docstring).

    Parameters
    ----------
    mu, L : float
        ``0 < mu <= L``: every client L-smooth and mu-strongly convex.
    q : float
        Probability of a client round, in [0, 1].
    local_steps : int
        :math:`K \ge 1`.
    step_client : float
        :math:`\eta_c > 0`, the clients' local step.
    step_server : float
        :math:`\eta_s > 0`, the server step (no bound enforced).
    n_clients : int
        :math:`N \ge 1`.
    n_sampled : int, optional
        :math:`m` clients per client round (default: every eligible client).
    eligible : sequence of int, optional
        The clients that can be sampled (default: all).
    sigma_g2_ratio : float
        :math:`s = \sigma_G^2 / \|x_r - x^\star\|^2 \ge 0`.
    printed : float, optional
        The bound to report beside the worst case (at :math:`\|x_r - x^\star\|^2 = 1`,
        :math:`\sigma_G^2 = s`); None: none.
    state_constraint : (float, float), optional
        ``(a, b)``: only states with :math:`a\|\nabla F(x_r)\|^2 - b\,G(S) \le 0` for every
        drawable set :math:`S` (module docstring); None: every state.
    drop_heterogeneity, drop_server_step : bool
        Deliberately wrong problems (no heterogeneity bound; server rounds leave x unchanged)
        for the tests that show a tightness claim catches them.

    Returns
    -------
    WorstCase
        An upper bound on the class's worst case; ``printed`` is the caller's ``printed``.
    """
    mu, L, q, K, eta_c, step, constraint, n, s = _check_args(
        mu, L, q, local_steps, step_client, step_server, n_clients, sigma_g2_ratio,
        state_constraint)
    masks, probs = sampled_sets(n, n_sampled, eligible)
    if s == 0.0 and n > 1 and not drop_heterogeneity:
        # sigma_G = 0 uniformly in x: every f_i is F plus a constant, the round is
        # safari_rate's (exact, no relaxation); its Gram matrix has no strictly feasible point
        # in this SDP (every gradient pair forced equal), where the solvers stop inaccurate
        from .server_steps import safari_rate

        homogeneous = safari_rate(mu, L, q, K, eta_c, step, state_constraint=constraint,
                                  drop_server_step=drop_server_step)
        info = _info_of(homogeneous)
    else:
        info = solve_round(mu, L, q, K, eta_c, step, n, masks, probs, s,
                           state_constraint=constraint, drop_heterogeneity=drop_heterogeneity,
                           drop_server_step=drop_server_step)
    return make_result(info, printed=printed,
                       metric="E||x_{r+1} - x*||^2, ||x_r - x*||^2 <= 1, sigma_G^2 <= s "
                              "(one SAFARI round, heterogeneous clients; upper bound)",
                       params=dict(mu=mu, L=L, q=q, local_steps=K, step_server=step,
                                   step_client=eta_c, n_clients=n,
                                   n_sampled=int(masks[0].sum()),
                                   eligible=np.flatnonzero(masks.any(axis=0)).tolist(),
                                   sigma_g2_ratio=s, state_constraint=constraint))


def round_problem(mu, L, q, K, eta_c, step, n, masks, probs, s, *, state_constraint=None,
                  drop_heterogeneity=False, drop_server_step=False, at_origin=True, scale=1.0):
    """The PEPit problem of one heterogeneous SAFARI round (module docstring), unsolved:
    :math:`x^\\star` at the origin or free (``at_origin``, :mod:`.anchor`), the initial
    distance bounded by ``scale`` and :math:`\\sigma_G^2` by ``s * scale``."""
    return _round_parts(mu, L, q, K, eta_c, step, n, masks, probs, s,
                        state_constraint=state_constraint, drop_heterogeneity=drop_heterogeneity,
                        drop_server_step=drop_server_step, at_origin=at_origin, scale=scale)[0]


def _round_parts(mu, L, q, K, eta_c, step, n, masks, probs, s, *, state_constraint,
                 drop_heterogeneity, drop_server_step, at_origin, scale):
    r""":func:`round_problem`, its functions and the a-priori norm bounds of its free leaves
    (:func:`flbounds.pep.certify.leaf_bounds`; None without a heterogeneity bound): the start
    :math:`\|x_r\| \le \sqrt{c}` and, with :math:`x^\star = 0` and :math:`\nabla F(x^\star)
    = 0`, each client's :math:`\|\nabla f_i(x^\star)\| \le \sqrt{s c}` (the heterogeneity
    bound at :math:`x^\star`)."""
    from PEPit import PEP, Point

    law = ParticipationLaw(masks, probs, "SAFARI's sampled sets")
    program = safari_round(q, K, eta_c, step, law, drop_server_step=drop_server_step)
    measure = distance()
    problem = PEP()
    funcs, star = declare(problem, Setting(n, mu, L), "origin" if at_origin else "values")
    start = initial_state(program.branches[0].round, funcs)
    problem.set_initial_condition(measure.value(start, star) <= scale)
    recorder = Recorder(funcs)
    metric = expected(program, recorder.funcs, start, measure.value, star, run_all=True)
    if not drop_heterogeneity and n > 1:
        points = {id(p): p for p in (star.x, start["x"], *recorder.points)}
        heterogeneity(problem, funcs, list(points.values()), s * scale)
    if state_constraint is not None:
        _impose_state_constraint(problem, funcs, start["x"], star.x, law, state_constraint)
    problem.set_performance_metric(metric)
    bounded = at_origin and (n == 1 or not drop_heterogeneity)
    initial = {start["x"]: np.sqrt(scale)} if bounded else None
    if bounded:
        for f in {id(f): f for f in funcs}.values():
            initial.update((g, np.sqrt(s * scale)) for u, g, _v in f.list_of_points
                           if u is star.x and isinstance(g, Point) and g.get_is_leaf())
    return problem, funcs, initial


def solve_round(mu, L, q, K, eta_c, step, n, masks, probs, s, **kw):
    """Equivalent forms of :func:`round_problem` in order (.anchor, .sdp 'Scale'): x* at the
    origin or free, the initial distance bounded by 1 or 0.1. Measured at q = 0.5, K = 3,
    eta_s = 0.0133, N = 4, 2 of 3 eligible sampled, s = 1: scale 1 stops at
    optimal_inaccurate (gap 6e-7), scale 0.1 is accepted (same value in both forms to
    1.3e-7). Every form is tried with Clarabel (both settings of
    :data:`~flbounds.pep.sdp.SOLVERS`) before any with SCS, whose 20,000 iterations cost
    several times an interior-point solve when they end inaccurate: a round that only its
    third form solves accurately no longer pays two SCS runs first (the accepted solve is the
    same whenever Clarabel accepts one). When none is accurate, the certified upper bound of
    the first form (:func:`flbounds.pep.certify.solve_certified`; not without a heterogeneity
    bound, whose SDP is unbounded)."""
    from .certify import solve_certified
    from .sdp import SOLVERS

    def parts():
        return _round_parts(mu, L, q, K, eta_c, step, n, masks, probs, s, at_origin=True,
                            scale=1.0, **{k: kw.get(k) for k in _KEYS})

    certified = None if kw.get("drop_heterogeneity") and n > 1 else \
        (lambda: solve_certified(parts, L))
    interior = tuple(pair for pair in SOLVERS if pair[0] != "SCS")
    first_order = tuple(pair for pair in SOLVERS if pair[0] == "SCS")
    return solve_first([(lambda a=at, c=sc: round_problem(mu, L, q, K, eta_c, step, n, masks,
                                                          probs, s, at_origin=a, scale=c,
                                                          **kw), sc, solvers)
                        for solvers in (interior, first_order) if solvers
                        for sc in (1.0, 0.1) for at in (True, False)], certified=certified)


_KEYS = ("state_constraint", "drop_heterogeneity", "drop_server_step")


def _info_of(result):
    from .sdp import SolveInfo

    return SolveInfo(worst=result.worst, primal=result.worst, gap=result.gap,
                     solver=result.solver, status=result.status, seconds=result.seconds,
                     gram_size=result.gram_size, n_constraints=result.n_constraints)


def _impose_state_constraint(problem, funcs, x, x_star, law, constraint):
    r""":math:`a\|\nabla F(x)\|^2 - bG(S) \le 0` for every set :math:`S` of positive
    probability."""
    a, b = constraint
    grads = [f.gradient(x) for f in funcs]
    grad_F = grads[0]
    for g in grads[1:]:
        grad_F = grad_F + g
    g3 = (1 / len(funcs)) * grad_F
    g3 = g3**2
    for mask in law.masks:
        members = [funcs[i] for i in np.flatnonzero(mask)]
        g4 = members[0](x) - members[0](x_star)
        for f in members[1:]:
            g4 = g4 + (f(x) - f(x_star))
        problem.add_constraint(a * g3 - b * ((1 / len(members)) * g4) <= 0)


__all__ = ["round_problem", "safari_hetero_rate", "sampled_sets", "solve_round"]
