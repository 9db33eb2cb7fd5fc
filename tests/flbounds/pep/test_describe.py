"""Rounds as descriptions (flbounds.pep.describe / engine): today's builders reproduced on the
README table's cells, SCAFFOLD against an independent raw-PEPit build, closed forms."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.ledger import bounds
from flbounds.participation import Bernoulli, UniformWithoutReplacement
from flbounds.pep.expect import ParticipationLaw, law_of, weight
from flbounds.pep.moments import participation_moments
from flbounds.pep.sdp import PEPSolveError

#: the old and new builders state the same SDP; each value is accepted within
#: ``gap_tolerance`` (1e-6 relative) of the exact optimum, so the two agree within twice that
AGREE = 1e-6


def _same(new, old):
    tol = max(AGREE, pep.gap_tolerance(old.worst) + pep.gap_tolerance(new.worst))
    assert abs(new.worst - old.worst) <= tol, (new.worst, old.worst)


def _hand_built_fedavg(mu, L, n, tau, step, process, *, homogeneous=False):
    """FedAvg's round written by hand in PEPit with the moments W_ij and P(empty) (the body
    :func:`flbounds.pep.fedavg_rate` had before it was a description): the reference."""
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    from flbounds.pep.anchor import anchored_minimizer, origin
    from flbounds.pep.rounds import gd_steps, weighted_gram

    moments = participation_moments(process, n)
    problem = PEP()
    if homogeneous:
        funcs = [problem.declare_function(SmoothStronglyConvexFunction, mu=mu, L=L)] * n
    else:
        funcs = [problem.declare_function(SmoothStronglyConvexFunction, mu=mu, L=L)
                 for _ in range(n)]
    ref = anchored_minimizer(funcs, common=True) if homogeneous else origin()
    x = problem.set_initial_point()
    problem.set_initial_condition((x - ref) ** 2 <= 1)
    diffs = [gd_steps(f, x, step, tau) - (ref if homogeneous else gd_steps(f, ref, step, tau))
             for f in funcs]
    metric = weighted_gram(diffs, diffs, moments.avg_pair)
    if moments.empty > 0:
        metric = metric + moments.empty * (x - ref) ** 2
    problem.set_performance_metric(metric)
    return pep.solve(problem)


def _hand_built_focus(mu, L, p, tau, step, c):
    """FOCUS's round written by hand (``benchmarks._focus_reference.round_problem``, the
    moments expanded in ``_expected_psi``) and solved as :func:`flbounds.pep.focus_rate` did
    before it was a description: the reference."""
    from benchmarks._focus_reference import round_problem
    from flbounds.pep.certify import solve_certified
    from flbounds.pep.tracking import MAX_ALTERNATIVE

    pair = participation_moments(Bernoulli(p), len(p)).pair
    other = [lambda: round_problem(mu, L, tau, step, c, pair, form="pepit")[0]] \
        if len(p) * tau <= MAX_ALTERNATIVE else []
    return solve_certified(lambda: round_problem(mu, L, tau, step, c, pair), L,
                           alternatives=other)


def _cor3_step(tau, fraction):
    """The README's FedAvg rows: a fraction of FOCUS Thm 3's admissible step."""
    return fraction * bounds.get("focus.cor3.rate").evaluate(mu=1.0, L=2.0,
                                                              tau=tau).admissible_step


@pytest.mark.parametrize("tau, fraction, process", [
    (3, 1.0, UniformWithoutReplacement(3, 2)),
    (1, 0.25, UniformWithoutReplacement(3, 2)),
    (3, 1.0, Bernoulli([0.1, 0.1, 0.1])),
])
def test_fedavg_description_reproduces_the_readme_cells(tau, fraction, process):
    step = _cor3_step(tau, fraction)
    old = _hand_built_fedavg(1.0, 2.0, 3, tau, step, process, homogeneous=True)
    new = pep.worst_case(pep.fedavg_round(tau, step), pep.Setting(3, 1.0, 2.0, identical=True),
                         pep.distance(), process)
    _same(new, old)
    _same(pep.fedavg_rate(1.0, 2.0, 3, tau, step, process, homogeneous=True), old)


@pytest.mark.parametrize("p", [(0.3, 0.5, 0.7, 0.9), (0.2, 0.9)])
def test_focus_description_reproduces_the_readme_cells(p):
    """The README's FOCUS Thm 1(a) rows at N <= 4 (the N = 6 row is a certified bound)."""
    thm = bounds.get("focus.thm1a").evaluate(mu=1.0, L=2.0, p=np.asarray(p), tau=3)
    weight_c = 1 - 8 * thm.step * 2.0**2 * len(p) / 1.0  # the proof's weight of Psi
    old = _hand_built_focus(1.0, 2.0, p, 3, thm.step, weight_c)
    new = pep.worst_case(pep.focus_round(3, thm.step),
                         pep.Setting(len(p), 1.0, 2.0, common_minimizer=True),
                         pep.focus_lyapunov(weight_c), Bernoulli(p))
    assert new.status == "optimal" and old.status == "optimal"
    _same(new, old)
    rate = pep.focus_rate(1.0, 2.0, p, 3, thm.step, consensus_weight=weight_c)
    assert rate.status == "optimal"
    _same(rate, old)


