"""FOCUS results: the ledger evaluates their hypotheses on a claim's instance (issue 36)."""

import numpy as np
import pytest

from flbounds.ledger import get
from flbounds.participation import Bernoulli
from flbounds.problems import random_quadratics
from verify.focus import lemma5_6
from verify.focus.lemma5_6 import LEMMA5
from verify.focus.thm1 import THM1A, thm1a_conditions


def test_lemma5_counterexample_meets_its_hypotheses():
    instance = lemma5_6.smallest_counterexample()["instance"]
    assert all(LEMMA5.evaluate(instance, ["descent"]).values())


def test_a_broken_step_turns_the_violation_not_applicable(monkeypatch):
    """Plant a step above Lemma 5's bound in the smallest counterexample's instance: the
    same measurement is no longer an accusation."""
    real = lemma5_6.smallest_counterexample

    def broken():
        example = real()
        example["instance"] = dict(example["instance"], tau=2, step=1.0)
        return example

    monkeypatch.setattr(lemma5_6, "smallest_counterexample", broken)
    res = get("focus.lemma5.sg_descent_printed").check(seed=0)
    assert res.verdict == "not-applicable"
    assert any(v is False for v in res.hypotheses.values())


def test_thm1a_step_predicate_reads_the_printed_condition():
    problem = random_quadratics(np.random.default_rng(0), 4, 3, mu=1.0, L=2.0)
    q = Bernoulli([0.3, 0.5, 0.7, 0.9]).aggregation_weights()
    mu = float(problem.client_mu.min())
    limit = min(thm1a_conditions(mu, problem.L, 4, 3, float(q.min())).values())
    inst = dict(q=q, problem=problem, L=problem.L, mu=mu, tau=3)
    assert all(THM1A.evaluate(dict(inst, step=limit), ["rate"]).values())
    assert not all(THM1A.evaluate(dict(inst, step=1.01 * limit), ["rate"]).values())


@pytest.mark.parametrize("cid", ["focus.eq33.consensus_limit_printed",
                                 "focus.thm3.printed_bound",
                                 "focus.fig1.doubly_stochastic_formula"])
def test_accusations_rest_on_true_hypotheses(cid):
    res = get(cid).check(seed=0)
    assert res.verdict == "violated"
    assert res.hypotheses and all(v is True for v in res.hypotheses.values())


def test_example_34_is_not_primitive():
    """Eq. (33) assumes a primitive R; the paper's own example (34) is not (nodes 2 and 4 are
    transient), so eq. (33)'s counterexample uses a primitive matrix."""
    from verify.focus.matrices import APP_C, EXAMPLE_34, EXAMPLE_34_P

    table = APP_C.evaluate(dict(R=EXAMPLE_34, p=EXAMPLE_34_P), ["eq33"])
    assert list(table.values()) == [False]
