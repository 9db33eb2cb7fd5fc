"""Certified PEP bounds with one (mu, L) per client: two classes of constants, (1, 2) and
(0.5, 4), through ``flbounds.pep.worst_case`` with every solve forced inaccurate, in every
certificate route (shared minimizer, the star route over quadratics, two runs; the symmetric
form with ``classes=``): the certified bound lies at or above the accurate value, within the
bracket tolerance. Planted bug: every client bounded with the first client's L (too small a
bound). Passed as the cap it is refused; slipped past the cap it proves less than the worst
case with multipliers scaled by 0.9, where the right bounds still prove more."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import certify, engine, sdp, symmetric
from flbounds.pep import certify_symmetric as cs
from flbounds.pep.certify import bracket_tolerance
from flbounds.pep.certify_lmi import stationary_bounds, unused_leaves

from ._planted import assert_bracketed, spy_certified_star

#: class 0: (mu, L) = (1, 2); class 1: (0.5, 4)
CONSTANTS = ((1.0, 2.0), (0.5, 4.0))
#: V = ||x - x*||^2 + sum_i ||grad f_i(x*)||^2, both parts bounded (the star route)
BUDGET = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                      + sum(g ** 2 for g in star.gradients), "heterogeneity budget",
                      bounds=lambda state: {state["x"]: 1.0},
                      star_bounds=lambda star: dict.fromkeys(star.gradients, 1.0))
ROUND = pep.fedavg_round(2, 0.2)
CLASSES = ("smooth-strongly-convex", "quadratic", "smooth")


def _case(n, function_class="smooth-strongly-convex", shared=True):
    """Clients 0..h-1 (p = 0.3, CONSTANTS[0]) and h..n-1 (p = 0.7, CONSTANTS[1])."""
    h = max(1, n // 2)
    mu = np.r_[np.full(h, CONSTANTS[0][0]), np.full(n - h, CONSTANTS[1][0])]
    L = np.r_[np.full(h, CONSTANTS[0][1]), np.full(n - h, CONSTANTS[1][1])]
    setting = pep.Setting(n, mu, L, function_class=function_class, common_minimizer=shared)
    law = Bernoulli(np.r_[np.full(h, 0.3), np.full(n - h, 0.7)])
    return setting, law, [list(range(h)), list(range(h, n))]


@pytest.fixture
def forced(monkeypatch):
    """No solve is accurate (and none is read from a store)."""
    monkeypatch.delenv(sdp.CACHE_ENV, raising=False)
    return monkeypatch


def _bracketed(solve, forced):
    """``solve(certified)`` accurate, then forced inaccurate: certified, bracketed."""
    accurate = solve(False)
    forced.setattr(sdp, "accurate", lambda *a: False)
    bound = solve(True)
    assert_bracketed(bound, accurate)
    assert bound.gap <= bracket_tolerance(bound.worst)
    return accurate, bound


def test_per_client_settings_are_certifiable():
    setting = _case(3)[0]
    assert setting.per_client and engine.certifiable_shared(setting, pep.distance())
    assert engine.certifiable(_case(3, "quadratic", shared=False)[0], BUDGET)
    assert cs.certifiable_symmetric(setting, pep.distance())


@pytest.mark.parametrize("function_class", CLASSES)
@pytest.mark.parametrize("n", [2, 3, 4])
def test_shared_minimizer(forced, n, function_class):
    setting, law, _ = _case(n, function_class)
    _bracketed(lambda c: pep.worst_case(ROUND, setting, pep.distance(), law, certified=c),
               forced)


def test_the_fallback_without_certified(forced):
    """``certified=False``: an inaccurate solve falls back on the same certificate."""
    setting, law, _ = _case(3)
    accurate = pep.worst_case(ROUND, setting, pep.distance(), law)
    forced.setattr(sdp, "accurate", lambda *a: False)
    assert_bracketed(pep.worst_case(ROUND, setting, pep.distance(), law), accurate)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_star_route_over_quadratics(forced, n):
    setting, law, _ = _case(n, "quadratic", shared=False)
    calls = spy_certified_star(forced)
    _bracketed(lambda c: pep.worst_case(ROUND, setting, BUDGET, law, certified=c), forced)
    assert calls == [BUDGET.label]


@pytest.mark.parametrize("shared", [True, False])
def test_mixtures(forced, shared):
    """SAFARI's coin (flbounds.pep.scenarios): a shared minimizer, or the star route."""
    setting, law, _ = _case(3, "quadratic", shared=shared)
    safari, measure = pep.safari_round(0.5, 2, 0.2, 0.3, law), \
        pep.distance() if shared else BUDGET
    _bracketed(lambda c: pep.worst_case(safari, setting, measure, certified=c), forced)


@pytest.mark.parametrize("function_class", ["smooth-strongly-convex", "quadratic"])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_two_runs(forced, n, function_class):
    setting, law, _ = _case(n, function_class, shared=False)
    _bracketed(lambda c: pep.worst_case(ROUND, setting, pep.two_runs(), law, certified=c),
               forced)