def test_fedavg_two_runs_is_the_heterogeneous_fedavg_rate():
    proc = Bernoulli([0.3, 0.6, 0.9])
    old = _hand_built_fedavg(1.0, 2.0, 3, 2, 0.2, proc)
    new = pep.worst_case(pep.fedavg_round(2, 0.2), pep.Setting(3, 1.0, 2.0), pep.two_runs(),
                         proc)
    _same(new, old)
    _same(pep.fedavg_rate(1.0, 2.0, 3, 2, 0.2, proc), old)


def _raw_scaffold(mu, L, tau, step, control_weight, p):
    """SCAFFOLD's one-round V ratio written directly in PEPit with the 2^N scenario sum (no
    moments, no anchoring, x* PEPit's stationary point of the sum)."""
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    from flbounds.participation import subset_distribution

    n = len(p)
    problem = PEP()
    funcs = [problem.declare_function(SmoothStronglyConvexFunction, mu=mu, L=L)
             for _ in range(n)]
    total = funcs[0]
    for f in funcs[1:]:
        total = total + f
    xs = total.stationary_point()
    gs = [f.gradient(xs) for f in funcs]
    x = problem.set_initial_point()
    ci = [problem.set_initial_point() for _ in range(n)]
    c = (1 / n) * ci[0]
    for cj in ci[1:]:
        c = c + (1 / n) * cj
    problem.set_initial_condition((x - xs) ** 2 + control_weight * sum(
        (a - g) ** 2 for a, g in zip(ci, gs, strict=True)) <= 1)
    Z, C = [], []
    for f, a in zip(funcs, ci, strict=True):
        z = x
        for _ in range(tau):
            z = z - step * (f.gradient(z) - a + c)
        Z.append(z)
        C.append(a - c + (1 / (tau * step)) * (x - z))
    metric = None
    for mask, prob in zip(*subset_distribution(Bernoulli(p)), strict=True):
        idx = np.flatnonzero(mask)
        x_new = x
        for i in idx:
            x_new = x_new + (1 / idx.size) * (Z[i] - x)
        v = (x_new - xs) ** 2 + control_weight * sum(
            ((C[i] if mask[i] else ci[i]) - gs[i]) ** 2 for i in range(n))
        metric = prob * v if metric is None else metric + prob * v
    problem.set_performance_metric(metric)
    return pep.solve(problem)


@pytest.mark.parametrize("p", [(1.0, 1.0), (0.5, 0.8)])
def test_scaffold_description_against_raw_pepit(p):
    new = pep.worst_case(pep.scaffold_round(2, 0.1, 2), pep.Setting(2, 1.0, 2.0),
                         pep.scaffold_lyapunov(0.05), Bernoulli(p))
    raw = _raw_scaffold(1.0, 2.0, 2, 0.1, 0.05, p)
    _same(new, raw)


