r"""Described rounds beyond one Lyapunov ratio: random rounds, several rounds, function values.

:func:`flbounds.pep.engine.worst_case` measures a quadratic :math:`V` of the state after one
round, in exact expectation through the moments of the round's random coefficients. The
rates of this package also need

- a round drawn at random (:class:`~flbounds.pep.describe.Mixture`: SAFARI's coin between a
  client round and a server step): :math:`E[V^+] = \sum_b q_b E_b[V^+]`, each branch exact
  (:func:`expected`);
- several rounds, or a function value at the next state (:math:`f(x^+)` is not a quadratic
  of the Gram basis, so the moments do not apply): one branch per participating set and per
  drawn round, :func:`unroll` (:math:`\prod_r (\sum_b |\mathcal S_b|)` leaves, exact);
- a class relaxation imposed where the round evaluates gradients (the bounded heterogeneity
  :math:`\|\nabla f_i - \nabla F\|^2 \le s`, a lower bound on :math:`F^\star`): :class:`Recorder`
  lists those points.

:func:`realize` turns a random point of :mod:`flbounds.pep.expect` into the PEPit point of one
participating set; it combines the coefficients leaf by leaf, so two realizations of one
vector do not differ by rounding in how they are written, and a point left as it was (a
non-participant's state) is the same PEPit point.
"""

from __future__ import annotations

from .anchor import origin
from .describe import Mixture, Round, single
from .engine import State, _functions, _star, initial_state, next_state
from .expect import RandomPoint, expectation, law_of


def branches(program, n_clients, *, keep_zero=False):
    """``[(probability, Round, ParticipationLaw)]`` of a :class:`Mixture` or a
    ``(Round, participation)`` pair, branches of probability 0 left out (unless
    ``keep_zero``)."""
    if isinstance(program, Round):
        program = single(program)
    elif isinstance(program, tuple):
        program = single(*program)
    if not isinstance(program, Mixture):
        raise ValueError("program must be a Round, a (Round, participation) pair or a Mixture")
    return [(float(b.probability), b.round, law_of(b.participation, n_clients))
            for b in program.branches if keep_zero or b.probability > 0]


def _combine(pairs):
    """:math:`\\sum_k c_k p_k` as one PEPit point, leaf by leaf (zeros dropped)."""
    from PEPit import Point

    if len(pairs) == 1 and pairs[0][0] == 1.0:
        return pairs[0][1]
    out = {}
    for c, p in pairs:
        for leaf, w in p.decomposition_dict.items():
            out[leaf] = out.get(leaf, 0.0) + c * w
    return Point(is_leaf=False, decomposition_dict={k: v for k, v in out.items() if v != 0.0})


def realize(value, law, k):
    """The PEPit point (or :class:`~flbounds.pep.engine.State`) that a random one of
    :mod:`flbounds.pep.expect` is on the ``k``-th set of ``law``."""
    if isinstance(value, State):
        return State({n: realize(v, law, k) for n, v in value.server.items()},
                     [{n: realize(v, law, k) for n, v in c.items()} for c in value.clients])
    if not isinstance(value, RandomPoint):
        return value
    pairs = []
    for key, point in value.terms.items():
        c = 1.0
        for variable in key:
            c *= float(law.values(variable)[k])
        if c != 0.0:
            pairs.append((c, point))
    return _combine(pairs) if pairs else origin()


def unroll(program, funcs, start, n_rounds=1):
    """Every branch of ``n_rounds`` rounds from ``start``: ``levels[r]`` is the list of
    ``(probability, State)`` after ``r`` rounds (``levels[0] = [(1, start)]``), one entry per
    sequence of drawn rounds and participating sets."""
    parts = branches(program, len(funcs))
    levels = [[(1.0, start)]]
    for _ in range(int(n_rounds)):
        children = []
        for prob, state in levels[-1]:
            for weight, round_, law in parts:
                after = next_state(round_, funcs, state)
                children.extend((prob * weight * float(pk), realize(after, law, k))
                                for k, pk in enumerate(law.probs))
        levels.append(children)
    return levels


def expected(program, funcs, start, value, star=None, *, run_all=False):
    r""":math:`E[V(X^+)]` after one round of ``program`` (exact: :math:`\sum_b q_b` times each
    branch's moment expectation), ``value(state, star)`` a quadratic of the state.
    ``run_all`` also runs the branches of probability 0 (their gradients become points of
    the SDP, where a relaxation recorded by :class:`Recorder` is imposed)."""
    total = None
    wrapped = None if star is None else star.wrapped(lambda p: RandomPoint({(): p}))
    for weight, round_, law in branches(program, len(funcs), keep_zero=run_all):
        after = next_state(round_, funcs, start)
        if weight > 0:
            term = weight * expectation(value(after, wrapped), law)
            total = term if total is None else total + term
    return total


class Recorded:
    """A PEPit function that records the points its gradient is taken at (``log``)."""

    def __init__(self, f, log):
        self._f, self._log = f, log

    def gradient(self, z):
        self._log.setdefault(id(z), z)
        return self._f.gradient(z)

    def __call__(self, z):
        return self._f(z)

    def __getattr__(self, name):
        return getattr(self._f, name)


class Recorder:
    """The clients' functions wrapped by :class:`Recorded` (one log for all): ``funcs``, and
    ``points``, every point a gradient was taken at, in order, each once."""

    def __init__(self, funcs):
        self._log = {}
        wrapped = {id(f): Recorded(f, self._log) for f in funcs}
        self.funcs = [wrapped[id(f)] for f in funcs]

    @property
    def points(self):
        return list(self._log.values())


