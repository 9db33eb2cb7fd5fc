"""Rates over many rounds (flbounds.pep.lyapunov_search): the Lyapunov search against known rates,
its bracket against replayed witnesses, the witnesses against flbounds.algorithms."""

import itertools

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli, UniformWithoutReplacement, subset_distribution
from flbounds.pep import lyapunov_search as lyap
from flbounds.pep import second_moment as sm
from flbounds.pep.expect import law_of
from flbounds.pep.sdp import PEPSolveError


def _slack(rate):
    """The certified value is an accepted solve (gap_tolerance) and must sit in the
    bisection's bracket (width BISECTION_TOL)."""
    return pep.gap_tolerance(rate.certified) + lyap.BISECTION_TOL


def _gd_check(mu, L, step):
    """One client, everyone, one local step: gradient descent."""
    rate = lyap.lyapunov_rate(pep.fedavg_round(1, step), pep.Setting(1, mu, L,
                                                                     common_minimizer=True))
    known = max(abs(1 - step * mu), abs(1 - step * L)) ** 2
    assert abs(rate.certified - known) <= 1e-6, (rate.certified, known)
    assert abs(rate.witness - known) <= 1e-12, (rate.witness, known)
    assert rate.search[0] - 1e-6 <= known <= rate.search[1] + 1e-6
    return rate


@pytest.mark.parametrize("mu, L, step", [(1.0, 4.0, 0.1), (1.0, 4.0, 0.45), (0.5, 2.0, 0.8)])
def test_gradient_descent_has_its_known_rate(mu, L, step):
    """max(|1 - eta mu|, |1 - eta L|)^2 within 1e-6 (mu binding, L binding)."""
    _gd_check(mu, L, step)


def test_a_wrong_sign_in_the_decrease_is_caught(monkeypatch):
    """Planted bug: V's decrease written rho V - E[V+]. The search then 'certifies' rho = 0,
    which the check of the searched V refutes."""
    from flbounds.pep import lyapunov_lmi

    monkeypatch.setattr(lyapunov_lmi, "decrease", lambda after, before, rho: rho * before - after)
    with pytest.raises((PEPSolveError, AssertionError)):
        _gd_check(1.0, 4.0, 0.1)


ROUNDS = {
    "fedavg": lambda: pep.fedavg_round(2, 0.05),
    "focus": lambda: pep.focus_round(2, 0.05),
    "scaffold": lambda: pep.scaffold_round(2, 0.05, 2),
}


@pytest.mark.parametrize("name", sorted(ROUNDS))
@pytest.mark.parametrize("p", [(0.5, 0.5), (0.3, 0.9)])
def test_certified_is_at_least_the_witness(name, p):
    rate = lyap.lyapunov_rate(ROUNDS[name](), pep.Setting(2, 1.0, 4.0, common_minimizer=True),
                              Bernoulli(p))
    assert rate.witness <= rate.certified + _slack(rate), (rate.witness, rate.certified)
    assert 0 < rate.certified < 1


@pytest.mark.parametrize("name, measure", [
    ("focus", pep.focus_lyapunov(0.5)),
    ("focus", pep.focus_lyapunov(5.0)),
    ("scaffold", pep.scaffold_lyapunov(0.01)),
])
def test_the_search_beats_a_fixed_lyapunov_function(name, measure):
    """The paper-shaped V (||x||^2 plus a weighted consensus or control term) is one of the
    searched P, so its one-round worst case is an upper bound on the best rate."""
    setting, proc = pep.Setting(2, 1.0, 4.0, common_minimizer=True), Bernoulli([0.4, 0.8])
    rate = lyap.lyapunov_rate(ROUNDS[name](), setting, proc, witness=False)
    fixed = pep.worst_case(ROUNDS[name](), setting, measure, proc)
    assert rate.certified <= fixed.worst + _slack(rate) + pep.gap_tolerance(fixed.worst)


def _exact_second_moment(matrices, probs, xi0, rounds):
    sigma = np.outer(xi0, xi0)
    for _ in range(rounds):
        sigma = sum(p * t @ sigma @ t.T for p, t in zip(probs, matrices, strict=True))
    return sigma


