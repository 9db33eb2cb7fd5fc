"""The quadratic class with mu = 0 in the symmetric form (flbounds.pep.symmetric: each class
declared about its representative's first point, flbounds.pep.certify_quadratic): the reduced
SDP equals the direct one at N = 2..6 with one and two classes (FedAvg with a shared minimizer,
FedAvg under a heterogeneity budget with x* not shared, FOCUS one round); at mu > 0 the form
about the first point has PEPit's class's value; N = 1000 in two classes solves accurately
with a Gram matrix of the size it has at N = 6; PEPit's class at mu = 0 (the form this
replaces) does not solve without a shared minimizer; the FedAvg witness fitted at mu = 0
replays the worst case at N = 100.

Gram sizes measured (two classes): 9 (FedAvg, tau = 2, shared minimizer), 16 (FedAvg, tau = 3,
heterogeneity budget), 17 (FOCUS, tau = 2), the same at N = 6 and N = 1000. FOCUS at step
1/N, N = 6: the direct solve is the less accurate one (its certified bracket holds the
symmetric value)."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import sdp, symmetric
from flbounds.pep.certify_quadratic import quadratic_class

#: V = ||x - x*||^2 + sum_i ||grad f_i(x*)||^2, with the bounds the certificates read
BUDGET = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                      + sum(g ** 2 for g in star.gradients), "heterogeneity budget",
                      bounds=lambda state: {state["x"]: 1.0},
                      star_bounds=lambda star: dict.fromkeys(star.gradients, 1.0))
CASES = ["fedavg shared", "fedavg budget", "focus"]


def classes(n, n_classes):
    """One class at p = 0.5, or clients 0..n//2 - 1 at p = 0.3 and the rest at p = 0.7."""
    if n_classes == 1:
        return [list(range(n))], Bernoulli(np.full(n, 0.5))
    h = n // 2
    return [list(range(h)), list(range(h, n))], \
        Bernoulli(np.r_[np.full(h, 0.3), np.full(n - h, 0.7)])


def case(name, n, mu=0.0, focus_step=0.5):
    """(round, setting, measure) over the quadratic class with L = 2. The shared-minimizer
    FedAvg takes a step 1.2 > 1/L (at a stable step the worst case over mu = 0 is 1, the
    zero Hessian, whatever the form); FOCUS's server sums N trackers, so its step (0.5/N)
    and consensus weight (1/N) scale as 1/N."""
    shared = pep.Setting(n, mu, 2.0, function_class="quadratic", common_minimizer=True)
    if name == "fedavg shared":
        return pep.fedavg_round(2, 1.2), shared, pep.distance()
    if name == "fedavg budget":
        return pep.fedavg_round(3, 0.2), pep.Setting(n, mu, 2.0, function_class="quadratic"), \
            BUDGET
    return pep.focus_round(2, focus_step / n), shared, pep.focus_lyapunov(1.0 / n)


def _same(direct, reduced):
    """Each value is accepted within gap_tolerance (1e-6 relative) of the exact optimum."""
    tol = pep.gap_tolerance(direct.worst) + pep.gap_tolerance(reduced.worst)
    assert abs(direct.worst - reduced.worst) <= tol, (direct.worst, reduced.worst)


@pytest.mark.parametrize("n_classes", [1, 2])
@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize("name", CASES)
def test_the_symmetric_sdp_equals_the_direct_one_at_mu_zero(no_store, name, n, n_classes):
    round_, setting, measure = case(name, n)
    groups, law = classes(n, n_classes)
    direct = pep.worst_case(round_, setting, measure, law)
    reduced = pep.worst_case(round_, setting, measure, law, classes=groups)
    assert direct.status == reduced.status == "optimal"
    _same(direct, reduced)
    assert reduced.worst > 1.0 + 1e-3      # not the zero Hessian's value: curvature matters