def declare(problem, setting, form="origin"):
    """The clients' PEPit functions of ``setting`` and the minimizer (``form`` as in
    :func:`flbounds.pep.engine.build`; None: no minimizer): ``(funcs, star)``."""
    funcs = _functions(problem, setting)
    return funcs, None if form is None else _star(funcs, setting, form)


def heterogeneity(problem, funcs, points, bound):
    r""":math:`\|\nabla f_i(y) - \nabla F(y)\|^2 \le` ``bound`` for every client at every
    point ``y`` (:math:`F` the clients' mean)."""
    n = len(funcs)
    for y in points:
        grads = [f.gradient(y) for f in funcs]
        mean = grads[0]
        for g in grads[1:]:
            mean = mean + g
        mean = (1 / n) * mean
        for g in grads:
            problem.add_constraint((g - mean) ** 2 <= bound)


def build_mixture(program, setting, measure, *, form="origin"):
    r"""The PEPit problem of one round of ``program`` (a random round) measured by
    ``measure`` (unsolved): :math:`V \le 1` at the start, the performance metric
    :math:`E[V(X^+)] = \sum_b q_b E_b[V(X^+)]` (:func:`expected`).

    Parameters
    ----------
    program : Mixture, Round or (Round, participation)
    setting : Setting
    measure : Measure
        A one-run measure.
    form : {"origin", "values", "pepit"}
        Where a minimizer the clients do not share is placed (as in
        :func:`flbounds.pep.engine.build`).

    Returns
    -------
    (PEPit.PEP, dict)
        The problem and its parts (``funcs``, ``start``, ``star``, ``branches``: the
        ``(probability, Round, ParticipationLaw)`` of :func:`branches`).
    """
    from PEPit import PEP

    _check_one_run(setting, measure)
    parts = branches(program, setting.n_clients)
    problem = PEP()
    funcs, star = declare(problem, setting, form)
    start = initial_state(parts[0][1], funcs)
    problem.set_initial_condition(measure.value(start, star) <= 1)
    problem.set_performance_metric(expected(program, funcs, start, measure.value, star))
    return problem, dict(funcs=funcs, start=start, star=star, branches=parts)


def _check_one_run(setting, measure):
    from .describe import Measure, Setting

    if not isinstance(setting, Setting) or not isinstance(measure, Measure) or \
            measure.runs != 1:
        raise ValueError("setting and measure must be a Setting and a one-run Measure")


def mixture_worst_case(program, setting, measure, *, printed=None, form="origin",
                       certified=False):
    r"""The worst :math:`E[V(X^+)]` over :math:`V(X) \le 1` after one round of ``program`` (a
    :class:`~flbounds.pep.describe.Mixture`, a Round, or a ``(Round, participation)`` pair):
    what :func:`flbounds.pep.engine.worst_case` returns for a Mixture (its one entry point).

    Parameters
    ----------
    program : Mixture, Round or (Round, participation)
    setting : Setting
    measure : Measure
        A one-run measure (:func:`~flbounds.pep.measures.lyapunov`,
        :func:`~flbounds.pep.measures.distance`).
    printed : float, optional
        A printed rate to report beside the worst case.
    form : {"origin", "values", "pepit"}
        Where a minimizer the clients do not share is placed (as in
        :func:`flbounds.pep.engine.build`).
    certified : bool
        As in :func:`flbounds.pep.engine.worst_case`: accept the certified upper bound
        when no solve is accurate (needs :func:`flbounds.pep.engine.certifiable`; x* not
        shared: :func:`flbounds.pep.certify.certified_star`). Without it that bound is still
        the fallback where it applies.

    Returns
    -------
    WorstCase
        The checked solve (:func:`flbounds.pep.sdp.solve`, or the certified bound) with the
        branches in ``params``.
    """
    from .certify import certified_star, solve_certified
    from .certify_lmi import stationary_bounds
    from .engine import _star_route, certifiable
    from .inputs import check_certified
    from .result import make_result
    from .sdp import PEPSolveError, solve_first
    from .unbounded_said import raise_said

    _check_one_run(setting, measure)
    check_certified(certified)
    if certified and not certifiable(setting, measure):
        raise ValueError("certified: a certified solve needs a measure with bounds and clients "
                         "sharing x* (or identical), or star_bounds")
    problem, parts = build_mixture(program, setting, measure, form=form)

    def certificate():
        def again():
            problem, parts = build_mixture(program, setting, measure, form=form)
            funcs = list({id(f): f for f in parts["funcs"]}.values())
            initial = measure.start_bounds(parts["start"], parts["star"], funcs, shared=True)
            return problem, funcs, stationary_bounds(funcs, initial)

        if _star_route(setting, measure):   # x* not shared: engine.certified_solve's route
            return certified_star(lambda: build_mixture(program, setting, measure, form=form),
                                  setting.L, measure)
        return solve_certified(again, setting.L)

    fallback = certificate if certifiable(setting, measure) else None
    try:
        info = certificate() if certified else solve_first([(lambda: problem, 1.0)],
                                                           certified=fallback)
    except PEPSolveError as exc:     # unbounded, or a solver failure: said which
        raise_said(exc, lambda: build_mixture(program, setting, measure, form=form), measure)
    return make_result(info, printed=printed, metric=measure.label, params=dict(
        branches=[dict(probability=w, algorithm=r.name, local=r.local.label,
                       server=r.server.label, participation=law.label)
                  for w, r, law in parts["branches"]],
        n_clients=setting.n_clients, mu=setting.mu, L=setting.L,
        function_class=setting.function_class, identical=setting.identical,
        common_minimizer=setting.common_minimizer))


__all__ = ["Recorded", "Recorder", "branches", "build_mixture", "declare", "expected",
           "heterogeneity", "initial_state", "mixture_worst_case", "realize", "unroll"]
