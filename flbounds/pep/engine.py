r"""Turn a described round (:mod:`flbounds.pep.describe`) into a PEPit problem and solve it.

:func:`build` declares one PEPit function per client (one for all when the clients are
identical), places :math:`x^\star` at the origin with every function's value 0 there
(translation and constant symmetries, :mod:`.anchor`; stationary for every client with a
common minimizer, else with gradients summing to 0), makes the round's initial state (free
points, or derived: stored gradients, client sums), bounds the measure's :math:`V` by 1 there,
runs every client's local update once from that state, and recombines the results with the
participation's random coefficients (:mod:`.expect`): a non-participant keeps its state, the
server receives each message aggregated by its rule, then takes its step. The performance
metric is the exact expectation of :math:`V` at the next state, a linear function of the
Gram matrix. :func:`worst_case` solves it with the project's discipline
(:func:`flbounds.pep.sdp.solve`: an inaccurate solve raises :class:`~.sdp.PEPSolveError`; the
gap and status are in the returned :class:`~.result.WorstCase`).
"""

from __future__ import annotations

import numpy as np

from .anchor import anchored_minimizer, minimizer, origin
from .certify_quadratic import client_functions as _functions
from .describe import Measure, Mixture, Round, Setting
from .expect import RandomPoint, expectation, indicator, law_of, random_sum, weight
from .inputs import check_certified, check_inputs
from .measures import made_leaves
from .result import WorstCase, make_result
from .sdp import PEPSolveError, solve_first
from .unbounded_said import raise_said


class Star:
    """The minimizer :math:`x^\\star` (``x``) and every client's gradient there
    (``gradients``, evaluated on first use: a measure that does not read them adds nothing to
    the SDP)."""

    def __init__(self, x, funcs=(), gradients=None):
        self.x, self._funcs, self._gradients = x, funcs, gradients

    @property
    def gradients(self):
        if self._gradients is None:
            self._gradients = [f.gradient(self.x) for f in self._funcs]
        return self._gradients

    def wrapped(self, wrap):
        """The same minimizer with its points passed through ``wrap``."""
        return _WrappedStar(self, wrap)


class _WrappedStar:
    def __init__(self, star, wrap):
        self.x, self._star, self._wrap = wrap(star.x), star, wrap

    @property
    def gradients(self):
        return [self._wrap(g) for g in self._star.gradients]


class State:
    """A round's state: server points by name (``state["x"]``) and each client's points
    (``state.client("z")``: one per client)."""

    def __init__(self, server, clients):
        self.server, self.clients = dict(server), [dict(c) for c in clients]

    def __getitem__(self, name):
        return self.server[name]

    def client(self, name):
        return [c[name] for c in self.clients]

    def __sub__(self, other):
        return State({k: v - other.server[k] for k, v in self.server.items()},
                     [{k: v - o[k] for k, v in c.items()}
                      for c, o in zip(self.clients, other.clients, strict=True)])


#: equivalent placements of a minimizer that is not shared (:mod:`.anchor`)
FORMS = ("origin", "values", "pepit")


def _star(funcs, setting, form):
    if setting.common_minimizer or setting.identical:
        x_star = anchored_minimizer(funcs, common=True)
        return Star(x_star, gradients=[origin() for _ in funcs])
    return Star(minimizer(funcs, form), funcs)


def initial_state(round_: Round, funcs, *, pin_model=False) -> State:
    """The state at the start of the round: free points, then the derived ones
    (:attr:`Round.initial`); ``pin_model`` puts ``x`` at the origin (the second run of a
    two-run measure: translation symmetry)."""
    from PEPit import Point

    derived = round_.initial
    server = {k: (origin() if pin_model and k == "x" else Point())
              for k in round_.server_state if k not in derived}
    clients = [{k: Point() for k in round_.client_state if k not in derived} for _ in funcs]
    for name, how in derived.items():
        if how.kind == "copy":
            for c in clients:
                c[name] = server[how.of]
    for name, how in derived.items():
        if how.kind == "gradient":
            for f, c in zip(funcs, clients, strict=True):
                c[name] = f.gradient(c[how.of])
    for name, how in derived.items():
        if how.kind in ("sum", "mean"):
            total = clients[0][how.of]
            for c in clients[1:]:
                total = total + c[how.of]
            server[name] = total if how.kind == "sum" else (1.0 / len(clients)) * total
    return State(server, clients)


