"""Conditioning of the worst-case SDPs (flbounds.pep.sdp, flbounds.pep.anchor): the pinned
symmetries and the initial-condition scale leave the value unchanged, the dual-residual check
rejects a solve whose multipliers prove nothing, and a planted inaccurate solve is an error,
never a number."""

import numpy as np
import pytest

import flbounds.pep.sdp as sdp
from flbounds.ledger import bounds, get
from flbounds.pep import PEPSolveError, gap_tolerance, gd_contraction, gd_rate
from flbounds.pep.server_steps import safari_nonconvex_rate

L = 2.0
TOP = 1 / (8 * np.sqrt(30) * L)  # SAFARI Thm 4's admissible eta_s at L = 2


def _free_thm4(q, K, step, R):
    """SAFARI Thm 4's SDP as before the anchoring: free start, free F*, unit initial gap."""
    from PEPit import PEP, Expression
    from PEPit.functions import SmoothFunction

    from flbounds.pep.described_server import safari_round
    from flbounds.pep.server_steps import _coin_tree

    problem = PEP()
    func = problem.declare_function(SmoothFunction, L=L)
    f_low = Expression(is_leaf=True)
    x0 = problem.set_initial_point()
    problem.set_initial_condition(func(x0) - f_low <= 1)
    metric, visited, _ = _coin_tree(safari_round(q, K, 2 * step / K, step), [func], x0, R)
    for point in visited:
        problem.add_constraint(f_low <= func(point))
    problem.set_performance_metric(metric)
    return sdp.solve(problem)


@pytest.mark.parametrize("q, K, R", [(0.5, 1, 1), (1.0, 1, 1), (0.0, 3, 2)])
def test_anchored_and_scaled_thm4_sdp_agrees_with_the_free_one(q, K, R):
    """Where the unpinned, unscaled SDP solves accurately, both give the same worst case."""
    free = _free_thm4(q, K, TOP, R)
    pinned = safari_nonconvex_rate(L, q, K, 2 * TOP / K, TOP, R)
    assert pinned.worst == pytest.approx(free.worst,
                                         abs=gap_tolerance(free.worst) + free.gap + pinned.gap)


def test_the_small_step_thm4_cell_now_solves_accurately():
    """q = 0, K = 1, R = 3 at 0.25x the step: optimal_inaccurate before (gap 2.8e-5)."""
    printed = bounds.get("safari.thm4").evaluate(
        L=L, local_steps=1, n_sampled=1, q=1e-300, R=3, delta_f=1.0, sigma2=0.0, sigma_s2=0.0,
        sigma_G2=0.0, step=0.25 * TOP).value
    res = safari_nonconvex_rate(L, 0.0, 1, 2 * 0.25 * TOP, 0.25 * TOP, 3, printed=printed)
    assert res.solver == "CLARABEL"
    assert 0 < res.worst <= res.printed


def test_a_solve_records_a_small_dual_residual():
    info = sdp.solve(_gd_problem(0.3))
    assert info.status == "optimal"
    assert info.dual_residual <= 1e-8
    assert info.worst == pytest.approx(gd_contraction(1.0, L, 0.3), abs=gap_tolerance(1.0))


def _gd_problem(step):
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    problem = PEP()
    func = problem.declare_function(SmoothStronglyConvexFunction, mu=1.0, L=L)
    x_star = func.stationary_point()
    x0 = problem.set_initial_point()
    problem.set_initial_condition((x0 - x_star) ** 2 <= 1)
    problem.set_performance_metric((x0 - step * func.gradient(x0) - x_star) ** 2)
    return problem


def test_scale_divides_values_and_gap():
    """A homogeneous PEP bounded by s: solve(scale=s) reports the unit-scale value."""
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    s = 1e-3
    problem = PEP()
    func = problem.declare_function(SmoothStronglyConvexFunction, mu=1.0, L=L)
    x_star = func.stationary_point()
    x0 = problem.set_initial_point()
    problem.set_initial_condition((x0 - x_star) ** 2 <= s)
    problem.set_performance_metric((x0 - 0.3 * func.gradient(x0) - x_star) ** 2)
    info = sdp.solve(problem, scale=s)
    assert info.worst == pytest.approx(gd_contraction(1.0, L, 0.3), abs=gap_tolerance(1.0))