@pytest.mark.parametrize("function_class", CLASSES)
@pytest.mark.parametrize("n", [4, 1000])
def test_symmetric_classes(forced, n, function_class):
    """The a-priori route (certify_symmetric), each class bounded with its own L_c."""
    from flbounds.pep import certify_symmargin

    setting, law, groups = _case(n, function_class)
    calls, real = [], certify_symmargin.certified_symmetric
    forced.setattr(certify_symmargin, "certified_symmetric",
                   lambda *a: calls.append(1) or real(*a))
    _, bound = _bracketed(lambda c: pep.worst_case(ROUND, setting, pep.distance(), law,
                                                   classes=groups, certified=c), forced)
    assert bound.params["class_L"] == [2.0, 4.0] and calls == [1]


@pytest.mark.parametrize("function_class", ["smooth-strongly-convex", "quadratic"])
@pytest.mark.parametrize("n", [4, 1000])
def test_symmetric_two_runs(forced, n, function_class):
    setting, law, groups = _case(n, function_class, shared=False)
    _bracketed(lambda c: pep.worst_case(ROUND, setting, pep.two_runs(), law, classes=groups,
                                        certified=c), forced)


def test_the_lyapunov_check_falls_back_on_the_certificate(forced):
    """pep.lyapunov_rate's check (a worst case of the searched V) with per-client constants:
    forced inaccurate, the certified bound, within the bracket of the accurate check."""
    rnd, law = pep.fedavg_round(2, 0.1), Bernoulli([0.5, 0.8])
    setting = pep.Setting(2, (1.0, 0.5), (2.0, 4.0), common_minimizer=True)
    accurate = pep.lyapunov_rate(rnd, setting, law)
    forced.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.lyapunov_rate(rnd, setting, law)
    # certified is the check's certificate also when accurate (flbounds.pep.lyapunov_check)
    assert accurate.worst_case.status == "certified (optimal)" and bound.accurate is None
    assert bound.worst_case.status.startswith("certified")
    assert bound.certified >= accurate.accurate - pep.gap_tolerance(accurate.accurate)
    assert bound.certified - accurate.accurate <= bracket_tolerance(bound.certified)
    assert bound.witness <= bound.certified


@pytest.mark.parametrize("entry", ["worst_case", "lyapunov_rate"])
def test_first_clients_L_as_the_cap_is_refused(forced, entry):
    """Planted: the engine hands the first client's L to the certificate."""
    setting, law, _ = _case(2)
    real = certify.solve_certified
    forced.setattr(certify, "solve_certified",
                   lambda build, L, **kw: real(build, setting.L[0], **kw))
    forced.setattr(sdp, "accurate", lambda *a: False)
    with pytest.raises(ValueError, match="below a function's smoothness constant"):
        if entry == "worst_case":
            pep.worst_case(ROUND, setting, pep.distance(), law, certified=True)
        else:
            pep.lyapunov_rate(pep.fedavg_round(2, 0.1), setting, law)


class _FirstL:
    """Planted: a function seen with another L (the first client's)."""

    def __init__(self, f, L):
        self._f, self.L = f, L

    def __getattr__(self, name):
        return getattr(self._f, name)


def _direct(n, function_class):
    """One local step of size 1, every client participating: the worst case needs L = 4."""
    setting = _case(n, function_class)[0]
    problem, parts = engine.build(pep.fedavg_round(1, 1.0), setting, pep.distance())
    funcs = list({id(f): f for f in parts["funcs"]}.values())
    initial = stationary_bounds(funcs, pep.distance().bounds(parts["start"]))
    right = certify.leaf_bounds(funcs, initial, max(setting.L))
    planted = certify.leaf_bounds([_FirstL(f, setting.L[0]) for f in funcs], initial,
                                  max(setting.L))
    return problem, right, planted


def _symmetric(n, function_class):
    setting, law, groups = _case(n, function_class)
    problem, parts = symmetric.build_symmetric(pep.fedavg_round(1, 1.0), setting,
                                               pep.distance(), law, classes=groups)
    funcs, space = parts["funcs"], parts["space"]
    initial = stationary_bounds(funcs, pep.distance().bounds(cs._StartState(*parts["start"])))
    initial.update(dict.fromkeys(unused_leaves(problem, funcs), 0.0))
    return problem, cs.class_leaf_bounds(funcs, initial, space), \
        cs.class_leaf_bounds([_FirstL(f, setting.L[0]) for f in funcs], initial, space)


@pytest.mark.parametrize("form,n", [("direct", 2), ("direct", 3), ("direct", 4),
                                    ("symmetric", 4), ("symmetric", 1000)])
@pytest.mark.parametrize("function_class", ["smooth-strongly-convex", "smooth"])
def test_first_clients_L_proves_less_than_the_worst_case(monkeypatch, form, n,
                                                         function_class):
    """Any multipliers give a valid bound with each function's own L; scaled by 0.9 they
    lean on the a-priori bounds, and the first client's L (2, against 4) then proves less
    than the accurate worst case: the check ``bound >= accurate`` catches it."""
    monkeypatch.delenv(sdp.CACHE_ENV, raising=False)
    problem, right, planted = (_direct if form == "direct" else _symmetric)(n, function_class)
    accurate = sdp.solve(problem)
    lam = 0.9 * np.asarray(sdp.prepared_multipliers(problem)[1])
    tol = pep.gap_tolerance(accurate.worst)
    assert certify.certify(problem, *right, multipliers=lam).upper >= accurate.worst - tol
    assert certify.certify(problem, *planted, multipliers=lam).upper < accurate.worst - tol