def test_where_the_direct_solve_is_less_accurate_its_bracket_holds_the_symmetric_value(
        no_store):
    """FOCUS at step 1/N, N = 6 in two classes: the direct form's accepted value (gap 1e-6,
    dual residual within the acceptance) lies 2.1e-6 relative below the symmetric one, over
    the sum of the two gap tolerances; the direct form's certified upper bound (valid whatever
    the solve's accuracy) is above the symmetric value, so the gap is the direct solve's
    (measured: direct 11.1611792, symmetric 11.1612027, direct certified 11.1612200)."""
    round_, setting, measure = case("focus", 6, focus_step=1.0)
    groups, law = classes(6, 2)
    reduced = pep.worst_case(round_, setting, measure, law, classes=groups)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    bound = pep.worst_case(round_, setting, measure, law, certified=True)
    assert bound.status.startswith("certified")
    assert bound.worst >= reduced.worst - pep.gap_tolerance(reduced.worst)
    assert bound.worst - reduced.worst <= bound.gap + pep.gap_tolerance(reduced.worst)


def _about_everywhere(monkeypatch):
    """Declare every one-run quadratic class about its first point, mu > 0 included."""
    real = symmetric._declare

    def declare(problem, cls, constants, space, c, about):
        return real(problem, cls, constants, space, c, about=True)

    monkeypatch.setattr(symmetric, "_declare", declare)


@pytest.mark.parametrize("name", CASES)
def test_at_mu_positive_the_form_about_a_point_has_pepit_value(no_store, name):
    round_, setting, measure = case(name, 4, mu=0.5)
    groups, law = classes(4, 2)
    pepit = pep.worst_case(round_, setting, measure, law, classes=groups)
    _about_everywhere(no_store)
    about = pep.worst_case(round_, setting, measure, law, classes=groups)
    _same(pepit, about)
    problem, parts = symmetric.build_symmetric(round_, setting, measure, law, classes=groups)
    assert all(isinstance(f, quadratic_class()) for f in parts["funcs"])   # the form was used


@pytest.mark.parametrize("name", CASES)
def test_n_1000_in_two_classes_solves_with_the_size_of_n_6(no_store, name):
    sizes = {}
    for n in (6, 1000):
        round_, setting, measure = case(name, n)
        groups, law = classes(n, 2)
        result = pep.worst_case(round_, setting, measure, law, classes=groups)
        assert result.status == "optimal" and result.gap <= pep.gap_tolerance(result.worst)
        assert result.params["class_sizes"] == [n // 2, n - n // 2]
        sizes[n] = result.gram_size
    assert sizes[1000] == sizes[6] <= 17


def test_pepit_class_at_mu_zero_fails_where_the_form_about_a_point_solves(no_store):
    """The planted misroute: PEPit's class (its stationary class vector free along the
    Hessian's kernel) under a heterogeneity budget, x* not shared: no accurate solve."""
    round_, setting, measure = case("fedavg budget", 4)
    groups, law = classes(4, 2)
    assert pep.worst_case(round_, setting, measure, law, classes=groups).status == "optimal"
    real = symmetric._declare
    no_store.setattr(symmetric, "_declare", lambda problem, cls, constants, space, c, about:
                     real(problem, cls, constants, space, c, about=False))
    with pytest.raises(sdp.PEPSolveError):
        pep.worst_case(round_, setting, measure, law, classes=groups)


def test_the_witness_at_mu_zero_replays_the_worst_case_at_n_100(no_store):
    """One quadratic per class fitted to the symmetric solve (the class about its first
    point: no stationary vector among the points fitted), FedAvg run by flbounds.algorithms
    on N = 100 clients (measured: 3.8404715 replayed, 3.8404731 solved)."""
    from flbounds.pep.symmetric_witness import fedavg_symmetric_witness
    from flbounds.pep.witness import witness_tolerance

    groups = [list(range(50)), list(range(50, 100))]
    law = Bernoulli(np.r_[np.full(50, 0.1), np.full(50, 0.05)])
    w = fedavg_symmetric_witness(0.0, 2.0, law, groups, 2, 1.2)
    assert w.deviation < 1e-4 and w.witness.pep > 1.0 + 1e-3
    assert abs(w.witness.replayed - w.witness.pep) <= witness_tolerance(w.witness)
