"""The exact attacks on SubTrunc's Lemmas 1 and 2 (eq. (27); eq. (44) and proof steps (56),
(57), (59)): the closed-form moments agree with the claims' own simulators, the enumerated
uniform law has the textbook inclusion probabilities, points outside the lemmas' hypotheses
are rejected by their predicates, fixed points hold and replay, and a planted defect in each
bound is found."""

import numpy as np
import pytest

import verify.subtrunc.attacks_rounds as rounds
from flbounds.falsify.surfaces import get_surface
from flbounds.selection import SelectionRule
from verify.subtrunc.lemma1 import one_round
from verify.subtrunc.lemma2 import local_paths
from verify.subtrunc.quadratic_rounds import (
    ClientQuadratics,
    average_gradient_moments,
    consensus,
    local_moments,
    planar_clients,
    point_law,
    selected_round,
    uniform_law,
)

LEMMA2 = ("subtrunc.lemma2.gradient_error", "subtrunc.lemma2.proof_step_56",
          "subtrunc.lemma2.proof_step_57", "subtrunc.lemma2.proof_step_59")
ALL = (*LEMMA2, "subtrunc.lemma1.one_round")


def _clients(n, eig_low, seed=0):
    """n planar clients, curvature in [eig_low, 1], isotropic noise of E||xi||^2 = 1 (the
    claims' simulators draw N(0, sigma^2/d I))."""
    rng = np.random.default_rng(seed)
    hessians, noise = planar_clients(rng.uniform(eig_low, 1, size=(n, 2)),
                                     rng.uniform(0, np.pi, size=n), np.full(n, 0.5), 1.0)
    return ClientQuadratics(hessians, rng.normal(size=(n, 2))), noise


def _close(samples, exact, axis=0):
    """MC mean within 5 SE of the exact value (plus the rounding of a float64 mean of 20,000
    equal terms, where the value is deterministic)."""
    se = samples.std(axis=axis, ddof=1) / np.sqrt(samples.shape[axis])
    return np.all(np.abs(samples.mean(axis=axis) - exact)
                  <= 5 * se + 1e-10 * np.abs(exact) + 1e-12)


def test_lemma2_moments_match_the_claims_simulator():
    """20 indefinite clients (the claims' local_paths is written for N_CLIENTS = 20)."""
    prob, noise = _clients(20, -1.0)
    w, step, E = np.array([1.0, -0.5]), 1 / 12, 4
    mom = local_moments(prob, w, step=step, local_steps=E, noise_covs=noise)
    iterates, grads = local_paths(prob, w, local_steps=E, step=step,
                                  rng=np.random.default_rng(1), n_paths=20000)
    u_mean, u_var = average_gradient_moments(mom)
    u = grads.mean(axis=2)
    assert _close(np.sum((u[:, :1] - u) ** 2, axis=2),
                  np.sum((u_mean[0] - u_mean[:E]) ** 2, axis=1) + u_var[:E])
    assert _close(np.sum(u ** 2, axis=2), np.sum(u_mean[:E] ** 2, axis=1) + u_var[:E])
    assert _close(np.sum(grads ** 2, axis=3),
                  np.sum(mom.grad_means[:E] ** 2, axis=2) + mom.grad_vars[:E])
    spread = iterates - iterates.mean(axis=2, keepdims=True)
    assert _close(np.sum(spread ** 2, axis=(2, 3)), consensus(mom))


@pytest.mark.parametrize("rule", [SelectionRule("random"), SelectionRule("divfl",
                                                                         sample_size=20)])
def test_lemma1_round_matches_the_claims_simulator(rule):
    prob, noise = _clients(20, 0.1)
    w, step, E, k = np.array([1.0, -0.5]), 1 / 12, 4, 5
    f_next, bias_sq = one_round(prob, w, k=k, local_steps=E, step=step, sigma2=1.0, rule=rule,
                                rng=np.random.default_rng(2), n_paths=20000)
    mom = local_moments(prob, w, step=step, local_steps=E, noise_covs=noise)
    if rule.name == "random":
        law = uniform_law(20, k)
    else:
        grads = prob.gradients(np.broadcast_to(w, (20, 2)))
        law = point_law(rounds.select_clients(
            rule, k=k, grads=grads, losses=prob.values(np.broadcast_to(w, (20, 2))),
            data_fractions=np.full(20, 0.05), history=[np.arange(k)],
            keys=np.zeros((k + 1, 20))), 20)
    exact_f, exact_bias = selected_round(prob, mom, *law, k, 1.0)
    assert _close(f_next, exact_f)
    assert _close(bias_sq, exact_bias)


def test_the_enumerated_uniform_law_has_the_textbook_inclusions():
    pi, Pi = uniform_law(7, 3)
    assert np.allclose(pi, 3 / 7)
    assert np.allclose(Pi[~np.eye(7, dtype=bool)], 3 * 2 / (7 * 6))


@pytest.mark.parametrize("claim_id", ALL)
def test_fixed_points_hold_and_replay(claim_id):
    surface = get_surface(claim_id)
    for point in surface.fixed_instances():
        assert surface.effective_validator()(**point) is True
        ratio = surface.ratio(**point)
        assert ratio <= surface.threshold
        assert surface.ratio(**point) == ratio


@pytest.mark.parametrize("claim_id", ALL)
def test_a_step_above_the_limit_is_rejected(claim_id):
    surface = get_surface(claim_id)
    point = dict(surface.fixed_instances()[-1], step_frac=1.2)
    rejected = surface.effective_validator()(**point)
    assert isinstance(rejected, str) and "step" in rejected


