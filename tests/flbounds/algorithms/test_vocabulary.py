"""Step schedules, aggregation rules and plans of counts, against NumPy twins; the default
(constant step, mask, uniform rule) keeps its numbers to the bit."""

import numpy as np
import pytest

from flbounds.algorithms import aggregation as agg
from flbounds.algorithms import (
    fedau,
    fedavg,
    focus,
    mifa,
    proxskip,
    safari,
    safari_plan,
    scaffold,
    schedules,
    sg_focus,
)
from flbounds.participation import Bernoulli, WithReplacement
from flbounds.problems import Quadratic, random_quadratics, random_ridge

# Twins and kernels do the same operations in different orders (NumPy's pairwise sums):
# a few eps per operation over <= 60 rounds of contractive maps.
RTOL = 1e-11
N, D, R, TAU = 6, 3, 12, 3


@pytest.fixture(scope="module")
def problems():
    rng = np.random.default_rng(11)
    p = rng.random(N) + 0.2
    return {"quadratic": random_quadratics(rng, N, D, mu=0.5, L=2.0).with_weights(p / p.sum()),
            "ridge": random_ridge(rng, N, 5, D, lam=0.1),
            "fused": random_quadratics(rng, N, 8, mu=0.5, L=2.0)}


def _twin_fedavg(problem, counts, steps, coefficients, form, x0):
    """FedAvg from the update rule: local GD with steps[r, t] (or steps[r, 0] every step),
    then the rule's combination with multiplicities counts[r, i]."""
    x = np.array(x0, dtype=float)
    xs = [x.copy()]
    tau = steps.shape[1] if steps.shape[1] > 1 else TAU
    for r, row in enumerate(counts):
        idx = np.flatnonzero(row)
        if idx.size == 0:
            xs.append(x.copy())
            continue
        Z = np.tile(x, (idx.size, 1))
        for t in range(tau):
            Z = Z - steps[r, min(t, steps.shape[1] - 1)] * problem.client_gradients(Z, clients=idx)
        a = row[idx] * (np.ones(N) if coefficients is None else coefficients)[idx]
        if form == "normalized":
            x = a @ Z / a.sum()
        elif form == "absolute":
            x = a @ Z
        else:
            x = x + a @ (Z - x)
        xs.append(x.copy())
    return np.array(xs)


# ----------------------------------------------------------------------------- schedules
def test_schedule_values():
    assert np.array_equal(schedules.constant(0.3).steps(4), np.full((4, 1), 0.3))
    np.testing.assert_array_equal(schedules.inverse_time(2.0, 5.0).steps(3)[:, 0],
                                  [2 / 5, 2 / 6, 2 / 7])
    per_step = schedules.inverse_time(2.0, 5.0, per="local_step").steps(2, 3)
    np.testing.assert_array_equal(per_step, 2.0 / (5.0 + np.arange(6.0).reshape(2, 3)))
    pw = schedules.piecewise([0.5, 0.25, 0.1], [2, 5]).steps(7)[:, 0]
    np.testing.assert_array_equal(pw, [0.5, 0.5, 0.25, 0.25, 0.25, 0.1, 0.1])
    np.testing.assert_array_equal(schedules.per_round([0.1, 0.2, 0.3]).steps(2)[:, 0], [0.1, 0.2])


@pytest.mark.parametrize("step, match", [
    (-0.1, "step"),
    (np.array([0.1, -0.1, 0.1] + [0.1] * R), "step must be positive"),
    (np.array([0.1, np.nan] + [0.1] * R), "step must be positive"),
    (np.full(R - 1, 0.1), "shorter than the run"),
    (np.full((R, TAU + 1), 0.1), "local steps"),
    ("fast", "step"),
])
def test_bad_steps(problems, step, match):
    plan = np.ones((R, N), dtype=bool)
    for run in (lambda: fedavg(problems["quadratic"], plan, step=step, local_steps=TAU),
                lambda: focus(problems["quadratic"], plan, step=step, local_steps=TAU),
                lambda: scaffold(problems["quadratic"], plan, step=step, local_steps=TAU)):
        with pytest.raises(ValueError, match=match):
            run()


def test_schedule_constructors_validate():
    with pytest.raises(ValueError, match="beta"):
        schedules.inverse_time(-1.0, 1.0)
    with pytest.raises(ValueError, match="per"):
        schedules.inverse_time(1.0, 1.0, per="epoch")
    with pytest.raises(ValueError, match="boundaries"):
        schedules.piecewise([0.1, 0.2], [3, 4])
    with pytest.raises(ValueError, match="values"):
        schedules.piecewise([0.1, -0.2], [3])


