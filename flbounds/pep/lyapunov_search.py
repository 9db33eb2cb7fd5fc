r"""Rates over many rounds: the best contraction certified by a quadratic Lyapunov function.

A one-round worst case of a fixed measure (:mod:`flbounds.pep.engine`) is a rate only for
that measure. Here the measure is searched for (Taylor, Van Scoy and Lessard, ICML 2018):
over every quadratic function of the round's state

.. math:: V_P(\xi) = \sum_{a, b} P_{ab} \langle \xi_a, \xi_b\rangle, \qquad
          P \succeq e_x e_x^\top,

(:math:`\xi_a` the state's points, :attr:`LyapunovRate.coordinates`: the server's free points,
then every client's points, stored gradients included; :math:`V_P \ge \|x - x^\star\|^2`),
find the smallest :math:`\rho` with :math:`E[V_P(\xi^+)] \le \rho V_P(\xi)` for every state
and every client function of the class, the expectation exact over the participation
(:mod:`.expect`). Then :math:`E\|x_R - x^\star\|^2 \le \rho^R V_P(\xi_0)` for every R.

The search. Clients share their minimizer, pinned at the origin with every gradient 0 there
(the zero state is then the fixed point of any described round; FOCUS and SCAFFOLD are
invariant under :math:`f_i \to f_i + \langle a_i, \cdot\rangle`, :math:`\sum_i a_i = 0`, in the
coordinates :math:`z_i - x^\star, g_i - \nabla f_i(x^\star)`, so this loses nothing for them).
Both :math:`E[V_P(\xi^+)]` and :math:`V_P(\xi)` are linear in :math:`P` and in the Gram
matrix :math:`G` of the round's points (its leaf points: the free state, the gradients); the
class's interpolation inequalities :math:`e_k(G, F) \le 0` are linear in :math:`(G, F)`. By
the S-procedure :math:`\rho` is certified when some :math:`\lambda \ge 0` give

.. math:: \textstyle \sum_{ab} P_{ab}(A_{ab} - \rho B_{ab}) - \sum_k \lambda_k E_k \preceq 0,
          \qquad \sum_k \lambda_k e^F_k = 0,

(:math:`A_{ab}, B_{ab}, E_k` the matrices of :math:`E\langle\xi^+_a, \xi^+_b\rangle`,
:math:`\langle\xi_a, \xi_b\rangle`, :math:`e_k` over the leaves, :math:`e^F_k` the function
values' coefficients): an LMI in :math:`(P, \lambda)` at fixed :math:`\rho`, and, for a fixed
:math:`P`, the dual of the one-round PEP of :math:`V_P`. Feasibility is monotone in
:math:`\rho` (:math:`B(P) \succeq 0`), so :math:`\rho` is found by bisection.

The certificate. The search's solver is not trusted: its last feasible :math:`P` (unit
norm) is handed to the one-round PEP of :math:`V_P` (:func:`.lyapunov_check.plain_check`;
lifted, :func:`.lyapunov_lmi.lifted_check`), solved with the project's discipline, and the
reported ``certified`` rate is the bound rebuilt from that solve's multipliers
(:mod:`.lyapunov_check`: the start's free points bounded by :math:`V \le 1` and the class's
inequalities at :math:`x^\star`), valid whatever the solve's accuracy; the accurate value is
``accurate``. Where no start bound exists, :math:`P + sI` (:data:`SHIFTS`) is checked and
reported instead. The rate must lie in the bisection's bracket (:data:`CONSISTENCY`), else
:class:`~.sdp.PEPSolveError`.

The witness (:mod:`.second_moment`). A lower bound: quadratic clients (1-D curvatures in
:math:`\{\mu, L\}^N` and on a grid, and quadratics fitted to the one-round worst case of the
searched :math:`V_P`), on which a round is linear, :math:`\xi^+ = T_S \xi`; the spectral
radius of :math:`\Sigma \mapsto \sum_S P(S) T_S \Sigma T_S^\top` is the exact per-round
contraction of :math:`E\|\xi_R\|^2` from the worst start. The certified rate holds on that
instance too, and with :math:`P \succ 0` (:math:`V_P \ge c\|\xi\|^2`, measured on every
round here) it bounds :math:`E\|\xi_R\|^2`, so ``witness <= certified``.

References
----------
A. Taylor, B. Van Scoy and L. Lessard, Lyapunov functions for first-order methods: tight
automated convergence guarantees, ICML 2018.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from flbounds.validation import check_positive

from .describe import Round, Setting
from .lyapunov_check import plain_check
from .lyapunov_lmi import Search, coordinates, lifted_check, lyapunov_measure
from .result import WorstCase, make_result
from .sdp import PEPSolveError, gap_tolerance
from .second_moment import GRID, check_setting, witness_rate

#: bisection stops when the bracket [infeasible, feasible] is this narrow (absolute on rho)
BISECTION_TOL = 1e-7
#: how far the certified value may sit outside the bisection's bracket, relative to
#: max(1, rho): the search's feasibility is the solver's (residuals ~1e-8), the check's value
#: is accurate to gap_tolerance (1e-6); a sign error in the decrease condition moves the
#: bracket by O(rho) (to 0 on gradient descent), far beyond this
CONSISTENCY = 1e-5
#: shifts s of the searched (unit-norm) P tried in turn when its check has no certificate:
#: V_P + s||xi||^2 is another quadratic V, its start leaves bounded (its rate checked the same
#: way, so it must still lie in the bisection's bracket)
SHIFTS = (0.0, 1e-8, 1e-6, 1e-4)


@dataclass(frozen=True)
class LyapunovRate:
    """The bracket [witness, certified] of a round's per-round contraction over many rounds.

    Attributes
    ----------
    certified : float
        A rigorous upper bound on :math:`\\sup E[V^+]/V` for the searched :math:`V`, rebuilt
        from the check's multipliers whatever its accuracy (:mod:`.lyapunov_check`): an upper
        bound on the contraction of :math:`E V` per round, hence of
        :math:`E\\|x_R - x^\\star\\|^2` (up to the constant :math:`V(\\xi_0)`).
    witness : float or None
        Per-round contraction of :math:`E\\|\\xi_R\\|^2` on the worst quadratic witness (a
        lower bound on the class's rate); None when not computed.
    search : (float, float)
        The bisection's last infeasible and feasible :math:`\\rho` (infeasibility proved when
        ``params["undecided_solves"]`` is 0).
    printed : float or None
        A printed rate passed by the caller.
    P : ndarray
        The Lyapunov matrix over ``coordinates``.
    coordinates : tuple of str
    worst_case : WorstCase
        The certifying solve (status, gap, SDP size).
    witness_instance : tuple
        The witness's client curvatures.
    seconds : float
    params : dict
    accurate : float or None
        The check's accurate solve (its dual value, within 1e-6 of the supremum on either
        side, so possibly below ``witness``); None when only the certificate was accepted.
    """

    certified: float
    witness: float | None
    search: tuple
    printed: float | None
    P: np.ndarray
    coordinates: tuple
    worst_case: WorstCase
    witness_instance: tuple = ()
    seconds: float = 0.0
    params: dict = field(default_factory=dict)
    accurate: float | None = None

    @property
    def bracket(self) -> tuple:
        """``(witness, certified)``."""
        return (self.witness, self.certified)

    def as_dict(self) -> dict:
        """JSON-ready summary."""
        return dict(certified=self.certified, witness=self.witness, search=list(self.search),
                    printed=self.printed, P=np.asarray(self.P).tolist(),
                    coordinates=list(self.coordinates), status=self.worst_case.status,
                    gap=self.worst_case.gap, witness_instance=list(self.witness_instance),
                    seconds=self.seconds, params=self.params, accurate=self.accurate)


def lyapunov_rate(round_: Round, setting: Setting, participation=None, *, rho_max=1.0,
                  printed=None, witness=True, values=False, warm=None) -> LyapunovRate:
    r"""The best per-round contraction certified by a quadratic Lyapunov function of the
    round's state, and a replayed witness's contraction (module docstring).

    Parameters
    ----------
    round_ : Round
        A described round (:mod:`flbounds.pep.described`).
    setting : Setting
        Clients sharing :math:`x^\star` (or identical), smooth strongly convex or quadratic
        (:math:`\mu = 0` included); one :math:`(\mu, L)` for all or one per client (each
        client's leaves bounded with its own constants in the check's certificate).
    participation : None, bool vector, process or sampler
        See :func:`flbounds.pep.expect.law_of` (exact expectation).
    rho_max : float, default 1
        The largest rate searched (the bisection starts on [0, rho_max]).
    printed : float, optional
        A printed rate to report beside the bracket (``flbounds.ledger.api.bounds.get(id)``).
    witness : bool, default True
        Whether to compute the witness's contraction.
    values : bool, default False
        Search over the lifted state (:mod:`.lyapunov_lmi`): the quadratic also reads every
        client's gradient at ``x``, plus :math:`q_i (f_i(x) - f_i^\star)` and the clients'
        values at their stored-gradient points (``P`` then covers the extra coordinates,
        ``params["q"]`` the values' weights). Never worse than without.
    warm : (float, float), optional
        ``(low, high)``: a rate believed not certifiable and one believed certifiable (for
        ``values=True``: the witness and the certified rate without the lift). The bisection's
        steps they decide are skipped, its path checked by one solve at each end
        (a failed check: the cold start); the bracket and ``P`` are the cold bisection's.

    Returns
    -------
    LyapunovRate
        ``certified`` (upper end), ``witness`` (lower end), the searched ``P``.

    Raises
    ------
    ValueError
        On a setting the search does not support, or ``rho_max`` not > 0.
    PEPSolveError
        When no quadratic V certifies ``rho_max``, the certifying solve is not accurate, or
        the certified value leaves the bisection's bracket.
    """
    check_setting(round_, setting)
    rho_max = check_positive(rho_max, "rho_max")
    printed = None if printed is None else float(printed)
    clock = time.perf_counter()
    search = Search(round_, setting, participation, values=values)
    lo, hi, found = _warm_start(search, rho_max, warm)
    if found is None:
        found = search.feasible(rho_max)
    if found is None:
        raise PEPSolveError(f"no quadratic Lyapunov function certifies rho <= {rho_max:g}")
    while hi - lo > BISECTION_TOL:
        mid = 0.5 * (lo + hi)
        if (step := search.feasible(mid)) is None:
            lo = mid
        else:
            hi, found = mid, step
    P, q = found
    # the ratio does not depend on (P, q)'s scale; the search's P (normalised by
    # P >= e_x e_x') has entries up to 1e4 with FOCUS, on which Clarabel fails, at unit
    # norm it does not
    scale = np.linalg.eigvalsh(P)[-1]
    P = P / scale
    info, accurate, P, shift = _checked(round_, setting, participation, P,
                                        None if q is None else q / scale)
    k = len(coordinates(round_, setting.n_clients))
    measure = lyapunov_measure(P[:k, :k], round_)
    params = dict(algorithm=round_.name, n_clients=setting.n_clients, mu=setting.mu,
                  L=setting.L, shift=shift)
    metric = "E[V(xi+)] / V(xi), lifted V searched" if values else measure.label
    check = make_result(info, printed=None, metric=metric, params=params)
    slack = CONSISTENCY * max(1.0, hi) + check.gap + gap_tolerance(check.worst)
    low_end = lo - slack if search.unknown == 0 else -np.inf  # lo is proved only then
    if not low_end <= check.worst <= hi + slack:
        raise PEPSolveError(f"the Lyapunov search and its check disagree: bisection "
                            f"[{lo:.9g}, {hi:.9g}], sup E[V+]/V = {check.worst:.9g}")
    low, instance = witness_rate(round_, setting, participation, measure) if witness else (None, ())
    return LyapunovRate(
        certified=check.worst, witness=low, search=(lo, hi), printed=printed, P=P * scale,
        accurate=accurate,
        coordinates=coordinates(round_, setting.n_clients, search.n_lifted), worst_case=check,
        witness_instance=instance, seconds=time.perf_counter() - clock,
        params=dict(check.params, n_leaves=search.n_leaves, n_constraints=search.n_constraints,
                    undecided_solves=search.unknown, values=bool(values),
                    q=None if q is None else (q / scale).tolist()))


def _checked(round_, setting, participation, P, q):
    """The check of ``(P, q)`` (unit-norm P): :func:`.lyapunov_check.plain_check` or, lifted,
    :func:`.lyapunov_lmi.lifted_check`; when it has no certificate (a start leaf left free
    by V, or a bracket too wide), the same for :math:`P + sI` with each shift of
    :data:`SHIFTS` in turn (another quadratic V, the one then reported). Returns ``(info,
    accurate, P, shift)``."""
    failures = []
    k = len(coordinates(round_, setting.n_clients))
    for shift in SHIFTS:
        shifted = P + shift * np.eye(len(P)) if shift else P
        try:
            if q is not None:
                info, accurate = lifted_check(round_, setting, participation, shifted, q)
            else:
                info, accurate = plain_check(round_, setting, participation,
                                             lyapunov_measure(shifted[:k, :k], round_))
            return info, accurate, shifted, shift
        except PEPSolveError as exc:
            failures.append(f"shift {shift:g}: {str(exc)[:300]}")
    raise PEPSolveError("no certified check of the searched V: " + " | ".join(failures))


def _warm_start(search, rho_max, warm):
    """The bisection's bracket after the steps ``warm = (low, high)`` decides: the path of
    the bisection on [0, rho_max] is followed, a midpoint below ``low`` taken as infeasible
    and one at or above ``high`` as feasible, until a midpoint falls in [low, high); the
    path's last feasible and last infeasible points are then each solved once (both are
    midpoints the cold bisection solves; by monotonicity they decide every skipped step).
    Returns ``(lo, hi, found)``: ``(0, rho_max, None)`` (a cold start) when ``warm`` is None
    or a check fails, else the bracket and the last feasible solve, from where the cold
    bisection would be after the same steps."""
    cold = (0.0, rho_max, None)
    if warm is None:
        return cold
    low, high = (float(v) for v in warm)
    lo, hi = cold[:2]
    while hi - lo > BISECTION_TOL:
        mid = 0.5 * (lo + hi)
        if mid < low:
            lo = mid
        elif mid >= high:
            hi = mid
        else:
            break
    if (found := search.feasible(hi)) is None:
        return cold
    if lo > 0.0 and search.feasible(lo) is not None:
        return cold
    return lo, hi, found


def safari_bracket(mu, L, q, local_steps, step_client, step_server, *,
                   printed=None) -> LyapunovRate:
    r"""SAFARI's strongly convex round (identical clients, no noise): the same bracket.

    The state is :math:`x` alone, so every quadratic :math:`V` is :math:`P\|x - x^\star\|^2`
    and the best certified rate is the one-round worst case
    (:func:`flbounds.pep.safari_rate`). The witness is the worst 1-D quadratic
    :math:`F = \lambda x^2/2` on a grid of :math:`[\mu, L]` (both ends included): a round
    multiplies :math:`x` by :math:`(1 - \eta_c\lambda)^K` (a client round, probability
    :math:`q`) or :math:`1 - \eta_s\lambda`, so :math:`E x_R^2 = \rho_\lambda^R x_0^2` with
    :math:`\rho_\lambda = q(1 - \eta_c\lambda)^{2K} + (1 - q)(1 - \eta_s\lambda)^2`.
    ``certified`` is the certificate of the one-round SDP's solve
    (:func:`.lyapunov_check.safari_check`), ``accurate`` that solve's value.

    Parameters
    ----------
    mu, L, q, local_steps, step_client, step_server : float, float, float, int, float, float
        As :func:`flbounds.pep.safari_rate`.
    printed : float, optional
        A printed rate (e.g. Thm 5's :math:`1 - \bar\eta`).

    Returns
    -------
    LyapunovRate
        ``P`` is ``[[1]]`` over ``("x",)``; ``search`` is the certified value twice.
    """
    from .lyapunov_check import safari_check

    clock = time.perf_counter()
    info, accurate = safari_check(mu, L, q, local_steps, step_client, step_server)
    check = make_result(info, printed=printed,
                        metric="E||x_{r+1} - x*||^2 / ||x_r - x*||^2 (one SAFARI round)",
                        params=dict(mu=mu, L=L, q=q, local_steps=local_steps,
                                    step_server=step_server, step_client=step_client,
                                    state_constraint=None))
    lam = np.linspace(mu, L, GRID)
    rates = q * (1 - step_client * lam) ** (2 * local_steps) + (1 - q) * (1 - step_server * lam)**2
    k = int(np.argmax(rates))
    return LyapunovRate(certified=check.worst, witness=float(rates[k]),
                        search=(check.worst, check.worst), printed=check.printed,
                        P=np.ones((1, 1)), coordinates=("x",), worst_case=check,
                        witness_instance=(float(lam[k]),),
                        seconds=time.perf_counter() - clock, params=check.params,
                        accurate=accurate)

__all__ = ["BISECTION_TOL", "CONSISTENCY", "SHIFTS", "LyapunovRate", "lyapunov_rate",
           "safari_bracket"]
