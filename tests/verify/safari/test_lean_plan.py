"""The lean SAFARI plan (verify.safari.instances.lean_plan): SAFARI's law, only what a run
reads drawn."""

import numpy as np

from flbounds.algorithms.safari import SafariPlan, safari
from verify.safari.instances import lean_plan, two_group_problem

KW = dict(n_rounds=20000, q=0.3, eligible=np.arange(4, 10), n_sampled=2, local_steps=3, dim=2,
          client_noise_std=0.5, server_noise_std=0.2)


def test_lean_plan_has_safaris_law():
    plan = lean_plan(np.random.default_rng(3), **KW)
    c, R = plan.client_round, KW["n_rounds"]
    assert abs(c.mean() - 0.3) <= 4 * np.sqrt(0.3 * 0.7 / R)
    picked = plan.clients[c]
    assert np.all(np.sort(picked, axis=1)[:, 0] < np.sort(picked, axis=1)[:, 1])  # distinct
    share = np.bincount(picked.ravel(), minlength=10)[4:] / picked.shape[0]
    assert np.all(np.abs(share - 2 / 6) <= 4 * np.sqrt((2 / 6) * (4 / 6) / picked.shape[0]))
    first = np.bincount(picked[:, 0], minlength=10)[4:] / picked.shape[0]  # order uniform too
    assert np.all(np.abs(first - 1 / 6) <= 4 * np.sqrt((1 / 6) * (5 / 6) / picked.shape[0]))
    client_sq = np.sum(plan.client_noise[c] ** 2, axis=-1).ravel()
    server_sq = np.sum(plan.server_noise[~c] ** 2, axis=-1)
    for sq, var in ((client_sq, 0.25), (server_sq, 0.04)):
        assert abs(sq.mean() - var) <= 4 * sq.std(ddof=1) / np.sqrt(sq.size)
    assert not plan.client_noise[~c].any() and not plan.server_noise[c].any()


def test_safari_reads_nothing_the_lean_plan_leaves_out():
    prob = two_group_problem()
    plan = lean_plan(np.random.default_rng(4), **dict(KW, n_rounds=500))
    rng, c = np.random.default_rng(5), plan.client_round
    filled = SafariPlan(c, np.where(c[:, None], plan.clients,
                                    rng.choice(np.arange(10), size=plan.clients.shape)),
                        np.where(c[:, None, None, None], plan.client_noise,
                                 rng.normal(size=plan.client_noise.shape)),
                        np.where(c[:, None], rng.normal(size=plan.server_noise.shape),
                                 plan.server_noise))
    kw = dict(step_client=0.01, step_server=0.02, x0=np.array([0.0, 2.0]))
    a, b = safari(prob, plan, **kw), safari(prob, filled, **kw)
    assert np.array_equal(a.x, b.x)
    assert np.array_equal(a.local_grad_norm2, b.local_grad_norm2, equal_nan=True)