def test_planted_inaccurate_solver_raises_not_a_number(monkeypatch):
    """Solvers stopped after 2 iterations: no accurate status, so no number."""
    monkeypatch.setattr(sdp, "SOLVERS", (("CLARABEL", {"max_iter": 2}),
                                         ("SCS", {"max_iters": 5})))
    with pytest.raises(PEPSolveError, match="no accurate solve"):
        gd_rate(1.0, L, 0.3)


def test_planted_dual_residual_rejects_an_optimal_solve(monkeypatch):
    """An 'optimal' status with a small gap is still refused when the multipliers do not
    reconstruct the bound (the check is live, not decorative)."""
    monkeypatch.setattr(sdp, "dual_residual", lambda problem: 1.0)
    with pytest.raises(PEPSolveError, match="dual residual"):
        gd_rate(1.0, L, 0.3)


def test_an_inaccurate_solve_inside_the_hypotheses_makes_thm4_an_error(monkeypatch):
    import verify.safari.thm4.tightness as module

    def broken(*args, **kwargs):
        raise PEPSolveError("no accurate solve (planted)")

    monkeypatch.setattr(module, "safari_nonconvex_rate", broken)
    assert get("safari.thm4.tightness").check(seed=0).verdict == "error"


def test_fedavg_grid_lists_steps_beyond_the_printed_one_as_outside(monkeypatch):
    """Cells above 1x the Theorem 3 step never enter the verdict; one without an accurate
    solve is listed as unsolved; inside, an unsolved cell makes the claim an error."""
    import verify.focus.thm3.worst_case as module
    from verify.focus.thm3 import thm3_conditions

    real = module.fedavg_rate

    def flaky(mu, L_, n, tau, step, process, **kw):
        if step > 2.5 * min(thm3_conditions(L_, tau).values()):
            raise PEPSolveError("no accurate solve (planted)")
        return real(mu, L_, n, tau, step, process, **kw)

    monkeypatch.setattr(module, "fedavg_rate", flaky)
    claim = get("focus.cor3.rate_tightness")
    res = claim.check(seed=0)
    assert res.verdict == "holds", res.reason
    cells = res.details["cells"]
    assert all(not c["within_hypotheses"] for c in cells if c["constants"]["fraction"] > 1)
    assert any("unsolved" in c for c in cells)
    assert all("unsolved" in c for c in cells if c["constants"]["fraction"] == 3.0)

    def broken(*args, **kwargs):
        raise PEPSolveError("no accurate solve (planted)")

    monkeypatch.setattr(module, "fedavg_rate", broken)
    assert claim.check(seed=0).verdict == "error"


def test_thm1a_outside_cell_without_a_solve_is_listed_inside_is_an_error(monkeypatch):
    import verify.focus.thm1.worst_case as module

    real = module.focus_rate

    def flaky(mu, L_, p, tau, step, **kw):
        top = min(module.thm1a_conditions(mu, L_, len(p), tau, module.q_min_of(p)).values())
        if step > 2 * top:
            raise PEPSolveError("no accurate solve (planted)")
        return real(mu, L_, p, tau, step, **kw)

    monkeypatch.setattr(module, "focus_rate", flaky)
    claim = get("focus.thm1a.tightness")
    res = claim.check(seed=0, multiples=(1.0, 3.0))
    assert res.verdict == "holds", res.reason
    assert any("unsolved" in c for c in res.details["cells"])

    def broken(*args, **kwargs):
        raise PEPSolveError("no accurate solve (planted)")

    monkeypatch.setattr(module, "focus_rate", broken)
    assert claim.check(seed=0, multiples=(1.0, 3.0)).verdict == "error"