def next_state(round_: Round, funcs, state: State) -> State:
    """The state after one round as :class:`~.expect.RandomPoint` s (random in the
    participating set)."""
    clients, messages = [], {m: [] for m in round_.push}
    for i, f in enumerate(funcs):
        pulled = {k: state.server[k] for k in round_.pull}
        new, sent = round_.local.run(f, pulled, dict(state.clients[i]))
        unknown = set(new) - set(round_.client_state)
        missing = set(round_.push) - set(sent)
        if unknown or missing:
            raise ValueError(f"local update of {round_.name!r}: state {sorted(unknown)} not in "
                             f"client_state, messages {sorted(missing)} not sent")
        s = indicator(i)
        clients.append({k: RandomPoint({(): old}) + (s * (new[k] - old) if k in new else 0)
                        for k, old in state.clients[i].items()})
        for m in round_.push:
            messages[m].append(sent[m])
    aggregated = {m: random_sum([weight(rule, i) for i in range(len(funcs))], messages[m])
                  for m, rule in round_.push.items()}
    server = {k: RandomPoint({(): v}) for k, v in state.server.items()}
    update = round_.server.update(server, aggregated)
    unknown = set(update) - set(round_.server_state)
    if unknown:
        raise ValueError(f"server step of {round_.name!r} sets {sorted(unknown)}, not in "
                         "server_state")
    return State({**server, **update}, clients)


def build(round_: Round, setting: Setting, measure: Measure, participation=None, *,
          form="origin"):
    """The PEPit problem of ``round_`` over ``setting`` measured by ``measure`` (unsolved).

    ``form`` places a minimizer the clients do not share: at the origin with the function
    values pinned (``"origin"``), values pinned only (``"values"``), or PEPit's stationary
    point of the sum (``"pepit"``); the three have the same value and differ in conditioning
    (:mod:`.anchor`). A shared minimizer is always at the origin, every client stationary
    there with value 0 (the form :mod:`.certify` needs).

    Parameters
    ----------
    round_ : Round
    setting : Setting
    measure : Measure
    participation : None, bool vector, process or sampler
        See :func:`flbounds.pep.expect.law_of`.
    form : {"origin", "values", "pepit"}, default "origin"
        Where a minimizer the clients do not share is placed (above).

    Returns
    -------
    (PEPit.PEP, dict)
        The problem and its description (``law``: the :class:`~.expect.ParticipationLaw`,
        ``funcs``, ``start``: the initial :class:`State`, ``star``; ``runs``: two runs' leaf
        points, each run's in the order made, and ``other``: the second run's start, else
        None).
    """
    from PEPit import PEP

    check_inputs(round_, setting, measure)  # each argument named, then a probe run
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    law = law_of(participation, setting.n_clients)
    problem = PEP()
    funcs = _functions(problem, setting, about=measure.runs == 1)
    runs = other = None
    if measure.runs == 2:   # runs: each run's new leaves, in order (.certify_tworuns)
        star, runs = None, ([], [])
        start, other = made_leaves(runs[0], lambda: initial_state(round_, funcs)), \
            made_leaves(runs[1], lambda: initial_state(round_, funcs, pin_model=True))
        problem.set_initial_condition(measure.value(start - other, None) <= 1)
        after = made_leaves(runs[0], lambda: next_state(round_, funcs, start)) - \
            made_leaves(runs[1], lambda: next_state(round_, funcs, other))
        metric = measure.value(after, None)
    else:
        star = _star(funcs, setting, form)
        start = initial_state(round_, funcs)
        problem.set_initial_condition(measure.value(start, star) <= 1)
        star_after = star.wrapped(lambda p: RandomPoint({(): p}))
        metric = measure.value(next_state(round_, funcs, start), star_after)
    problem.set_performance_metric(expectation(metric, law))
    return problem, dict(law=law, funcs=funcs, start=start, star=star, runs=runs,
                         other=other)


