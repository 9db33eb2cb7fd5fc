r"""The worst case of an FL round with one representative per class of interchangeable clients.

Let the N clients be partitioned into classes :math:`C_1, \dots, C_m` (:class:`~.classlaw.Classes`,
sizes :math:`n_c`) such that the problem does not change when clients of one class are
permuted: one function class per class (:math:`\mathcal F_{\mu_c, L_c}`, the constants may
differ between classes), the participation law exchangeable within each class
(:mod:`.classlaw`: Bernoulli with one probability per class, uniform fixed-size sampling,
full participation), aggregation weights equal within each class, and a measure that is
symmetric in the clients. The PEP of one round (:mod:`.engine`) maximises a linear function
of the Gram matrix :math:`G` and the function values over a convex set; a permutation
:math:`\sigma` within the classes maps a feasible :math:`(G, F)` to a feasible one with the same
value, so the average over the group is feasible and optimal (Colla and Hendrickx 2022,
2024, for interchangeable agents). The optimum is therefore attained at a *symmetric*
:math:`(G, F)`, and the reduced PEP below is the original one restricted to those.

**Classes of different constants.** The group is the product of the permutation groups of
the classes: :math:`\sigma` never sends a client of class c to one of class d. The
interpolation conditions of client :math:`i \in C_c` involve only its own points and the
constants :math:`(\mu_c, L_c)`; :math:`\sigma` maps them to those of :math:`\sigma(i) \in C_c`,
of the same constants, so the constraint set is invariant even when the classes' constants
differ, and the averaged :math:`(G, F)` stays feasible (a convex combination of feasible
points of one convex set). Averaging over permutations across classes would mix
:math:`\mathcal F_{\mu_c, L_c}` with :math:`\mathcal F_{\mu_d, L_d}` and is not used. Hence
each representative carries its own class's constants (:func:`.symgram.class_constants`), and
a class mixing two constants is refused: its clients are not interchangeable.

**Symmetric Gram matrices.** Write client :math:`i \in C_c`'s vectors (start state, gradients,
every point its local run creates: a list indexed by the same names for every client of the
class) as :math:`u_i = \bar u_c + e_i` with :math:`\bar u_c = n_c^{-1}\sum_{j \in C_c} u_j`.
Symmetry makes :math:`\langle s, e_i\rangle = 0` for every shared vector and class mean
:math:`s`, :math:`\langle e_i, e_k\rangle = 0` across classes, and within a class

.. math:: \langle e_i^a, e_i^b\rangle = \Delta_c^{ab}, \qquad
          \langle e_i^a, e_j^b\rangle = -\frac{\Delta_c^{ab}}{n_c - 1} \quad (i \ne j),

(:math:`\sum_{j} e_j = 0`). The full Gram matrix is positive semidefinite iff the Gram matrix
of the shared vectors and class means is, and every :math:`\Delta_c \succeq 0` (its
eigenspaces: the class means, and the :math:`(n_c - 1)`-fold complement where it acts as
:math:`\frac{n_c}{n_c - 1}\Delta_c`); conversely such blocks are realised by
:math:`e_i = U_i \otimes \Delta_c^{1/2}` with :math:`U_i` the vertices of a regular simplex
(:math:`\langle U_i, U_j\rangle = 1` or :math:`-1/(n_c - 1)`). :math:`\Delta_c = 0` when
:math:`n_c = 1`. Function values are symmetric too: one per class and point.

**The reduced PEP.** One PEPit function per class (the class representative) and, for every
client vector of class c, two Gram coordinates: the mean :math:`\bar u` and the deviation
:math:`e` (one coordinate for a class of one client); the representative's point is
:math:`\bar u + e`, and the constraints :math:`\langle e^c, v\rangle = 0` for every
coordinate :math:`v` outside class c's deviations make the Gram matrix block diagonal,
i.e. exactly the conditions above. The representative's interpolation conditions are those
of every client of its class (they only involve one client's points and the class's
:math:`(\mu_c, L_c)`). Shared points (the
server's) are coordinates of their own; a server point that sums client points is
:math:`\sum_i u_i = \sum_c n_c \bar u_c`. With a minimizer the clients do not share,
:math:`\sum_i \nabla f_i(x^\star) = \sum_c n_c \bar g_c^\star = 0`.

**Exact expectation.** A next state is affine in per-client random coefficients
(:mod:`.expect`): a client's own (:math:`s_i`), or a sum over the clients of a class
(:math:`\sum_{j \in C_c} w_j(S) m_j`). With an exchangeable law their moments depend only on
the classes and on whether two clients coincide (:meth:`.classlaw.ClassLaw.moment`), so the
expected inner product of two sums is

.. math:: E\Big\langle \sum_{j \in C_c} r_j a_j, \sum_{k \in C_d} r'_k b_k\Big\rangle
          = n_c E[r_i r'_i]\langle a, b\rangle_{=} + n_c(n_c - 1) E[r_i r'_j]
            \langle a, b\rangle_{\ne} \quad (c = d), \qquad n_c n_d E[r_i r'_k]
            \langle \bar a, \bar b\rangle \quad (c \ne d),

with :math:`\langle a, b\rangle_{=} = \langle \bar a, \bar b\rangle + \langle e_a, e_b\rangle`
(one client) and :math:`\langle a, b\rangle_{\ne} = \langle \bar a, \bar b\rangle -
\langle e_a, e_b\rangle / (n_c - 1)` (two clients of one class), :math:`a, b` the
representative's vectors. A client's own term against a sum splits the same way into
:math:`j = i` (one term) and :math:`j \ne i` (:math:`n_c - 1` terms, or :math:`n_d` of another
class). Every coefficient is a number computed from :math:`n_c` and the class law, so the
SDP's size depends on the number of classes and the round, not on N. Sampling with
replacement has counts in place of indicators; its moments given the class totals are in
:mod:`.counts` (:class:`.classcounts.CountClassLaw`), used here unchanged.

**Measures.** A symmetric measure :math:`V = Q_0(\text{server}) + \sum_i Q_1(\text{server},
\text{client}_i)` is evaluated on lists holding one entry per class (``state.client(name)``,
``star.gradients``): with class c listed k times the value is :math:`V_k = Q_0 + \dots + k
Q_{1,c}`, so :math:`V = V_1 + \sum_c (n_c - 1)(V_2^{(c)} - V_1)`; the second difference
:math:`V_3^{(c)} - 2 V_2^{(c)} + V_1` must vanish, else the measure is not of this form
(e.g. :math:`\|\sum_i z_i\|^2`) and ``ValueError`` is raised.

**Non-convex clients** (``function_class="smooth"``: every :math:`f_i` L-smooth, not
necessarily convex). Nothing above uses convexity. The PEP's variables are still the Gram
matrix and the function values; the interpolation conditions of the L-smooth class (Taylor,
Hendrickx and Glineur 2017, Thm 3.10: for every two points of one function,
:math:`f_a - f_b \ge \tfrac12\langle g_a + g_b, x_a - x_b\rangle + \tfrac1{4L}\|g_a -
g_b\|^2 - \tfrac L4\|x_a - x_b\|^2`) are, like the convex ones, linear inequalities in
:math:`(G, F)` between the points of one function, so the feasible set is convex, a
permutation within a class maps it onto itself (client i's conditions become those of
:math:`\sigma(i)`, of the same L), the average over the group is feasible, and the block
form of a symmetric Gram matrix is a fact about PSD matrices only. Each representative is an
L_c-smooth PEPit function (``mu`` is ignored, so clients differing only in ``mu`` may share a
class). :math:`x^\star` is then a stationary point of :math:`\sum_i f_i` (every client
stationary there with a shared one), each value pinned at 0 there: a constant per function,
which the smooth class's conditions do not see.

A proximal step (``local_prox``: :math:`z = x - \gamma \nabla f_i(z)`) is the oracle read
backwards: the representative's gradient at z is a class client vector :math:`\bar g + e`, so
z is one too (:meth:`.symgram.Representative.proximal_step`), and its interpolation
conditions are those of every client of the class.

**The quadratic class with** :math:`\mu_c = 0` (one-run measures). PEPit's class makes the
representative's stationary point a class vector, free along the Hessian's kernel, so the
reduced SDP has an unbounded feasible set (no accurate solve without a shared minimizer, no
certificate at all). Such a class is declared as in the direct form instead
(:func:`.certify_quadratic.quadratic_class`: its conditions written about its first point,
:math:`(x^\star, \bar g^\star_c + e^\star_c, 0)`, added before any other). Those conditions
are convex in :math:`(G, F)` (equalities and one LMI per client) and a permutation within
the class maps client i's first point to client :math:`\sigma(i)`'s, so the averaging above
applies unchanged and the reduction stays exact; the proof is in the docstring of
:mod:`.certify_quadratic` ("In the symmetric form"). With :math:`\mu_c > 0` PEPit's class is
kept (the two are the same class); two runs keep it and pin its stationary vectors
(:mod:`.certify_tworuns`).

Limits: identical clients (one function for all, ``Setting.identical``) and local updates that
add points to their function other than through ``f.gradient`` or ``f.proximal_step`` are
refused. A certified upper bound, valid whatever the solver's accuracy, is rebuilt from the
reduced solve's multipliers for every one-run measure: from a-priori bounds when the clients
share :math:`x^\star` and the measure bounds the start (:mod:`.certify_symmetric`; the
quadratic class's LMIs with :math:`\mu > 0`: :mod:`.certify_lmi`), else with a margin
(:mod:`.certify_symmargin`, the LMIs' multipliers made PSD; the quadratic class with
:math:`\mu = 0` takes this route too, shared minimizer or not; it derives why two runs have
none).
The tests compare the reduced SDP with :func:`.engine.worst_case` at N = 2..8; in the
built-in rounds with their built-in measures the deviation blocks vanish at the optimum (the
worst case has identical clients within a class), and a measure that budgets the clients'
heterogeneity, :math:`\|x - x^\star\|^2 + \sum_i \|\nabla f_i(x^\star)\|^2`, is where they
carry the value.

References
----------
S. Colla and J. M. Hendrickx, Automated performance estimation for decentralized
optimization via network size independent problems, CDC 2022, arXiv:2210.00695; Exploiting
agent symmetries for performance analysis of distributed optimization methods,
arXiv:2403.11724 (2024).
"""

