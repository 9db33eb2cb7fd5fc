"""Stored PEP solves (flbounds.pep.sdp, FLBOUNDS_PEP_CACHE): an SDP solved once is not solved
again, by any caller; a changed constant is another SDP."""

import pytest

from flbounds.pep import certify, gd_rate, sdp
from flbounds.pep.tracking import focus_rate


@pytest.fixture
def calls(tmp_path, monkeypatch):
    """The solver calls made (one entry per solver tried), with the cache in ``tmp_path``."""
    monkeypatch.setenv(sdp.CACHE_ENV, str(tmp_path / "pep_solves.sqlite"))
    made = []
    real = sdp.attempts

    def counted(problem, solvers, failures):
        for out in real(problem, solvers, failures):
            made.append(out[0])
            yield out

    monkeypatch.setattr(sdp, "attempts", counted)
    monkeypatch.setattr(certify, "attempts", counted)
    return made


def test_same_solve_twice_is_identical_and_solved_once(calls):
    first = gd_rate(1.0, 2.0, 0.4)
    assert len(calls) == 1
    second = gd_rate(1.0, 2.0, 0.4)
    assert second == first  # every field, the stored seconds included
    assert len(calls) == 1


def test_changed_constant_misses(calls):
    gd_rate(1.0, 2.0, 0.4)
    other = gd_rate(1.0, 2.0, 0.41)
    assert len(calls) == 2
    assert other.worst != gd_rate(1.0, 2.0, 0.4).worst
    assert len(calls) == 2


def test_key_reads_every_constraint():
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    def build(L, bound=1.0):
        problem = PEP()
        f = problem.declare_function(SmoothStronglyConvexFunction, mu=1.0, L=L)
        xs = f.stationary_point()
        x0 = problem.set_initial_point()
        problem.set_initial_condition((x0 - xs) ** 2 <= bound)
        problem.set_performance_metric((x0 - 0.5 * f.gradient(x0) - xs) ** 2)
        return problem

    assert sdp.solve_key(build(2.0)) == sdp.solve_key(build(2.0))
    assert sdp.solve_key(build(2.0)) != sdp.solve_key(build(3.0))
    assert sdp.solve_key(build(2.0)) != sdp.solve_key(build(2.0, bound=2.0))
    assert sdp.solve_key(build(2.0)) != sdp.solve_key(build(2.0), scale=2.0)


def test_reused_across_builders_of_the_same_sdp(calls):
    """focus_rate solved twice (as two claims at the same constants would) solves once."""
    a = focus_rate(1.0, 2.0, (0.5, 0.8), 2, 0.01, consensus_weight=0.5)  # certified path
    n = len(calls)
    assert n >= 1
    assert focus_rate(1.0, 2.0, (0.5, 0.8), 2, 0.01, consensus_weight=0.5) == a
    assert len(calls) == n


def test_without_the_variable_nothing_is_stored(tmp_path, monkeypatch):
    monkeypatch.delenv(sdp.CACHE_ENV, raising=False)
    gd_rate(1.0, 2.0, 0.4)
    assert not list(tmp_path.iterdir())


def test_key_tells_apart_which_function_value_a_coefficient_multiplies():
    """The same constraints and objective coefficients, with the objective on f_1 (L = 2) or
    on f_2 (L = 3), are other SDPs (leaves are named, not only counted)."""
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    def build(which):
        problem = PEP()
        f = [problem.declare_function(SmoothStronglyConvexFunction, mu=1.0, L=L)
             for L in (2.0, 3.0)]
        x0, x1 = problem.set_initial_point(), problem.set_initial_point()
        values = [(fi(x0), fi(x1)) for fi in f]
        problem.set_initial_condition((x0 - x1) ** 2 <= 1)
        problem.set_performance_metric(values[which][0] - values[which][1])
        return problem

    assert sdp.solve_key(build(0)) == sdp.solve_key(build(0))
    assert sdp.solve_key(build(0)) != sdp.solve_key(build(1))


def test_an_unwritable_cache_only_loses_the_reuse(tmp_path, monkeypatch):
    monkeypatch.setenv(sdp.CACHE_ENV, str(tmp_path / "missing" / "pep_solves.sqlite"))
    first, second = gd_rate(1.0, 2.0, 0.4), gd_rate(1.0, 2.0, 0.4)  # both solved
    assert first.worst == second.worst and first.tight
    assert not (tmp_path / "missing").exists()