def test_lemma1_rejects_a_client_loss_below_zero():
    """Lemma 1 assumes f_i >= 0 (Assumption 2): a negative curvature is outside."""
    surface = get_surface("subtrunc.lemma1.one_round")
    point = surface.fixed_instances()[0]
    eig = point["eig"].copy()
    eig[0, 1] = -0.5
    rejected = surface.effective_validator()(**dict(point, eig=eig))
    assert isinstance(rejected, str) and "A2" in rejected


def _planted(monkeypatch, name, bound):
    monkeypatch.setattr(rounds, name, bound)


def test_eq44_without_its_noise_term_is_found(monkeypatch):
    """Planted: eq. (44) with its sigma^2 term dropped; at the saddle (noise only) the error is
    all noise."""
    surface = get_surface("subtrunc.lemma2.gradient_error")
    point = surface.fixed_instances()[0]
    assert surface.ratio(**point) <= surface.threshold
    eq44 = rounds.eq44_rhs
    _planted(monkeypatch, "eq44_rhs", lambda **kw: eq44(**dict(kw, sigma2=0.0)))
    assert surface.ratio(**point) > surface.threshold


def test_step56_without_its_noise_term_is_found(monkeypatch):
    surface = get_surface("subtrunc.lemma2.proof_step_56")
    point = surface.fixed_instances()[-1]
    assert surface.ratio(**point) <= surface.threshold
    step56 = rounds.step56_rhs
    _planted(monkeypatch, "step56_rhs", lambda **kw: step56(**dict(kw, sigma2=0.0)))
    assert surface.ratio(**point) > surface.threshold


def test_step57_with_a_smaller_constant_is_found(monkeypatch):
    """Planted: eta^2 tau^2/2 in place of 9 eta^2 tau^2/8 (Lemma 3's constant lost)."""
    surface = get_surface("subtrunc.lemma2.proof_step_57")
    point = surface.fixed_instances()[1]
    assert surface.ratio(**point) <= surface.threshold
    _planted(monkeypatch, "step57_rhs", lambda *, step, tau, grad_sq, n, sigma2:
             step ** 2 * tau ** 2 / 2 * (2 * grad_sq + n * sigma2))
    assert surface.ratio(**point) > surface.threshold


def test_step59_resting_on_eq31_alone_is_found(monkeypatch):
    """Planted: (59) as L^2 times eq. (31)'s right side, L^2 eta^2 (tau sum E||u_t||^2 +
    tau sigma^2/n) (no consensus term, no factor 2): false at a saddle with the noise along
    the negative curvature, where (31) itself fails."""
    surface = get_surface("subtrunc.lemma2.proof_step_59")
    point = surface.fixed_instances()[0]
    assert surface.ratio(**point) <= surface.threshold
    _planted(monkeypatch, "step59_rhs", lambda *, step, L, tau, u_sq_sum, grad_sq, n, sigma2:
             step ** 2 * L ** 2 * tau * (u_sq_sum + sigma2 / n))
    assert surface.ratio(**point) > surface.threshold


def test_lemma1_with_too_much_descent_is_found(monkeypatch):
    """Planted: eq. (27) with -2 eta E ||grad f(w_k)||^2 for -(eta E/4) ||grad f(w_k)||^2;
    full participation (gamma = 0), a small step, almost no noise."""
    surface = get_surface("subtrunc.lemma1.one_round")
    point = dict(surface.fixed_instances()[2], k_frac=1.0, step_frac=0.05, sigma2=1e-6,
                 rule=0)
    assert surface.effective_validator()(**point) is True
    assert surface.ratio(**point) <= surface.threshold
    eq27 = rounds.lemma1_rhs

    def planted(prob, w, *, local_steps, step, sigma2, gamma):
        n = prob.targets.shape[0]
        grad = prob.gradients(np.broadcast_to(w, (n, w.size))).mean(axis=0)
        return (eq27(prob, w, local_steps=local_steps, step=step, sigma2=sigma2, gamma=gamma)
                - 1.75 * step * local_steps * float(grad @ grad))
    _planted(monkeypatch, "lemma1_rhs", planted)
    assert surface.ratio(**point) > surface.threshold


def test_the_stochastic_greedy_law_matches_the_library_sampler():
    """Exact law of eq. (17) against 6,000 runs of flbounds' stochastic greedy (uniform
    keys): every subset's frequency within 5 binomial standard errors."""
    from flbounds.selection import stochastic_greedy, stochastic_greedy_plan

    prob, _ = _clients(7, 0.1, seed=3)
    W = np.broadcast_to(np.array([0.5, 1.0]), (7, 2))
    f = rounds._objective("subtrunc", prob.gradients(W), prob.values(W), None, lam=2.0, b=1.0,
                          mu=0.0)
    probs, masks = rounds.stochastic_greedy_law(f, 3, 2)
    assert np.isclose(probs.sum(), 1) and masks.sum(axis=1).tolist() == [3] * len(probs)
    rng, runs = np.random.default_rng(4), 6000
    counts = {}
    for _ in range(runs):
        chosen = tuple(sorted(stochastic_greedy(f, 3, sample_size=2,
                                                keys=stochastic_greedy_plan(rng, 7, 3))))
        counts[chosen] = counts.get(chosen, 0) + 1
    exact = {tuple(np.flatnonzero(m)): p for p, m in zip(probs, masks, strict=True)}
    assert set(counts) <= set(exact)
    for subset, p in exact.items():
        se = np.sqrt(p * (1 - p) / runs)
        assert abs(counts.get(subset, 0) / runs - p) <= 5 * se + 1e-12, subset