def test_focus_rejects_steps_that_change_within_a_round(problems):
    plan = np.ones((R, N), dtype=bool)
    with pytest.raises(ValueError, match="step: this algorithm takes one step per round"):
        focus(problems["quadratic"], plan, local_steps=TAU,
              step=schedules.inverse_time(1.0, 10.0, per="local_step"))


@pytest.mark.parametrize("kind", ["quadratic", "ridge", "fused"])
def test_constant_schedule_is_the_scalar_step_to_the_bit(problems, kind):
    """The general loop (array of equal steps, forced by a last step that differs) gives the
    default loop's bits on every round before the last."""
    prob = problems[kind]
    plan = Bernoulli(np.full(N, 0.5)).plan(np.random.default_rng(1), R)
    steps = np.full(R, 0.07)
    steps[-1] = 0.05
    base = fedavg(prob, plan, step=0.07, local_steps=TAU).x
    sched = fedavg(prob, plan, step=steps, local_steps=TAU).x
    assert np.array_equal(base[:-1], sched[:-1]) and not np.array_equal(base[-1], sched[-1])
    per_step = np.full((R, TAU), 0.07)
    per_step[-1, -1] = 0.05
    assert np.array_equal(base[:-1], fedavg(prob, plan, step=per_step, local_steps=TAU).x[:-1])
    # the uniform rule given explicitly, and a plan of 0/1 counts, are the default
    assert np.array_equal(base, fedavg(prob, plan.astype(np.int64), step=0.07, local_steps=TAU,
                                       aggregation=agg.uniform()).x)


@pytest.mark.parametrize("kind", ["quadratic", "ridge"])
@pytest.mark.parametrize("schedule", [
    schedules.inverse_time(1.0, 8.0),
    schedules.inverse_time(2.0, 20.0, per="local_step"),
    schedules.piecewise([0.2, 0.05], [5]),
])
def test_fedavg_schedule_twin(problems, kind, schedule):
    prob = problems[kind]
    plan = Bernoulli(np.full(N, 0.6)).plan(np.random.default_rng(2), R)
    x0 = np.ones(D)
    got = fedavg(prob, plan, step=schedule, local_steps=TAU, x0=x0).x
    want = _twin_fedavg(prob, plan.astype(int), schedule.steps(R, TAU), None, "normalized", x0)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())


def _twin_focus(problem, plan, steps, x0, noise=None):
    n, d = problem.n_clients, problem.dim
    g = np.zeros((n, d))
    x, y = np.array(x0, dtype=float), np.zeros(d)
    xs, ys = [x.copy()], [y.copy()]
    for r, mask in enumerate(plan):
        eta = steps[r]
        for i in np.flatnonzero(mask):
            z, v = x.copy(), np.zeros(d)
            for t in range(TAU):
                if t > 0:
                    z = z - eta * v
                h = problem.client_gradients(z[None], clients=[i])[0]
                if noise is not None:
                    h = h + noise[r, i, t]
                v = v + h - g[i]
                g[i] = h
            y = y + v
        x = x - eta * y
        xs.append(x.copy())
        ys.append(y.copy())
    return np.array(xs), np.array(ys)


@pytest.mark.parametrize("kind", ["quadratic", "ridge"])
def test_focus_schedule_twin(problems, kind):
    prob = problems[kind]
    rng = np.random.default_rng(3)
    plan = Bernoulli(np.full(N, 0.5)).plan(rng, R)
    steps = 0.3 / (3.0 + np.arange(R))
    tr = focus(prob, plan, step=steps, local_steps=TAU, x0=np.ones(D), record_sum=True)
    xs, ys = _twin_focus(prob, plan, steps, np.ones(D))
    np.testing.assert_allclose(tr.x, xs, rtol=RTOL, atol=RTOL * np.abs(xs).max())
    np.testing.assert_allclose(tr.y, ys, rtol=RTOL, atol=RTOL * np.abs(ys).max())
    np.testing.assert_allclose(tr.y, tr.g_sum, rtol=0, atol=1e-13 * np.abs(ys).max())
    noise = 0.01 * rng.standard_normal((R, N, TAU, D))
    tr = sg_focus(prob, plan, noise, step=steps, local_steps=TAU, x0=np.ones(D))
    xs, _ = _twin_focus(prob, plan, steps, np.ones(D), noise)
    np.testing.assert_allclose(tr.x, xs, rtol=RTOL, atol=RTOL * np.abs(xs).max())