from __future__ import annotations

import numpy as np

from .anchor import origin, zero
from .certify_quadratic import quadratic_class
from .classcounts import count_class_law
from .classlaw import class_law, classes_of
from .counts import draws_of
from .describe import Measure, Round, Setting
from .inputs import check_certified
from .measures import made_leaves
from .result import WorstCase, make_result
from .sdp import PEPSolveError, solve_first
from .symgram import (
    Context,
    Representative,
    Space,
    SymPoint,
    SymStar,
    SymState,
    class_constants,
    summed,
)
from .unbounded_said import raise_said


def _start(round_, funcs, space, sizes, pin_model=False):
    derived = round_.initial
    server = {k: (origin() if pin_model and k == "x" else space.leaf())
              for k in round_.server_state if k not in derived}
    clients = [{k: space.client(c) for k in round_.client_state if k not in derived}
               for c in range(len(sizes))]
    for name, how in derived.items():
        if how.kind == "gradient":
            for f, own in zip(funcs, clients, strict=True):
                own[name] = f.gradient(own[how.of])
    for name, how in derived.items():
        if how.kind in ("sum", "mean"):
            total = origin()
            for n, own in zip(sizes, clients, strict=True):
                total = total + n * space.split(own[how.of])[0]
            server[name] = total if how.kind == "sum" else (1.0 / sum(sizes)) * total
    return server, clients


