"""Step schedules against NumPy twins, in every algorithm with a step; a constant schedule
keeps the default's numbers to the bit."""

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
from flbounds.participation import Bernoulli
from flbounds.problems import random_quadratics, random_ridge
from tests.flbounds.algorithms.fedavg_twin import RTOL, TAU, D, N, R, make_problems
from tests.flbounds.algorithms.fedavg_twin import twin_fedavg as _twin_fedavg


@pytest.fixture(scope="module")
def problems():
    return make_problems()


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


def test_safari_server_gradient_is_the_weighted_objectives():
    from flbounds.algorithms.safari import server_population
    from flbounds.kernels.gradients import gradients_at
    from flbounds.problems import random_logistic

    rng = np.random.default_rng(13)
    w = rng.random(N) + 0.1
    w /= w.sum()
    x = rng.standard_normal(D)
    for prob in (random_quadratics(rng, N, D, mu=0.5, L=2.0).with_weights(w),
                 random_ridge(rng, N, 5, D, lam=0.1).with_weights(w)):
        out = np.empty((1, D))
        gradients_at(server_population(prob.kernel_data, prob.weights), x[None],
                     np.zeros(1, dtype=np.int64), out)
        np.testing.assert_allclose(out[0], prob.gradient(x), rtol=1e-12, atol=1e-14)
    logistic = random_logistic(rng, N, 5, D, lam=0.1).with_weights(w)
    plan = safari_plan(rng, n_rounds=2, q=0.5, eligible=np.arange(N), n_sampled=2,
                       local_steps=1, dim=D, client_noise_std=0.0, server_noise_std=0.0)
    with pytest.raises(ValueError, match="weights"):
        safari(logistic, plan, step_client=0.1, step_server=0.1)
