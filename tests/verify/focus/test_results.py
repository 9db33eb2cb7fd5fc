"""FOCUS results: the ledger evaluates their hypotheses on a claim's instance."""

import numpy as np

from flbounds.ledger import get
from flbounds.ledger.results import judge, verdict_under
from verify.focus.lemmas_sg import LEMMA5, smallest_counterexample
from verify.focus.thm1 import THM1A


def test_a_broken_step_makes_a_violation_not_applicable():
    """Lemma 5's smallest counterexample meets the lemma's hypotheses; the same instance
    with a step above the lemma's bound (tau = 2) makes the accusation not-applicable."""
    instance = smallest_counterexample()["instance"]
    parts = [LEMMA5.part("descent")]
    assert verdict_under("violated", judge(parts, instance, {}))[0] == "violated"
    broken = dict(instance, tau=2, step=1.0)
    verdict, reason = verdict_under("violated", judge(parts, broken, {}))
    assert verdict == "not-applicable" and "step" in reason


def test_thm1a_step_predicate_reads_the_printed_condition():
    from flbounds.participation import Bernoulli
    from flbounds.problems import random_quadratics
    from verify.focus.thm1 import thm1a_conditions

    problem = random_quadratics(np.random.default_rng(0), 4, 3, mu=1.0, L=2.0)
    q = Bernoulli([0.3, 0.5, 0.7, 0.9]).aggregation_weights()
    mu = float(problem.client_mu.min())
    limit = min(thm1a_conditions(mu, problem.L, 4, 3, float(q.min())).values())
    inst = dict(q=q, problem=problem, L=problem.L, mu=mu, tau=3)
    assert all(THM1A.evaluate(dict(inst, step=limit), ["rate"]).values())
    assert not all(THM1A.evaluate(dict(inst, step=1.01 * limit), ["rate"]).values())


def test_eq33_counterexample_meets_its_hypothesis():
    res = get("focus.eq33.consensus_limit_printed").check(seed=0)
    assert res.verdict == "violated"
    assert all(v is True for v in res.hypotheses.values())
