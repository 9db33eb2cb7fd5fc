"""SubTrunc / UnionFL [004] as results: every claim attached to a part, every part checked or
excused, hypotheses that decide applicability on planted instances, the two readings of
UnionFL's cardinality constraint, and Theorem 1's one printed bound."""

import numpy as np
import pytest

import verify.subtrunc.lemma1 as lemma1
import verify.subtrunc.sec3c as sec3c
import verify.subtrunc.sec3c.greedy_h as greedy_h
from flbounds.ledger import get, load_all
from flbounds.ledger.api.results import load_all as load_results
from verify.subtrunc.assumptions import gaussian_noise
from verify.subtrunc.prop3 import PROP3
from verify.subtrunc.thm1 import THM1, printed_terms, thm1

E_BOUND = 1 - 1 / np.e


def _paper_claims():
    return [c for c in load_all().values() if c.paper_key == "subtrunc"]


def test_every_claim_is_attached_to_a_part():
    claims = _paper_claims()
    assert len(claims) == 55
    assert [c.id for c in claims if not c.parts] == []


def test_every_part_is_checked_or_says_why():
    checked = {q for c in _paper_claims() for q in c.parts}
    declared = [r for r in load_results().values() if r.paper_key == "subtrunc"]
    assert len(declared) == 25
    missing = [f"{r.id}:{p}" for r in declared if not r.not_checked
               for p, part in r.parts.items() if not part.unchecked
               and f"{r.id}:{p}" not in checked]
    assert missing == []


def _stop_early(readings):
    """The hand instances with a greedy that stops at its first non-positive gain: not what
    Alg. 1 runs (it returns K_t clients), so the cardinality hypothesis fails."""
    return lambda: [(dict(inst, greedy_set=inst["greedy_set"][:1]), ratio)
                    for inst, ratio in readings()]


def test_unionfl_claim_is_not_applicable_when_greedy_stops_early(monkeypatch):
    claim = get("subtrunc.sec3c.unionfl_greedy_guarantee")
    assert claim.check(n_instances=3).verdict == "violated"
    monkeypatch.setattr(greedy_h, "hand_readings", _stop_early(greedy_h.hand_readings))
    row = claim.check(n_instances=3)
    assert row.verdict == "not-applicable"
    assert "cardinality" in row.reason


def test_both_readings_of_the_cardinality_constraint_fail_the_implied_ratio():
    readings = greedy_h.hand_readings()
    assert [inst["reading"] for inst, _ in readings] == ["at_most", "exactly"]
    assert readings[0][1] == pytest.approx(4.8 / 9.8)
    assert readings[1][1] == pytest.approx(0.5)
    for inst, ratio in readings:
        assert ratio < E_BOUND
        assert sec3c.cardinality.evaluate(inst) is True
        assert len(inst["greedy_set"]) == inst["k"]
    at_most, exactly = (inst for inst, _ in readings)
    assert len(at_most["opt_set"]) < at_most["k"]          # OPT of (14) is a singleton
    assert sec3c.cardinality.evaluate(dict(at_most, reading="exactly")) is False


def test_eq31_accusation_needs_the_step_condition(monkeypatch):
    claim = get("subtrunc.eq31.noise_bound")
    small = dict(n_paths=20000, clients=(1,))
    assert claim.check(**small).verdict == "violated"
    planted = lemma1.cosine_instance
    monkeypatch.setattr(lemma1, "cosine_instance",
                        lambda n, step, local_steps=2: planted(n, 2 * step, local_steps))
    row = claim.check(**small)                               # eta L E = 2/3 > 1/3
    assert row.verdict == "not-applicable"
    assert "eta_k L E <= 1/3" in row.reason


def test_prop3_printed_phi_meets_every_printed_hypothesis_and_negative_losses_do_not():
    from flbounds.selection import SubTruncObjective

    d = np.array([[0.0, 0.1], [0.1, 0.0]])
    losses = np.array([3.0, 0.0])
    inst = dict(objective=SubTruncObjective(d, losses - 1.0, lam=1.0, b=1.0),
                phi=lambda x: np.asarray(x) - 1.0, losses=losses)
    assert all(v is True for v in PROP3.evaluate(inst).values())
    bad = dict(inst, losses=np.array([3.0, -1.0]),
               objective=SubTruncObjective(d, np.array([2.0, -2.0]), lam=1.0, b=1.0))
    failed = [label for label, v in PROP3.evaluate(bad).items() if v is False]
    assert [label.split(":")[0] for label in failed] == ["losses"]


def test_theorem1_instance_values_and_printed_bound():
    values = dict(L=1.0, f0=2.0, K=100, E=2, n=10, sigma2=1.0, gamma=0.01)
    assert thm1(**values) == pytest.approx(sum(printed_terms(**values)))
    assert thm1(**values) == pytest.approx(12 * 2 / 10 + (2 / 2000 + 3 / 100 + 4 / 200)
                                           + (4 + 0.4) * 0.01)
    assert [b.func for b in THM1.bounds] == [thm1]
    inst = dict(problem=type("P", (), {"L": 1.0, "minima": lambda self: np.zeros(2)})(),
                L=1.0, K=9, local_steps=2, step=1 / (2 * 3), bias_sq=0.5, gamma=0.5,
                **gaussian_noise(1.0))
    assert all(v is True for v in THM1.evaluate(inst, ["bound"]).values())
    assert THM1.evaluate(dict(inst, K=4, step=1 / 4), ["bound"])["K: K >= 9"] is False