def _wrap(server, clients, ctx):
    return SymState({k: SymPoint({(None, ()): v}, ctx) for k, v in server.items()},
                    [{k: SymPoint({(("client", c), ()): v}, ctx) for k, v in own.items()}
                     for c, own in enumerate(clients)])


def _next(round_, funcs, server, clients, ctx):
    new_clients, aggregated = [], {m: SymPoint({}, ctx) for m in round_.push}
    for c, (f, own) in enumerate(zip(funcs, clients, strict=True)):
        pulled = {k: server[k] for k in round_.pull}
        new, sent = round_.local.run(f, pulled, dict(own))
        unknown, missing = set(new) - set(round_.client_state), set(round_.push) - set(sent)
        if unknown or missing:
            raise ValueError(f"local update of {round_.name!r}: state {sorted(unknown)} not in "
                             f"client_state, messages {sorted(missing)} not sent")
        me = ("client", c)
        new_clients.append({k: SymPoint({(me, ()): old, **({(me, (("in",),)): new[k] - old}
                                                           if k in new else {})}, ctx)
                            for k, old in own.items()})
        for m, rule in round_.push.items():
            aggregated[m] = aggregated[m] + SymPoint({(("sum", c), (("weight", rule),)):
                                                      sent[m]}, ctx)
    state = {k: SymPoint({(None, ()): v}, ctx) for k, v in server.items()}
    update = round_.server.update(dict(state), aggregated)
    unknown = set(update) - set(round_.server_state)
    if unknown:
        raise ValueError(f"server step of {round_.name!r} sets {sorted(unknown)}, not in "
                         "server_state")
    return SymState({**state, **update}, new_clients)