#: said in :func:`worst_case`'s docstring and left out of the package-level one (entry.py)
MIXTURE_NOTE = """
    ``flbounds.pep.worst_case`` (:func:`.entry.worst_case`) is this function for a Round and
    :func:`.scenarios.mixture_worst_case` for a Mixture; called here, a Mixture is refused."""


def worst_case(round_: Round, setting: Setting, measure: Measure, participation=None,
               *, printed=None, certified=False, classes=None) -> WorstCase:
    r"""The worst case of ``measure`` after one round of ``round_`` over ``setting``, exact
    in expectation over ``participation`` (module docstring of :mod:`.describe`).
    ``flbounds.pep.worst_case`` (:func:`.entry.worst_case`) is this function for a Round and
    :func:`.scenarios.mixture_worst_case` for a Mixture; called here, a Mixture is refused.

    Parameters
    ----------
    round_ : Round or Mixture
        A :class:`~.describe.Mixture` is a round drawn at random (SAFARI's coin): each
        branch under its own participation law, the expectation the probability-weighted
        sum of the branches' (:func:`.scenarios.mixture_worst_case`, same SDP and result).
    setting : Setting
    measure : Measure
    participation : None, bool vector, process or sampler
        See :func:`flbounds.pep.expect.law_of`; None with a Mixture (its branches carry
        theirs).
    printed : float, optional
        A printed rate to report beside the worst case.
    certified : bool
        Accept the rigorous upper bound rebuilt from the solver's multipliers (status
        ``certified (...)``, ``gap`` the bracket width; routes: :func:`certified_solve`).
        Needs :func:`certifiable`. Without it, that bound is still the fallback when no
        solve is accurate and :func:`certifiable` holds (:func:`solve_built`).
    classes : partition of the clients, optional
        Symmetry classes of interchangeable clients: the SDP then has one representative per
        class and its size does not grow with N (:func:`.symmetric.worst_case_symmetric`,
        same value; ``certified`` as there: :mod:`.certify_symmetric`, or
        :mod:`.certify_symmargin` where no a-priori bound applies).

    Returns
    -------
    WorstCase
        The worst-case value (its solve status and gap) with the round's, setting's and
        participation law's description in ``params``.

    Raises
    ------
    PEPSolveError
        When no solver returns an accurate solve (or, with ``certified``, no certificate
        within its bracket tolerance).
    """
    if isinstance(round_, Mixture):  # the package's worst_case dispatches Mixtures
        raise ValueError("round_: flbounds.pep.engine.worst_case takes a Round, got a Mixture; "
                         "call flbounds.pep.worst_case, which solves a Mixture by scenarios")
    check_certified(certified)
    check_inputs(round_, setting, measure)  # each argument named, then a probe run
    if classes is not None:
        from .symmetric import worst_case_symmetric

        return worst_case_symmetric(round_, setting, measure, participation, classes=classes,
                                    printed=printed, certified=certified)
    try:
        if certified:
            info, law = certified_solve(round_, setting, measure, participation)
        else:
            problem, parts = build(round_, setting, measure, participation)
            info, law = solve_built(problem, round_, setting, measure, participation), \
                parts["law"]
    except PEPSolveError as exc:     # unbounded, or a solver failure: said which
        raise_said(exc, lambda: build(round_, setting, measure, participation), measure)
    return make_result(info, printed=printed, metric=measure.label, params=dict(
        algorithm=round_.name, local=round_.local.label, server=round_.server.label,
        push={m: repr(rule) for m, rule in round_.push.items()}, n_clients=setting.n_clients,
        mu=setting.mu, L=setting.L, function_class=setting.function_class,
        identical=setting.identical, common_minimizer=setting.common_minimizer,
        participation=law.label, empty_probability=law.empty_probability,
        inclusion=np.round(law.inclusion, 12).tolist()))