def test_safari_schedule_twin(problems):
    prob = problems["quadratic"]
    plan = safari_plan(np.random.default_rng(4), n_rounds=R, q=0.5, eligible=np.arange(N),
                       n_sampled=3, local_steps=TAU, dim=D, client_noise_std=0.1,
                       server_noise_std=0.1)
    sc, ss = 0.2 / (2.0 + np.arange(R)), np.linspace(0.3, 0.1, R)
    got = safari(prob, plan, step_client=sc, step_server=ss).x
    x, want = np.zeros(D), [np.zeros(D)]
    for r in range(R):
        if plan.client_round[r]:
            ends = []
            for c, i in enumerate(plan.clients[r]):
                z = x.copy()
                for k in range(TAU):
                    g = prob.client_gradients(z[None], clients=[i])[0]
                    z = z - sc[r] * (g + plan.client_noise[r, c, k])
                ends.append(z)
            x = np.mean(ends, axis=0)
        else:
            x = x - ss[r] * (prob.gradient(x) + plan.server_noise[r])
        want.append(x.copy())
    np.testing.assert_allclose(got, np.array(want), rtol=RTOL, atol=1e-14)


def test_baselines_take_schedules(problems):
    """Each NumPy baseline with steps eta_r: a constant array is the scalar run (same
    arrays), and a run whose last step differs agrees with it up to the last round."""
    prob = problems["quadratic"]
    plan = Bernoulli(np.full(N, 0.6)).plan(np.random.default_rng(5), R)
    steps = np.full(R, 0.1)
    steps[-1] = 0.02
    for alg in (fedau, mifa, scaffold, proxskip):
        base = alg(prob, plan, step=0.1, local_steps=TAU).x
        assert np.array_equal(base, alg(prob, plan, step=np.full(R, 0.1), local_steps=TAU).x)
        sched = alg(prob, plan, step=steps, local_steps=TAU).x
        assert np.array_equal(base[:-1], sched[:-1]) and not np.array_equal(base[-1], sched[-1])


def test_scaffold_controls_and_global_step(problems):
    """SCAFFOLD twin with steps eta_r and global step eta_g; the trace holds the server
    control after every round and the final client controls; the tracking identity
    c = mean_i c_i holds (controls start at 0)."""
    prob = problems["quadratic"]
    plan = Bernoulli(np.full(N, 0.5)).plan(np.random.default_rng(6), R)
    steps, eta_g = 0.2 / (2.0 + np.arange(R)), 0.7
    tr = scaffold(prob, plan, step=steps, local_steps=TAU, server_step=eta_g)
    x, c, ci = np.zeros(D), np.zeros(D), np.zeros((N, D))
    for r, mask in enumerate(plan):
        new_ci, deltas = ci.copy(), []
        for i in np.flatnonzero(mask):
            z = x.copy()
            for _ in range(TAU):
                z = z - steps[r] * (prob.client_gradients(z[None], clients=[i])[0] - ci[i] + c)
            new_ci[i] = ci[i] - c + (x - z) / (TAU * steps[r])
            deltas.append(z - x)
        if deltas:
            c = c + (new_ci - ci).sum(axis=0) / N
            x = x + eta_g * np.mean(deltas, axis=0)
        ci = new_ci
        np.testing.assert_allclose(tr.x[r + 1], x, rtol=RTOL, atol=1e-14)
        np.testing.assert_allclose(tr.c[r + 1], c, rtol=RTOL, atol=1e-14)
    np.testing.assert_allclose(tr.c_clients, ci, rtol=RTOL, atol=1e-14)
    np.testing.assert_allclose(tr.c[-1], ci.mean(axis=0), rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="server_step"):
        scaffold(prob, plan, step=0.1, local_steps=TAU, server_step=0.0)


# ----------------------------------------------------------------------------- aggregation
def _rules(prob):
    n = np.arange(1.0, N + 1.0)
    return {"scheme_ii": (agg.scheme_ii(N), N * prob.weights / N, "absolute"),
            "inverse_probability": (agg.inverse_probability(np.full(N, 0.5)),
                                    prob.weights / 0.5, "increment"),
            "sample_counts": (agg.sample_counts(n), n, "normalized")}