def _spectral_sq(T):
    return float(np.linalg.norm(np.asarray(T, dtype=float), 2) ** 2)


@pytest.mark.parametrize("function_class", ["smooth-strongly-convex", "quadratic"])
def test_server_momentum_one_local_step_is_heavy_ball(function_class):
    r"""Identical clients, everyone, one local step: :math:`x^+ = x - \eta_g\eta\nabla f(x) +
    \eta_g\beta m`, :math:`m^+ = \beta m - \eta\nabla f(x)`. On :math:`f = \lambda\|x\|^2/2`
    the state :math:`(x - x^\star, \sqrt{c}\, m)` is multiplied by
    :math:`T(\lambda) = [[1 - \eta_g\eta\lambda, \eta_g\beta/\sqrt c], [-\sqrt c\,\eta\lambda,
    \beta]]`, so the worst :math:`V^+/V` over quadratics is :math:`\max_\lambda
    \sigma_{\max}(T(\lambda))^2`, at :math:`\lambda \in \{\mu, L\}` (a norm of a matrix affine
    in :math:`\lambda` is convex). With one gradient, at one point besides :math:`x^\star`,
    the smooth strongly convex class allows the same gradients (two-point interpolation: the
    gradient lies in the ball of radius (L - mu)/2 ||x - x*|| about (L + mu)/2 (x - x*), each
    such gradient is Q (x - x*) with mu I <= Q <= L I), so both classes give that value."""
    mu, L, eta, beta, eta_g, c = 1.0, 4.0, 0.2, 0.4, 1.5, 2.0
    res = pep.worst_case(pep.momentum_round(1, eta, beta, global_step=eta_g),
                         pep.Setting(3, mu, L, function_class=function_class, identical=True),
                         pep.momentum_lyapunov(c))
    exact = max(_spectral_sq([[1 - eta_g * eta * lam, eta_g * beta / c**0.5],
                              [-(c**0.5) * eta * lam, beta]]) for lam in (mu, L))
    assert abs(res.worst - exact) <= 2 * pep.gap_tolerance(exact)


def test_unbiased_aggregation_closed_form():
    r"""Identical clients, one step, unbiased weights :math:`s_i/(N\pi_i)`: :math:`x^+ - x^\star
    = (I - W\eta Q)(x - x^\star)` with :math:`W = \sum_i w_i`, :math:`E W = 1`,
    :math:`E W^2 = (\sum_i 1/\pi_i + N(N-1))/N^2` (independent clients), so the worst ratio is
    :math:`\max_{\lambda \in \{\mu, L\}} 1 - 2\eta\lambda + E[W^2]\eta^2\lambda^2`."""
    p = np.array([0.3, 0.6, 0.9])
    n, eta = p.size, 0.3
    res = pep.worst_case(pep.fedavg_round(1, eta, aggregate="unbiased"),
                         pep.Setting(n, 1.0, 2.0, identical=True), pep.distance(), Bernoulli(p))
    ew2 = (np.sum(1 / p) + n * (n - 1)) / n**2
    exact = max(1 - 2 * eta * lam + ew2 * eta**2 * lam**2 for lam in (1.0, 2.0))
    assert abs(res.worst - exact) <= 2 * pep.gap_tolerance(exact)


def test_rule_moments():
    proc = Bernoulli([0.2, 0.5, 0.7])
    law = law_of(proc, 3)
    old = participation_moments(proc, 3)
    uniform = [[law.moment(weight(pep.Uniform(), i).monomial + weight(pep.Uniform(), j).monomial)
                for j in range(3)] for i in range(3)]
    np.testing.assert_allclose(uniform, old.avg_pair, atol=1e-15)
    np.testing.assert_allclose(law.pair, old.pair, atol=1e-15)
    assert law.empty_probability == pytest.approx(old.empty)
    for rule, mean in [(pep.Unbiased(), np.full(3, 1 / 3)),
                       (pep.Unbiased((0.5, 0.3, 0.2)), [0.5, 0.3, 0.2]),
                       (pep.FixedWeights((0.5, 0.3, 0.2), scale=2.0),
                        2.0 * np.array([0.5, 0.3, 0.2]) * [0.2, 0.5, 0.7])]:
        got = [law.moment(weight(rule, i).monomial) for i in range(3)]
        np.testing.assert_allclose(got, mean, atol=1e-15)
    sizes = law.masks.sum(axis=1)
    norm = pep.Normalized((1.0, 2.0, 3.0)).coefficients(law.masks, law.inclusion)
    assert np.allclose(norm.sum(axis=1)[sizes > 0], 1.0) and not norm[sizes == 0].any()


