"""The Monte Carlo claims benchmark: each per-replicate substitute computes what the batched
entry point computes, and a substitute that differs is reported as not identical."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import mc_claims
from flbounds.algorithms import fedavg_batched
from flbounds.ledger.api import registry
from flbounds.participation import Bernoulli
from flbounds.problems import random_quadratics
from flbounds.sampling.online import Assumption51Feedback
from flbounds.sampling.online_batched import baseline_costs
from verify.safari import digits_experiment, instances


def test_fedavg_substitute_matches_batched():
    rng = np.random.default_rng(0)
    problem = random_quadratics(rng, 5, 3, mu=1.0, L=4.0)
    plans = np.stack([Bernoulli(np.full(5, 0.5)).plan(c, 40) for c in rng.spawn(4)])
    a = fedavg_batched(problem, plans, step=0.05, local_steps=3).x
    b = mc_claims.fedavg_per_plan(problem, plans, step=0.05, local_steps=3).x
    assert np.array_equal(a, b)


@pytest.mark.parametrize("kind", ["vrb", "mabs"])
def test_online_substitute_matches_batched(kind):
    fb = Assumption51Feedback.generate(np.random.default_rng(1), 20)
    seeds = lambda: np.random.default_rng(2).spawn(2)  # noqa: E731
    a = baseline_costs(kind, fb, (2, 4), 50, seeds(), G=fb.G)
    b = mc_claims.costs_per_run(kind, fb, (2, 4), 50, seeds(), G=fb.G)
    assert np.array_equal(a, b)


def test_safari_substitute_matches_batched():
    problem = instances.two_group_problem()
    kwargs = dict(step_server=0.05, step_client=0.02, x0=(0.0, 3.0), n_rounds=30, q=0.5,
                  eligible=instances.ELIGIBLE, n_sampled=3, local_steps=2, dim=2,
                  client_noise_std=0.1, server_noise_std=0.1)
    seeds = lambda: np.random.default_rng(3).spawn(5)  # noqa: E731
    batched = [t for _, t in instances.run_seeds_batched(seeds(), problem, **kwargs)]
    single = [t for _, t in mc_claims.seeds_one_by_one(seeds(), problem, **kwargs)]
    for field in range(3):
        a = np.concatenate([t[field] for t in batched])
        b = np.concatenate([t[field] for t in single])
        assert np.array_equal(a, b, equal_nan=True)


def test_digits_substitute_matches_lockstep_runs():
    rng = np.random.default_rng(4)
    reps = []
    for p in (2, 4):
        fed = digits_experiment.digits_federation(rng, classes_per_client=p, n_server=50)
        plan = digits_experiment.digits_plan(rng, fed, n_rounds=6, q=0.5, n_excluded=2,
                                             n_sampled=3)
        reps += [digits_experiment.Replicate(fed, plan, np.ones(6, dtype=bool)),
                 digits_experiment.Replicate(fed, plan, plan.client_round)]
    kwargs = dict(step_client=0.1, step_server=0.1, batch=16, tail=3, server_steps=None)
    a = digits_experiment.lockstep_runs(reps, **kwargs)
    b = mc_claims.digits_one_by_one(reps, **kwargs)
    assert np.array_equal(a, b)


@pytest.fixture
def one_repeat(monkeypatch):
    monkeypatch.setattr(mc_claims, "REPEATS", 1)
    registry.load_all()
    return mc_claims._bindings(mc_claims.SUBSTITUTES), mc_claims._bindings(mc_claims.DRAWS)


def test_claim_row_measures_a_batched_claim(one_repeat):
    row = mc_claims.claim_row(registry.get("kvib.app_f.adaptive_regret_falls"), "quick", 0,
                              *one_repeat)
    assert row["identical"] and row["loop_s"] > 0 and row["batched_s"] > 0
    assert 0 < row["batched_share"] <= 1
    assert row["peak_mib"] is None or row["peak_mib"] >= 0


def test_claim_row_times_the_plan_draws(one_repeat):
    row = mc_claims.claim_row(registry.get("safari.remark6.safari_escapes_ball"), "quick", 0,
                              *one_repeat)
    assert row["identical"] and 0 < row["draw_share"] < row["batched_share"] <= 1


def test_claim_row_skips_a_claim_without_batched_calls(one_repeat):
    assert mc_claims.claim_row(registry.get("safari.thm3.negative_control"), "quick", 0,
                               *one_repeat) is None


def test_claim_row_flags_a_substitute_that_differs(one_repeat, monkeypatch):
    """A planted fault: the per-replicate path runs FedAvg at a 1% longer step."""
    def wrong(problem, plans, *, step, local_steps, x0=None):
        return mc_claims.fedavg_per_plan(problem, plans, step=1.01 * step,
                                         local_steps=local_steps, x0=x0)

    monkeypatch.setitem(mc_claims.SUBSTITUTES, fedavg_batched, wrong)
    row = mc_claims.claim_row(registry.get("focus.fedavg.mc_mean_is_fixed_point"), "quick", 0,
                              *one_repeat)
    assert row["identical"] is False


def test_main_without_monte_carlo_claims_is_a_usage_error(tmp_path, one_repeat, capsys):
    assert mc_claims.main(["--claims", "fedals.alg1.alpha1_is_fedavg",
                           "--out", str(tmp_path)]) == 2
    assert "none of the selected claims" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_main_with_seed_by_seed_claims_only(tmp_path, one_repeat):
    assert mc_claims.main(["--claims", "safari.alg1.special_cases",
                           "--out", str(tmp_path)]) == 0
    table = (tmp_path / "mc_claims.md").read_text()
    assert "(seed by seed)" in table and "together" not in table and "None" not in table
