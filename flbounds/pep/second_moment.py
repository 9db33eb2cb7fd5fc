r"""Witnesses of a rate over many rounds: quadratic instances whose exact second moment is
replayed round after round (the lower end of :func:`flbounds.pep.lyapunov_search.lyapunov_rate`).

On a quadratic problem with :math:`x^\star = 0` (``b = 0``) a described round is linear in its
free state, :math:`\xi^+ = T_S \xi` for each participating set :math:`S`;
:func:`round_matrices` reads :math:`T_S` off the round run on arrays
(:func:`flbounds.pep.replay.run_round`, the arithmetic of ``flbounds.algorithms``, which the
tests replay over every participation plan). Then :math:`E[\xi_R\xi_R^\top] =
\mathcal L^R(\xi_0\xi_0^\top)` exactly, :math:`\mathcal L(\Sigma) = \sum_S P(S) T_S
\Sigma T_S^\top`, and the per-round contraction of :math:`E\|\xi_R\|^2` from the worst
start is the spectral radius of :math:`\mathcal L` (:func:`second_moment_rate`). The
witnesses (:func:`witness_rate`) are 1-D clients :math:`f_i = \lambda_i x^2/2` (every
:math:`\lambda_i \in \{\mu_i, L_i\}` and :math:`\lambda_i = \mu_i + t(L_i - \mu_i)` for
:math:`t` on a grid of :math:`[0, 1]`, each client within its own constants)
and, given a Lyapunov measure, the quadratics fitted to its one-round worst case
(:func:`fitted_instance`). Each is a member of the class, so no rate certified for the class
can be below its contraction.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from .describe import Round, Setting
from .sdp import PEPSolveError

#: the identical-curvature grid of the 1-D witnesses, points in [mu, L]
GRID = 17
#: above this many clients the witnesses split the clients into two groups (mu | L)
MAX_ENUMERATED = 6
#: up to this many state coordinates the second-moment operator's eigenvalues are dense
DENSE = 24


def free_points(round_: Round):
    """Names of the free server and client points (the rest are derived at the start)."""
    return ([k for k in round_.server_state if k not in round_.initial],
            [k for k in round_.client_state if k not in round_.initial])


def check_setting(round_, setting, classes=("smooth-strongly-convex", "quadratic"),
                  what="the Lyapunov search"):
    """``ValueError`` unless the clients share x* (or are identical), of one of ``classes``
    (``what`` names the caller in the message)."""
    if not isinstance(round_, Round):
        raise ValueError(f"round_ must be a Round (flbounds.pep), got {type(round_).__name__}")
    if not isinstance(setting, Setting):
        raise ValueError(f"setting must be a Setting (flbounds.pep), got "
                         f"{type(setting).__name__}")
    if not (setting.common_minimizer or setting.identical):
        raise ValueError(f"setting: {what} needs clients sharing x* "
                         "(common_minimizer=True) or identical clients")
    if setting.function_class not in classes:
        raise ValueError(f"setting: {what} needs function_class in {list(classes)}, got "
                         f"{setting.function_class!r}")


def round_matrices(round_: Round, problem, law):
    """The linear maps :math:`T_S` of one round on the free state of a quadratic ``problem``
    with :math:`x^\\star = 0` (``b = 0``), one per set of ``law`` (or count vector, drawn with
    replacement): columns are the described round
    (:func:`flbounds.pep.replay.run_round`) run from the basis states.

    Returns
    -------
    (K, n, n) array
        With :math:`n` = (free server points + N free client points) times the dimension.
    """
    from .replay import QuadraticClient, outcomes, run_round, start_state

    server, own = free_points(round_)
    n, d = problem.n_clients, problem.dim
    size = (len(server) + n * len(own)) * d
    clients = [QuadraticClient(problem, i) for i in range(n)]

    def unpack(vec):
        vec = vec.reshape(-1, d)
        free = {k: vec[j] for j, k in enumerate(server)}
        rest = vec[len(server):].reshape(n, len(own), d)
        free.update({k: rest[:, j] for j, k in enumerate(own)})
        return free

    def pack(state):
        srv, cl = state
        return np.concatenate([srv[k].v for k in server]
                              + [c[k].v for c in cl for k in own])

    out = np.empty((law.probs.size, size, size))
    for j, basis in enumerate(np.eye(size)):
        start = start_state(round_, clients, unpack(basis))
        for s, (mask, counts, _) in enumerate(outcomes(law)):
            out[s, :, j] = pack(run_round(round_, clients, start, mask, law.count_means,
                                          counts))
    return out


def second_moment_rate(matrices, probs) -> float:
    r"""Spectral radius of :math:`\Sigma \mapsto \sum_S P(S) T_S \Sigma T_S^\top`: the
    per-round contraction of :math:`E\|\xi_R\|^2` from the worst start (dense eigenvalues up
    to :data:`DENSE` state coordinates, ARPACK on the operator above)."""
    T = np.asarray(matrices, float)
    probs = np.asarray(probs, float)
    n = T.shape[1]
    if n <= DENSE:
        op = sum(p * np.kron(t, t) for p, t in zip(probs, T, strict=True))
        return float(np.max(np.abs(np.linalg.eigvals(op))))
    from scipy.sparse.linalg import LinearOperator, eigs

    def apply(v):
        S = v.reshape(n, n)
        return sum(p * t @ S @ t.T for p, t in zip(probs, T, strict=True)).ravel()

    op = LinearOperator((n * n, n * n), matvec=apply, dtype=float)
    return float(np.max(np.abs(eigs(op, k=1, which="LM", tol=1e-12,
                                    return_eigenvectors=False))))


class FittedInstance(NamedTuple):
    """Quadratic clients fitted to a solved worst case (:func:`fitted_instance`).

    Attributes
    ----------
    problem : flbounds.problems.Quadratic
        The clients, :math:`x^\\star = 0`.
    start : dict
        The free start points (server: an array; client: ``(N, d)``).
    residual : float
        The worst relative fit residual (0: the solved Gram matrix is this instance's).
    """

    problem: object
    start: dict
    residual: float


def fitted_instance(round_: Round, setting: Setting, participation, measure):
    r"""Quadratic clients fitted to the one-round worst case of ``measure`` (a
    :class:`~flbounds.pep.measures.Measure`, e.g. a searched :math:`V_P`) over the
    quadratic class (the optimal Gram matrix factored, each client's
    :math:`\mu I \preceq Q_i \preceq L I` fitted to its points and gradients by
    :func:`flbounds.pep.witness.fit_quadratic`; :math:`x^\star = 0`).

    The solve need not be accurate (any status with values): the instance is a valid member
    of the class whatever the fit, and its rate is computed exactly.

    Returns
    -------
    FittedInstance
        The instance (``problem``, ``b = 0``), the solved start state (``start``: the free
        points as :func:`flbounds.pep.replay.start_state` reads them, so
        ``replay_measure(round_, fitted, measure, participation)`` replays it) and the worst
        relative fit residual (``residual``).
    """
    import dataclasses

    from flbounds.problems import Quadratic

    from .engine import build
    from .sdp import SOLVERS, attempts
    from .witness import fit_quadratic

    quad = dataclasses.replace(setting, function_class="quadratic")
    problem, parts = build(round_, quad, measure, participation)
    failures = []  # any solve with values will do: the instance's rate is computed exactly
    if not any(problem.G_value is not None for _ in attempts(problem, SOLVERS[:1], failures)):
        raise PEPSolveError("fitted witness: no solve with values " + "; ".join(failures))
    A, residual = [], 0.0
    for i, f in enumerate(parts["funcs"]):
        pts = [(x.eval(), g.eval()) for x, g, _ in f.list_of_points]
        Q, res = fit_quadratic(np.column_stack([x for x, _ in pts]),
                               np.column_stack([g for _, g in pts]), *setting.constants(i))
        A.append(Q)
        residual = max(residual, res)
    A = np.array(A)
    start, server, own = parts["start"], *free_points(round_)
    free = {k: np.asarray(start[k].eval(), float) for k in server}
    free.update({k: np.array([p.eval() for p in start.client(k)], float) for k in own})
    return FittedInstance(Quadratic(A, np.zeros(A.shape[:2])), free, residual)


def worst_instance(round_: Round, setting: Setting, measure, participation=None):
    r"""The worst case's instance: quadratic clients and a start fitted to the solved Gram
    matrix of ``worst_case(round_, setting, measure, participation)`` over the quadratic
    class (:func:`fitted_instance`), ready for :func:`flbounds.pep.replay_measure`.

    Parameters
    ----------
    round_ : Round
    setting : Setting
        Clients sharing :math:`x^\star` (or identical), smooth strongly convex or quadratic;
        the fit is over quadratics of the same constants.
    measure : Measure
        A one-run measure.
    participation : None, bool vector, process or sampler
        As for :func:`flbounds.pep.worst_case`.

    Returns
    -------
    FittedInstance
        ``problem`` (a ``flbounds.problems.Quadratic``, :math:`x^\star = 0`), ``start``
        and the fit ``residual``. Its replayed ratio is exact for this instance, a lower bound
        on the worst case of any class holding it; it meets the quadratic class's worst case
        when the residual is at the solver's accuracy.

    Raises
    ------
    PEPSolveError
        When the solve returns no values.
    """
    from .describe import Measure

    check_setting(round_, setting, ("smooth-strongly-convex", "quadratic"), "worst_instance")
    if not isinstance(measure, Measure) or measure.runs != 1:
        raise ValueError("measure must be a one-run Measure (flbounds.pep.lyapunov or "
                         "distance)")
    return fitted_instance(round_, setting, participation, measure)


def _curvatures(setting):
    """1-D curvatures of the witnesses: client i's lambda_i = mu_i + t (L_i - mu_i) for t on a
    grid of [0, 1] (one t for all), and every choice of ends mu_i or L_i (two groups above
    :data:`MAX_ENUMERATED` clients)."""
    n = setting.n_clients
    mu, L = (np.array([setting.constants(i)[j] for i in range(n)]) for j in (0, 1))
    grid = [tuple(mu + t * (L - mu)) for t in np.linspace(0.0, 1.0, GRID)]
    if setting.identical or np.all(mu == L):
        return grid
    ends = np.stack([mu, L])
    if n <= MAX_ENUMERATED:
        picks = itertools.product((0, 1), repeat=n)
    else:
        picks = ((0,) * k + (1,) * (n - k) for k in range(1, n))
    return grid + [tuple(ends[c, np.arange(n)]) for c in picks if len(set(c)) > 1]


def witness_rate(round_: Round, setting: Setting, participation=None, measure=None):
    """The largest per-round contraction over the witnesses (module docstring): 1-D
    quadratics and, with ``measure``, the quadratics fitted to its one-round worst case
    (:func:`fitted_instance`; left out when its solve returns no values).

    Parameters
    ----------
    round_ : Round
    setting : Setting
        Clients sharing :math:`x^\\star` (or identical), smooth strongly convex or quadratic
        (every witness is a quadratic within each client's constants, so a member of both
        classes).
    participation : None, bool vector, process or sampler
        See :func:`flbounds.pep.expect.law_of` (exact expectation; counts drawn with
        replacement included, replayed as :func:`flbounds.pep.replay.run_round` runs them).
    measure : Measure, optional
        A one-run measure whose one-round worst case over quadratics is fitted.

    Returns
    -------
    (float, tuple)
        The contraction and the witness: its client curvatures, or ``("fitted", d,
        residual)``.
    """
    from types import SimpleNamespace

    from flbounds.problems import Quadratic

    from .expect import law_of

    check_setting(round_, setting, ("smooth-strongly-convex", "quadratic"), "witness_rate")
    law = law_of(participation, setting.n_clients)
    best, where = -np.inf, ()
    for lam in _curvatures(setting):
        A, b = np.asarray(lam, float)[:, None, None], np.zeros((setting.n_clients, 1))
        # every client flat (mu = 0): no Quadratic (its mean Hessian must be definite), the
        # same A and b are all round_matrices reads
        problem = Quadratic(A, b) if np.any(A > 0) else SimpleNamespace(
            A=A, b=b, n_clients=setting.n_clients, dim=1)
        rate = second_moment_rate(round_matrices(round_, problem, law), law.probs)
        if rate > best:
            best, where = rate, tuple(float(v) for v in lam)
    if measure is not None:
        try:
            problem, _, residual = fitted_instance(round_, setting, participation, measure)
        except PEPSolveError:
            return best, where
        rate = second_moment_rate(round_matrices(round_, problem, law), law.probs)
        if rate > best:
            best, where = rate, ("fitted", problem.dim, residual)
    return best, where




__all__ = ["FittedInstance", "check_setting", "fitted_instance", "free_points", "round_matrices",
           "second_moment_rate", "witness_rate", "worst_instance"]
