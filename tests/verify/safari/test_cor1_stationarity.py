"""Corollary 1's first sentence on the biased instance: both readings are gated
deterministically, each changes with its planted bug, and the exact moments agree with the
Monte Carlo runs that carry the hypotheses."""

import numpy as np
import pytest

import verify.safari.cor1 as cor1
import verify.safari.cor1_stationarity as stationarity
from flbounds.ledger import get
from verify.safari.thm4.shrunk import line_problem

CLAIM = "safari.cor1.stationarity_biased"


def _scaled(fn, factor):
    def wrapped(*args, **kwargs):
        return factor * fn(*args, **kwargs)
    return wrapped


def test_both_readings_fail_with_every_hypothesis_evaluated():
    out = get(CLAIM).check(seed=0)
    assert out.verdict == "violated"
    n = len(out.details["rounds"])
    assert np.all(np.asarray(out.measured[:n]) > np.asarray(out.theoretical[:n]))
    assert out.measured[-1] == pytest.approx((2 * 0.8 / 1.8) ** 2, rel=1e-12)
    assert out.theoretical[-1] == 0.0
    assert all(out.hypotheses.values())
    # the exact average is the Monte Carlo mean's expectation
    assert np.all(np.abs(out.details["mc_minus_exact_in_se"]) < 4)
    # the mean-iterate lower bound sits between the uniform floor and the exact average
    low = np.asarray(out.details["reading2_mean_iterate_lower_bound"])
    assert np.all(low >= out.measured[-1]) and np.all(low <= out.measured[:n])


def test_reading_two_carries_the_verdict_when_the_bound_is_planted_loose():
    """A Theorem 4 right side planted 20x too large clears reading 1; reading 2 still fails."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cor1, "thm4_rhs", _scaled(cor1.thm4_rhs, 20.0))
        out = get(CLAIM).check(seed=0)
    assert out.verdict == "violated"
    n = len(out.details["rounds"])
    assert np.all(np.asarray(out.measured[:n]) <= np.asarray(out.theoretical[:n]))


def test_an_unbiased_instance_clears_both_readings_once_the_bound_is_loose():
    """With the never-participating client moved onto the participating one (no bias, the
    planted defect of the instance), the floor is 0 and, with a loose bound, the evidence
    holds (the ledger then says not-applicable: at sigma_G = 0 the printed q-condition is
    vacuous, so the printed theorem does not cover that instance)."""
    unbiased = type(line_problem()).isotropic(np.array([[1.0], [1.0]]))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stationarity, "line_problem", lambda: unbiased)
        mp.setattr(cor1, "thm4_rhs", _scaled(cor1.thm4_rhs, 20.0))
        ev = stationarity.stationarity_biased(rng=np.random.default_rng(0), rounds=[2000, 8000],
                                      n_seeds=2)
        assert get(CLAIM).check(seed=0).verdict == "not-applicable"
    assert ev.measured[-1] == pytest.approx(0.0, abs=1e-12)
    assert ev.verdict() == "holds"


def test_a_wrong_fixed_point_is_an_error_not_an_accusation():
    import verify.safari.remark3_4 as rem
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rem, "safari_mean_limit", lambda prob, *a, **k: prob.x_star.copy())
        assert get(CLAIM).check(seed=0).verdict == "error"


def test_step_condition_is_evaluated_per_R():
    # R = 1000 puts eta_c = 2/sqrt(1000) above Theorem 4's step limit: not-applicable
    assert get(CLAIM).check(seed=0, rounds=[1000]).verdict == "not-applicable"


def test_exact_average_matches_a_hand_recursion():
    """d = 1: x' = (1 - 2e)x + 2e + noise (client 1), x' = (1 - e)x + noise (server)."""
    prob, e, q, s = line_problem(), 0.02, 0.8, 0.1
    m1, m2, tot, low = 3.0, 9.0, 0.0, 0.0
    for _ in range(50):
        c1 = (1 - 2 * e) * m1 + 2 * e
        c2 = (1 - 2 * e) ** 2 * m2 + 2 * (1 - 2 * e) * 2 * e * m1 + 4 * e * e * (1 + s * s)
        s1, s2 = (1 - e) * m1, (1 - e) ** 2 * m2 + e * e * s * s
        m1, m2 = q * c1 + (1 - q) * s1, q * c2 + (1 - q) * s2
        tot, low = tot + m2, low + m1 ** 2
    avg, lower = stationarity.exact_average(prob, client=1, q=q, step_server=e, sigma=s,
                                            sigma_s=s, x0=[3.0], n_rounds=50)
    assert avg == pytest.approx(tot / 50, rel=1e-12)
    assert lower == pytest.approx(low / 50, rel=1e-12)


def test_an_unproven_floor_accuses_nobody():
    """Planted: x_0 = 0 on the near side of xbar (the mean iterate rises to it), so the
    uniform floor argument does not apply and the evidence is inconclusive, not violated."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stationarity, "X0_BIASED", 0.0)
        ev = stationarity.stationarity_biased(rng=np.random.default_rng(0), rounds=[8000],
                                              n_seeds=2)
    assert ev.details["reading2_monotone_argument_holds"] == [False]
    assert ev.verdict() == "inconclusive"


def _matrix_recursion(prob, *, client, q, step_server, sigma, sigma_s, x0, n_rounds):
    """The moment recursion of stationarity.exact_average in matrix form (any d)."""
    d = prob.dim
    eye = np.eye(d)
    A_bar, b_bar = prob.A.mean(axis=0), prob.b.mean(axis=0)
    eta_c = 2.0 * step_server
    maps = [(q, eye - eta_c * prob.A[client], eta_c * prob.b[client], eta_c ** 2 * sigma ** 2),
            (1 - q, eye - step_server * A_bar, step_server * b_bar,
             step_server ** 2 * sigma_s ** 2)]
    mu = np.asarray(x0, dtype=float).copy()
    P = np.outer(mu, mu)
    total = lower = 0.0
    for _ in range(n_rounds):
        new_mu, new_P = np.zeros(d), np.zeros((d, d))
        for w, M, c, var in maps:
            Mmu = M @ mu
            new_mu += w * (Mmu + c)
            new_P += w * (M @ P @ M.T + np.outer(Mmu, c) + np.outer(c, Mmu) + np.outer(c, c)
                          + var * eye)
        mu, P = new_mu, new_P
        g_mean = A_bar @ mu - b_bar
        total += float(np.trace(A_bar @ P @ A_bar.T) - 2 * b_bar @ (A_bar @ mu) + b_bar @ b_bar)
        lower += float(g_mean @ g_mean)
    return total / n_rounds, lower / n_rounds


def test_exact_average_on_a_line_is_the_matrix_recursion_bit_for_bit():
    prob = line_problem()
    for q, e, n in ((0.8, 0.01, 3000), (0.3, 0.05, 200)):
        kw = dict(client=1, q=q, step_server=e, sigma=0.1, sigma_s=0.2, x0=[3.0], n_rounds=n)
        assert stationarity.exact_average(prob, **kw) == _matrix_recursion(prob, **kw)