def test_samplers_are_participation_laws():
    from flbounds.sampling import UniformISP, UniformRSP

    isp, bern = law_of(UniformISP(4, 2.0), 4), law_of(Bernoulli([0.5] * 4), 4)
    np.testing.assert_allclose(isp.pair, bern.pair)
    rsp, fixed = law_of(UniformRSP(4, 2), 4), law_of(UniformWithoutReplacement(4, 2), 4)
    np.testing.assert_allclose(rsp.pair, fixed.pair)
    assert isinstance(law_of(None, 2), ParticipationLaw) and law_of(None, 2).pair.sum() == 4


@pytest.mark.parametrize("call, name", [
    (lambda: pep.Round("r", pep.local_gd(1, 0.1), {"delta": "mean"}, pep.server_model_step()),
     "aggregation"),
    (lambda: pep.Round("r", pep.local_gd(1, 0.1), {"delta": "sum"}, pep.server_model_step(),
                       server_state=("y",)), "server_state"),
    (lambda: pep.Round("r", pep.local_gd(1, 0.1), {}, pep.server_model_step(),
                       pull=("c",)), "pull"),
    (lambda: pep.Setting(0, 1.0, 2.0), "n_clients"),
    (lambda: pep.Setting(2, 1.0, 2.0, function_class="convex"), "function_class"),
    (lambda: pep.local_gd(0, 0.1), "local_steps"),
    (lambda: pep.local_gd(1, -0.1), "step"),
    (lambda: pep.server_momentum(1.0), "beta"),
    (lambda: pep.FixedWeights((0.5, -0.5)), "weights"),
    (lambda: law_of(np.array([True]), 2), "participation"),
    (lambda: law_of(Bernoulli([0.5, 0.5]), 3), "participation"),
    (lambda: pep.worst_case(pep.fedavg_round(1, 0.1), pep.Setting(2, 1.0, 2.0), None), "measure"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_a_local_update_with_unknown_state_is_refused():
    bad = pep.local_custom(lambda f, pulled, state: ({"w": pulled["x"]}, {"delta": pulled["x"]}))
    rnd = pep.Round("bad", bad, {"delta": "uniform"}, pep.server_model_step())
    with pytest.raises(ValueError, match="client_state"):
        pep.worst_case(rnd, pep.Setting(1, 1.0, 2.0), pep.distance())


def test_the_guide_example_runs_and_prints_its_comments():
    """docs/guide/worst-cases.md, "Any round as a description": the example's printed values
    are the ones its comments state (5 decimals)."""
    import contextlib
    import io
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[3] / "docs" / "guide" / "worst-cases.md").read_text(
        encoding="utf-8")
    block = re.search(r"## Any round as a description.*?```python\n(.*?)```", text,
                      flags=re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "worst-cases.md", "exec"), {})
    printed = [float(line.split()[0]) for line in out.getvalue().splitlines()]
    stated = [float(m) for m in re.findall(r"print\(.*\)\s+# ([0-9.]+)", block)]
    assert len(printed) == len(stated) == 3
    np.testing.assert_allclose(printed, stated, atol=1e-5)


def test_proximal_local_step_contracts_by_one_over_one_plus_gamma_mu():
    r"""One exact proximal step :math:`z = x - \gamma\nabla f(z)` on mu-strongly convex f:
    :math:`\|z - x^\star\| \le \|x - x^\star\| / (1 + \gamma\mu)`, attained by
    :math:`f = \mu\|x - x^\star\|^2/2`; identical clients sharing x*, everyone: the server
    takes that point."""
    gamma = 0.7
    rnd = pep.Round("proximal point", pep.local_prox(gamma), {"delta": "uniform"},
                    pep.server_model_step())
    res = pep.worst_case(rnd, pep.Setting(2, 1.0, 3.0, identical=True), pep.distance())
    exact = 1 / (1 + gamma * 1.0) ** 2
    assert abs(res.worst - exact) <= 2 * pep.gap_tolerance(exact)


def test_sampling_with_replacement_has_the_law_of_its_counts():
    """Multinomial samplers draw with replacement: the law of the counts (flbounds.pep.counts,
    tested in test_counts.py); a procedure with no law is refused by name."""
    from flbounds.sampling import Vrb

    sampler = Vrb(4, 2, 10, G=1.0)
    law = law_of(sampler, 4)
    assert law.count_means == pytest.approx(2 * sampler.probabilities(), abs=1e-14)

    class _Other:
        procedure = "other"

    with pytest.raises(ValueError, match="participation"):
        law_of(_Other(), 4)


def test_random_points_expand_to_the_law_moments():
    r""":math:`E\|(1 - s_1) a + 2 s_0 b\|^2 = (1 - \pi_1)\|a\|^2 + 4\pi_0(1 - \pi_1)\langle a,
    b\rangle + 4\pi_0\|b\|^2` for independent :math:`s_0, s_1` (0.3, 0.6); scalars multiply
    the coefficients from either side."""
    from PEPit import Point

    from flbounds.pep.expect import RandomPoint, indicator

    a, b = Point(), Point()
    law = law_of(Bernoulli([0.3, 0.6]), 2)
    x = RandomPoint({(): a}) + (2.0 * indicator(0)) * b - indicator(1) * a
    coef = {}
    for key, value in (x**2).expectation(law).decomposition_dict.items():
        pair = frozenset((id(key[0]), id(key[1])))
        coef[pair] = coef.get(pair, 0.0) + value
    assert coef[frozenset((id(a),))] == pytest.approx(0.4)
    assert coef[frozenset((id(a), id(b)))] == pytest.approx(4 * 0.3 * 0.4)
    assert coef[frozenset((id(b),))] == pytest.approx(4 * 0.3)


@pytest.mark.parametrize("make", [
    lambda: (pep.scaffold_round(2, 0.1, 3), pep.scaffold_lyapunov(0.05)),
    lambda: (pep.momentum_round(2, 0.1, 0.5), pep.momentum_lyapunov(1.0)),
])
def test_certified_solve_of_a_described_round(make, monkeypatch):
    """With the solver forced to count as inaccurate, a described round still gets a number:
    the certificate rebuilt from its multipliers, an upper bound within its bracket."""
    from flbounds.pep import certify

    rnd, measure = make()
    setting = pep.Setting(3, 1.0, 2.0, common_minimizer=True)
    exact = pep.worst_case(rnd, setting, measure, Bernoulli([0.4, 0.6, 0.8]))
    monkeypatch.setattr(certify, "_accurate", lambda *args: False)
    res = pep.worst_case(rnd, setting, measure, Bernoulli([0.4, 0.6, 0.8]), certified=True)
    assert res.status.startswith("certified")
    assert exact.worst - pep.gap_tolerance(exact.worst) <= res.worst
    assert res.worst <= exact.worst + certify.bracket_tolerance(res.worst)


def test_certified_solve_names_what_v_leaves_unbounded():
    """Clients not sharing x* under SCAFFOLD's V, which does not read the gradients at x*:
    the bounds derived from V (flbounds.pep.certify_derived) leave them free, and the error
    names them instead of certifying. (Two runs, the quadratic class included, are
    certified: test_certify_tworuns and test_engine_certified_routes.)"""
    with pytest.raises(PEPSolveError, match=r"leaves \['grad f_0\(x\*\)'\] unbounded"):
        pep.worst_case(pep.scaffold_round(1, 0.1, 2), pep.Setting(2, 1.0, 2.0),
                       pep.scaffold_lyapunov(0.1), certified=True)