def _declare(problem, cls, constants, space, c, about):
    """Class c's PEPit function, of its class's (mu_c, L_c): over the quadratic class with
    ``about``, :func:`.certify_quadratic.quadratic_class` (interpolated about the
    representative's first point, module docstring); otherwise PEPit's class, a quadratic's
    own stationary point (a PEPit leaf) replaced by a client vector of the class (a mean plus
    a deviation)."""
    mu, L = constants[c]
    if cls.__name__ == "SmoothFunction":
        return problem.declare_function(cls, L=L)
    if about and cls.__name__ == "SmoothStronglyConvexQuadraticFunction":
        return problem.declare_function(quadratic_class(), mu=mu, L=L)
    f = problem.declare_function(cls, mu=mu, L=L)
    for k, (x, g, fx) in enumerate(f.list_of_points):
        if f.list_of_stationary_points and x is f.list_of_stationary_points[0][0]:
            triplet = (space.client(c), g, fx)
            f.list_of_points[k] = triplet
            f.list_of_stationary_points[0] = triplet
    return f


def build_symmetric(round_: Round, setting: Setting, measure: Measure, participation=None, *,
                    classes):
    """The reduced PEPit problem (unsolved) of :func:`worst_case_symmetric`.

    Returns
    -------
    (PEPit.PEP, dict)
        The problem and its parts (``law``: the :class:`~.classlaw.ClassLaw`, ``classes``,
        ``funcs``: the PEPit function of each class, ``start``: the initial points, server
        and per class, ``space``, ``constants``: each class's ``(mu_c, L_c)``).
    """
    from PEPit import PEP
    from PEPit.functions import (
        SmoothFunction,
        SmoothStronglyConvexFunction,
        SmoothStronglyConvexQuadraticFunction,
    )

    if not isinstance(round_, Round) or not isinstance(setting, Setting) or \
            not isinstance(measure, Measure):
        raise ValueError("round_, setting and measure must be a Round, a Setting and a Measure "
                         "(flbounds.pep.describe)")
    groups = classes_of(classes, setting.n_clients)
    if setting.identical:
        raise ValueError("setting: identical clients (one function for all) have no "
                         "symmetric form here; use the direct engine")
    constants = class_constants(setting, groups)
    law = (count_class_law if draws_of(participation) is not None else class_law)(
        participation, groups)
    for rule in round_.push.values():
        law.check_rule(rule)
    sizes = groups.sizes
    problem = PEP()
    space = Space(sizes)
    cls = {"smooth-strongly-convex": SmoothStronglyConvexFunction, "smooth": SmoothFunction,
           "quadratic": SmoothStronglyConvexQuadraticFunction}[setting.function_class]
    funcs = [Representative(_declare(problem, cls, constants, space, c, about=measure.runs == 1
                                     and constants[c][0] == 0), space, c)
             for c in range(len(sizes))]
    ctx = Context(space, law)
    runs = None
    if measure.runs == 2:   # runs: each run's new leaves, in order (.certify_tworuns)
        star, runs = None, ([], [])
        s1, c1 = made_leaves(runs[0], lambda: _start(round_, funcs, space, sizes))
        s2, c2 = made_leaves(runs[1], lambda: _start(round_, funcs, space, sizes, pin_model=True))
        start = _wrap(s1, c1, ctx) - _wrap(s2, c2, ctx)
        after = made_leaves(runs[0], lambda: _next(round_, funcs, s1, c1, ctx)) - \
            made_leaves(runs[1], lambda: _next(round_, funcs, s2, c2, ctx))
    else:
        x_star = origin()
        grads = []
        for c, n in enumerate(sizes):
            if setting.common_minimizer:
                mean = origin()
            elif c < len(sizes) - 1:
                mean = space.leaf()
            else:   # sum_i grad f_i(x*) = sum_c n_c mean_c = 0
                mean = origin()
                for d, g in enumerate(grads):
                    mean = mean - (sizes[d] / n) * space.split(g)[0]
            g = mean if setting.common_minimizer else space.client(c, mean)
            funcs[c].f.add_point((x_star, g, zero()))
            grads.append(g)
        star = SymStar(SymPoint({(None, ()): x_star}, ctx),
                       [SymPoint({(("client", c), ()): g}, ctx) for c, g in enumerate(grads)])
        s1, c1 = _start(round_, funcs, space, sizes)
        start = _wrap(s1, c1, ctx)
        after = _next(round_, funcs, s1, c1, ctx)
    problem.set_initial_condition(summed(measure.value, start, star, sizes) <= 1)
    problem.set_performance_metric(summed(measure.value, after, star, sizes))
    for f in funcs:
        for x, g, _ in f.f.list_of_points:
            for leaf in (*x.decomposition_dict, *g.decomposition_dict):
                if id(leaf) not in space.own:
                    raise ValueError(f"round: {round_.local.label!r} creates points outside "
                                     "the symmetric form")
    space.orthogonality(problem)
    return problem, dict(law=law, classes=groups, funcs=[f.f for f in funcs], runs=runs,
                         start=(s1, c1), space=space, constants=constants)