@pytest.mark.parametrize("rule", ["scheme_ii", "inverse_probability", "sample_counts"])
@pytest.mark.parametrize("counts", [False, True])
def test_aggregation_twin(problems, rule, counts):
    prob = problems["quadratic"]
    rng = np.random.default_rng(7)
    plan = (WithReplacement(prob.weights, 4).plan(rng, R) if counts
            else Bernoulli(np.full(N, 0.5)).plan(rng, R).astype(np.int64))
    aggregation, coefficients, form = _rules(prob)[rule]
    steps = schedules.inverse_time(0.5, 4.0)
    got = fedavg(prob, plan, step=steps, local_steps=TAU, aggregation=aggregation).x
    want = _twin_fedavg(prob, plan, steps.steps(R), coefficients, form, np.zeros(D))
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())


def test_scheme_one_counts_twin(problems):
    """Li et al.'s Scheme I: K draws with replacement, x <- (1/K) sum_k z_{i_k}."""
    prob = problems["ridge"]
    plan = WithReplacement(np.full(N, 1.0 / N), 5).plan(np.random.default_rng(8), R)
    assert plan.max() > 1
    got = fedavg(prob, plan, step=0.05, local_steps=TAU).x
    want = _twin_fedavg(prob, plan, np.full((R, 1), 0.05), None, "normalized", np.zeros(D))
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())


def test_each_rule_converges_to_its_objective(problems):
    """Full participation, one local step: every rule is gradient descent on the objective
    it targets (module docstring of aggregation), so it reaches that minimiser to rounding;
    the uniform and the weighted minimisers are far apart, so a rule aimed at the wrong
    objective fails."""
    prob = problems["quadratic"]
    plan = np.ones((600, N), dtype=bool)
    n = np.arange(1.0, N + 1.0)
    targets = {"uniform": (agg.uniform(), prob.with_weights(None).x_star),
               "scheme_ii": (agg.scheme_ii(N), prob.x_star),
               "inverse_probability": (agg.inverse_probability(np.ones(N)), prob.x_star),
               "sample_counts": (agg.sample_counts(n), prob.with_weights(n / n.sum()).x_star)}
    assert np.linalg.norm(prob.x_star - targets["uniform"][1]) > 0.05
    assert np.linalg.norm(prob.x_star - targets["sample_counts"][1]) > 0.05
    for name, (rule, x_target) in targets.items():
        x = fedavg(prob, plan, step=0.3, local_steps=1, aggregation=rule).x[-1]
        # GD with step 0.3 <= 1/L contracts by (1 - 0.3 mu) >= 0.85 per round: 600 rounds
        # leave 1e-42 of the start; what remains is rounding, ~ 100 eps |x|
        assert np.linalg.norm(x - x_target) <= 1e-13 * max(1.0, np.linalg.norm(x_target)), name


def test_scheme_one_and_two_reach_the_weighted_minimiser(problems):
    """Partial participation with decaying steps eta_r = 2/(mu (gamma + r)) (Li et al.):
    Scheme I (counts, uniform rule) and Scheme II (K of N without replacement, balanced
    weights on the rescaled clients N p_k f_k, Li et al.'s Theorem 3 setting) end far closer
    to the p-weighted minimiser than to the plain mean's; Scheme II as printed with unequal
    weights does not settle there (its coefficients sum to 1 only in expectation)."""
    prob = problems["quadratic"]
    rng = np.random.default_rng(9)
    K, rounds = 3, 4000
    step = schedules.inverse_time(2.0 / prob.mu, 8.0 * prob.L / prob.mu)
    far = np.linalg.norm(prob.x_star - prob.with_weights(None).x_star)
    plan_one = WithReplacement(prob.weights, K).plan(rng, rounds)
    x_one = fedavg(prob, plan_one, step=step, local_steps=2).x[-1]
    keys = rng.random((rounds, N))
    plan_two = keys < np.sort(keys, axis=1)[:, K:K + 1]
    assert np.all(plan_two.sum(axis=1) == K)
    scale = N * prob.weights
    rescaled = Quadratic(prob.A * scale[:, None, None], prob.b * scale[:, None])
    np.testing.assert_allclose(rescaled.x_star, prob.x_star, rtol=1e-10)
    step_two = schedules.inverse_time(2.0 / rescaled.mu, 8.0 * rescaled.L / rescaled.mu)
    x_two = fedavg(rescaled, plan_two, step=step_two, local_steps=2,
                   aggregation=agg.scheme_ii(K)).x[-1]
    assert np.linalg.norm(x_one - prob.x_star) < 0.1 * far
    assert np.linalg.norm(x_two - prob.x_star) < 0.1 * far
    # the uniform rule over the K sampled clients targets the plain mean instead
    x_plain = fedavg(prob, plan_two, step=step, local_steps=2).x[-1]
    assert np.linalg.norm(x_plain - prob.with_weights(None).x_star) < 0.1 * far
    # Scheme II as printed on the unequal weights: the iterate is rescaled every round
    x_printed = fedavg(prob, plan_two, step=step, local_steps=2,
                       aggregation=agg.scheme_ii(K)).x[-1]
    assert np.linalg.norm(x_printed - prob.x_star) > far