def test_round_matrices_replay_focus_and_scaffold_of_the_algorithms():
    """E||x_R||^2 from the second-moment recursion of the described round equals the average
    over every participation plan of R rounds run by flbounds.algorithms (FOCUS from a
    given state, SCAFFOLD from zero controls), on a 2-D heterogeneous quadratic."""
    from flbounds.algorithms import FocusState, focus, scaffold
    from flbounds.problems import Quadratic

    rng = np.random.default_rng(3)
    M = rng.standard_normal((2, 2, 2))
    problem = Quadratic(np.einsum("nij,nkj->nik", M, M) + np.eye(2), np.zeros((2, 2)))
    proc, R, step, tau = Bernoulli([0.4, 0.7]), 3, 0.05, 2
    law = law_of(proc, 2)
    masks, probs = subset_distribution(proc)
    x0, z0 = rng.standard_normal(2), rng.standard_normal((2, 2))
    g0 = np.einsum("nij,nj->ni", problem.A, z0)
    cases = [
        (pep.focus_round(tau, step), np.concatenate([x0, z0.ravel()]),
         lambda plan: focus(problem, plan, step=step, local_steps=tau,
                            start=FocusState(x0.copy(), g0.sum(0), g0.copy(), z0.copy())).x[-1]),
        (pep.scaffold_round(tau, step, 2), np.concatenate([x0, np.zeros(4)]),
         lambda plan: scaffold(problem, plan, step=step, local_steps=tau, x0=x0).x[-1]),
    ]
    for rnd, xi0, run in cases:
        T = sm.round_matrices(rnd, problem, law)
        sigma = _exact_second_moment(T, law.probs, xi0, R)
        predicted = np.trace(sigma[:2, :2])
        replayed = 0.0
        for combo in itertools.product(range(len(probs)), repeat=R):
            w = float(np.prod(probs[list(combo)]))
            if w > 0:
                replayed += w * float(np.sum(run(masks[list(combo)]) ** 2))
        assert replayed == pytest.approx(predicted, rel=1e-10, abs=1e-14)


def test_witness_rate_is_the_growth_of_the_second_moment():
    """The spectral radius is the limit of E||xi_R||^2 ratios (power iteration, 400 rounds)."""
    from flbounds.problems import Quadratic

    rnd, proc = pep.focus_round(2, 0.1), UniformWithoutReplacement(3, 2)
    problem = Quadratic(np.array([1.0, 2.5, 4.0])[:, None, None], np.zeros((3, 1)))
    law = law_of(proc, 3)
    T = sm.round_matrices(rnd, problem, law)
    rate = sm.second_moment_rate(T, law.probs)
    sigma = np.eye(T.shape[1])
    for _ in range(400):
        nxt = sum(p * t @ sigma @ t.T for p, t in zip(law.probs, T, strict=True))
        ratio, sigma = np.trace(nxt) / np.trace(sigma), nxt / np.trace(nxt)
    assert ratio == pytest.approx(rate, rel=1e-8)


def test_safari_bracket():
    """SAFARI's state is x: the certified rate is the one-round worst case; its 1-D witness
    is below it, and equal when the extreme curvature is the worst (identical clients)."""
    rate = lyap.safari_bracket(1.0, 4.0, 0.5, 2, 0.05, 0.2, printed=0.9)
    assert rate.witness <= rate.certified + pep.gap_tolerance(rate.certified)
    assert rate.certified == pytest.approx(rate.witness, abs=2 * pep.gap_tolerance(1.0))
    assert rate.printed == 0.9


@pytest.mark.parametrize("call, name", [
    (lambda: lyap.lyapunov_rate(pep.fedavg_round(1, 0.1), pep.Setting(2, 1.0, 2.0)),
     "setting"),
    (lambda: lyap.lyapunov_rate(pep.fedavg_round(1, 0.1),
                                pep.Setting(1, 1.0, 2.0, function_class="smooth",
                                            common_minimizer=True)), "setting"),
    (lambda: lyap.lyapunov_rate(pep.fedavg_round(1, 0.1),
                                pep.Setting(1, 1.0, 2.0, common_minimizer=True), rho_max=0.0),
     "rho_max"),
    (lambda: lyap.lyapunov_rate(None, pep.Setting(1, 1.0, 2.0, common_minimizer=True)),
     "round_"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_no_certificate_below_rho_max_raises():
    """A step beyond 2/L does not contract: nothing certifies rho <= 1."""
    with pytest.raises(PEPSolveError, match="no quadratic Lyapunov"):
        lyap.lyapunov_rate(pep.fedavg_round(1, 1.5), pep.Setting(1, 1.0, 2.0,
                                                                 common_minimizer=True))


def test_the_module_does_not_shadow_the_measure_builder():
    """``pep.lyapunov`` stays the measure builder of flbounds.pep.describe (a submodule named
    ``lyapunov`` would replace it on import)."""
    from flbounds.pep.describe import lyapunov

    assert pep.lyapunov is lyapunov and pep.lyapunov_rate is lyap.lyapunov_rate