def worst_case_symmetric(round_: Round, setting: Setting, measure: Measure,
                         participation=None, *, classes, printed=None,
                         certified=False) -> WorstCase:
    r"""The worst case of ``measure`` after one round of ``round_`` over ``setting``, exact
    in expectation over ``participation``, with one representative per class of
    interchangeable clients (module docstring): the same value as
    :func:`flbounds.pep.engine.worst_case`, an SDP whose size does not grow with N.

    Parameters
    ----------
    round_ : Round
    setting : Setting
        Not ``identical``; one ``mu`` and ``L`` for all clients or one per client (equal
        within each class); any function class (``"smooth"``: non-convex).
    measure : Measure
        Of the form :math:`Q_0(\text{server}) + \sum_i Q_1(\text{server}, \text{client}_i)`
        (every built-in measure is).
    participation : None, bool vector, process or sampler
        Exchangeable within each class (:func:`.classlaw.class_law`), or drawing with
        replacement with one draw probability per class (counts,
        :func:`.classcounts.count_class_law`).
    classes : Classes, sequence of sequences of int, or sequence of int
        A partition of the clients (or one label per client); clients of one class must share
        their inclusion probability, aggregation weights and function class (mu, L).
    printed : float, optional
        A printed rate to report beside the worst case.
    certified : bool
        Accept, when no solve is accurate, the rigorous upper bound rebuilt from the
        solver's multipliers (status ``certified (...)``, ``gap`` the bracket width): from
        a-priori bounds (:mod:`.certify_symmetric`) for a measure with ``bounds`` and
        clients sharing :math:`x^\star`, else from multipliers with a margin
        (:mod:`.certify_symmargin`: any one-run measure whose feasible set is bounded); two
        runs: :mod:`.certify_tworuns` (quadratics pinned). Without it, that bound is still
        the fallback when no solve is accurate.

    Returns
    -------
    WorstCase
        ``params`` adds the class sizes, per-class inclusion probabilities and per-class
        constants (``class_mu``, ``class_L``).

    Raises
    ------
    ValueError
        Naming ``classes`` (not a partition of the N clients, or clients of a class told
        apart by the participation, the weights or the constants mu, L), ``participation``,
        ``setting`` or ``measure``.
    PEPSolveError
        When no solver returns an accurate solve; "the worst case is unbounded" when a
        solver says so and the witness agrees (:mod:`.unbounded_said`).
    """
    from .certify_symmargin import certified_reduced, reduced_certifiable

    check_certified(certified)
    def build():
        return build_symmetric(round_, setting, measure, participation, classes=classes)

    try:
        if certified:
            info, parts = certified_reduced(build, setting, measure)
        else:
            problem, parts = build()
            fallback = (lambda: certified_reduced(build, setting, measure)[0]) \
                if reduced_certifiable(setting, measure) else None
            info = solve_first([(lambda: problem, 1.0)], certified=fallback)
    except PEPSolveError as exc:     # unbounded, or a solver failure: said which
        raise_said(exc, build, measure)
    law = parts["law"]
    return make_result(info, printed=printed, metric=measure.label, params=dict(
        algorithm=round_.name, local=round_.local.label, server=round_.server.label,
        push={m: repr(rule) for m, rule in round_.push.items()}, n_clients=setting.n_clients,
        mu=setting.mu, L=setting.L, function_class=setting.function_class,
        common_minimizer=setting.common_minimizer, participation=law.label,
        class_sizes=list(parts["classes"].sizes), empty_probability=law.empty_probability,
        class_mu=[m for m, _ in parts["constants"]],
        class_L=[ell for _, ell in parts["constants"]],
        class_inclusion=np.round(law.inclusion, 12).tolist()))


__all__ = ["SymPoint", "build_symmetric", "class_constants", "worst_case_symmetric"]