def certifiable(setting: Setting, measure: Measure) -> bool:
    r"""Whether :func:`certified_solve` applies: a two-run measure (:mod:`.certify_tworuns`;
    quadratics pinned), or any one-run measure: clients sharing :math:`x^\star`
    (:func:`certifiable_shared`) or not (:func:`.certify.certified_star`), the start bounds
    the measure's ``bounds`` and ``star_bounds`` where given, the rest derived from :math:`V`
    (:meth:`.measures.Measure.start_bounds`, :mod:`.certify_derived`; a point :math:`V`
    leaves unbounded is then reported, not certified); any class, ``mu = 0`` included
    (:mod:`.certify_quadratic`); one ``(mu, L)`` for all or one per client (each leaf bounded
    with its own function's constants: :func:`.certify.leaf_bounds`,
    :func:`.certify_lmi.stationary_bounds`).

    Parameters
    ----------
    setting : Setting
    measure : Measure

    Returns
    -------
    bool
    """
    if measure.runs == 2:
        return True
    return certifiable_shared(setting, measure) or _star_route(setting, measure)


def certifiable_shared(setting: Setting, measure: Measure) -> bool:
    r"""Whether the shared-minimizer certificate (:func:`.certify.solve_certified`) applies: a
    one-run measure, clients sharing :math:`x^\star` (or identical), one ``(mu, L)`` for all
    or per client (any smooth class: :func:`.certify.leaf_bounds`); the start bounds are
    ``measure.bounds`` or, without it, derived from :math:`V` (:mod:`.certify_derived`)."""
    return measure.runs == 1 and bool(setting.common_minimizer or setting.identical)


def _star_route(setting, measure):
    """The route to :func:`.certify.certified_star` (:func:`certifiable`)."""
    return measure.runs == 1 and not (setting.common_minimizer or setting.identical)


def solve_built(problem, round_: Round, setting: Setting, measure: Measure,
                participation=None):
    """:func:`.sdp.solve` of ``problem`` (built by :func:`build` from the same arguments);
    when no solve is accurate and the SDP is :func:`certifiable`, the certified upper bound
    (:func:`certified_solve`, status ``certified (...)``) instead of the error.

    Parameters
    ----------
    problem : PEPit.PEP
        ``build(round_, setting, measure, participation)[0]``, unsolved.
    round_ : Round
    setting : Setting
    measure : Measure
    participation : None, bool vector, process or sampler

    Returns
    -------
    SolveInfo

    Raises
    ------
    PEPSolveError
        When no solve is accurate and no certificate is found (or none applies).
    """
    fallback = (lambda: certified_solve(round_, setting, measure, participation)[0]) \
        if certifiable(setting, measure) else None
    return solve_first([(lambda: problem, 1.0)], certified=fallback)


def certified_solve(round_: Round, setting: Setting, measure: Measure, participation=None, *,
                    alternatives=()):
    """The certified bound of the described round (see :func:`worst_case`): two runs,
    :func:`.certify_tworuns.solve_two_runs`; x* not shared, :func:`.certify.certified_star`;
    else :func:`.certify.solve_certified` (``alternatives`` as there). Returns
    ``(SolveInfo, ParticipationLaw)``."""
    from .certify import certified_star, solve_certified
    from .certify_lmi import stationary_bounds
    from .certify_tworuns import solve_two_runs

    law = []

    def built():
        law.append(build(round_, setting, measure, participation))
        return law[-1]

    def parts_of():
        problem, parts = built()
        funcs = list({id(f): f for f in parts["funcs"]}.values())
        initial = measure.start_bounds(parts["start"], parts["star"], funcs, shared=True)
        return problem, funcs, stationary_bounds(funcs, initial)

    if measure.runs == 2:
        info = solve_two_runs(built)
    elif _star_route(setting, measure):
        info = certified_star(built, setting.L, measure)
    elif not certifiable_shared(setting, measure):
        raise ValueError("setting: a certified one-run solve takes the star route (x* not "
                         "shared) or the shared one (clients sharing x*, or identical)")
    else:
        info = solve_certified(parts_of, setting.L, alternatives=alternatives)
    return info, law[0][1]["law"]

__all__ = ["FORMS", "Star", "State", "build", "certifiable", "certifiable_shared",
           "certified_solve", "initial_state", "next_state", "solve_built",
           "worst_case"]