def test_bad_counts_and_rules(problems):
    prob = problems["quadratic"]
    counts = WithReplacement(prob.weights, 4).plan(np.random.default_rng(10), R)
    counts[0, 0] = 2
    with pytest.raises(ValueError, match="plan holds counts"):
        focus(prob, counts, step=0.1, local_steps=TAU)
    with pytest.raises(ValueError, match="plan holds counts"):
        scaffold(prob, counts, step=0.1, local_steps=TAU)
    bad = counts.copy()
    bad[0, 1] = -1
    with pytest.raises(ValueError, match="plan: counts must be >= 0"):
        fedavg(prob, bad, step=0.1, local_steps=TAU)
    with pytest.raises(ValueError, match="plan"):
        fedavg(prob, counts + 0.5, step=0.1, local_steps=TAU)
    with pytest.raises(ValueError, match="aggregation"):
        fedavg(prob, counts, step=0.1, local_steps=TAU, aggregation="mean")
    with pytest.raises(ValueError, match="aggregation: coefficients has length"):
        fedavg(prob, counts, step=0.1, local_steps=TAU, aggregation=agg.sample_counts([1, 2]))
    with pytest.raises(ValueError, match="aggregation: n_sampled"):
        fedavg(prob, counts, step=0.1, local_steps=TAU, aggregation=agg.scheme_ii(N + 1))
    with pytest.raises(ValueError, match="probabilities"):
        agg.inverse_probability([0.5, 0.0])
    with pytest.raises(ValueError, match="weights"):
        agg.scheme_ii(2, weights=[0.5, 0.6])
    with pytest.raises(ValueError, match="n_samples"):
        agg.sample_counts([1.0, 0.0])


def test_batched_runs_take_schedules(problems):
    """A schedule in the batched FedAvg and FOCUS: replicate b is the single run on
    plans[b], as for a constant step."""
    from flbounds.algorithms import fedavg_batched, focus_batched

    prob = problems["ridge"]
    plans = Bernoulli(np.full(N, 0.5)).plan(np.random.default_rng(12), 2 * R).reshape(2, R, N)
    steps = schedules.inverse_time(0.5, 4.0)
    batched = fedavg_batched(prob, plans, step=steps, local_steps=TAU)
    tracked = focus_batched(prob, plans, step=steps, local_steps=TAU)
    for b in range(2):
        assert np.array_equal(batched.x[b], fedavg(prob, plans[b], step=steps,
                                                    local_steps=TAU).x)
        single = focus(prob, plans[b], step=steps, local_steps=TAU)
        assert np.array_equal(tracked.x[b], single.x) and np.array_equal(tracked.g[b], single.g)
    constant = fedavg_batched(prob, plans, step=np.full(R, 0.1), local_steps=TAU)
    assert np.array_equal(constant.x, fedavg_batched(prob, plans, step=0.1, local_steps=TAU).x)


def test_batched_safari_takes_schedules(problems):
    from flbounds.algorithms import SafariPlan, safari_batched, safari_plans

    prob = problems["quadratic"]
    plans = safari_plans([np.random.default_rng(s) for s in (1, 2)], n_rounds=R, q=0.5,
                         eligible=np.arange(N), n_sampled=3, local_steps=TAU, dim=D,
                         client_noise_std=0.1, server_noise_std=0.1)
    sc = 0.2 / (2.0 + np.arange(R))
    out = safari_batched(prob, plans, step_client=sc, step_server=0.1)
    for b in range(2):
        single = safari(prob, SafariPlan(*(f[b] for f in plans)), step_client=sc,
                        step_server=0.1)
        assert np.array_equal(out.x[b], single.x)
        np.testing.assert_array_equal(out.local_grad_norm2[b], single.local_grad_norm2)
