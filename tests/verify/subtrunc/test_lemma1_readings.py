"""SubTrunc Lemma 1 under the two readings of Assumption 3: the norm reading's witness
(subtrunc.lemma1.norm_reading, violated) against a plain NumPy twin of the round, its
hypotheses, and the planted bugs that move it."""

from fractions import Fraction

import numpy as np
import pytest

import verify.subtrunc.lemma1 as lemma1
import verify.subtrunc.lemma1_norm as lemma1_norm
from flbounds.ledger import get

CLAIM = "subtrunc.lemma1.norm_reading"


def twin(n_clients, norm_v):
    """(lhs, rhs) of eq. (27) under the norm reading, from scratch: d = 1, f_i = (w - c_i)^2/2,
    w_k = 0, gradients v, -v/(n-1), ..., one local step of eta = 1/3 by client 0 alone."""
    eta, L, E = 1 / 3, 1.0, 1
    g = np.array([norm_v] + [-norm_v / (n_clients - 1)] * (n_clients - 1))
    c = -g

    def f(w):
        return np.mean(0.5 * (w - c) ** 2)

    lhs = f(0.0 - eta * g[0])
    gamma = abs(g[0] - g.mean())                    # ||b_0||: selected minus all-client mean
    rhs = (f(0.0) - eta * E / 4 * g.mean() ** 2
           + eta ** 2 * L * E ** 2 * (9 * eta * L * E / 4) * np.mean(g ** 2)
           + eta * (1 + eta * L * E) * E * gamma)
    return lhs, rhs


def test_the_witness_breaks_eq27_and_matches_its_numpy_twin():
    row = get(CLAIM).check(seed=0)
    assert row.verdict == row.expected == "violated"
    lhs, rhs = twin(3, 33.0)
    assert lhs / rhs > 1
    assert row.details["ratio"] == pytest.approx(lhs / rhs, rel=1e-13)
    assert Fraction(row.details["ratio_exact"]) == Fraction(726, 725)
    assert row.details["threshold_norm_v"] == 32.0
    assert row.details["ratio_squared_reading"] == pytest.approx(22 / 53, rel=1e-13)


@pytest.mark.parametrize("n_clients, norm_v", [(3, 32.0), (3, 50.0), (4, 10.0), (16, 1e3)])
def test_the_round_matches_the_twin_and_the_closed_form(n_clients, norm_v):
    out = lemma1_norm.norm_witness(n_clients, norm_v)
    lhs, rhs = twin(n_clients, norm_v)
    assert out["lhs"] == pytest.approx(lhs, rel=1e-13)
    assert out["rhs"] == pytest.approx(rhs, rel=1e-13)
    exact = lemma1_norm.norm_family_exact(n_clients, norm_v, out["gamma"])
    assert out["lhs"] == pytest.approx(float(exact[0]), rel=1e-13)
    assert out["rhs"] == pytest.approx(float(exact[1]), rel=1e-13)


def test_the_ratio_tends_to_22_21_and_two_clients_never_break_it():
    """lhs/rhs = 22 s/(21 s + 32) at n = 3; its limit 2(n + 8)/21 is below 1 at n = 2."""
    far = lemma1_norm.norm_witness(3, 1e7)
    assert far["lhs"] / far["rhs"] == pytest.approx(22 / 21, rel=1e-6)
    assert far["lhs"] / far["rhs"] < 22 / 21
    at_threshold = lemma1_norm.norm_family_exact(3, 32.0, 32.0)
    assert at_threshold[0] == at_threshold[1]
    for s in (10.0, 1e3, 1e7):
        two = lemma1_norm.norm_witness(2, s)
        assert two["lhs"] < two["rhs"]


def test_the_instance_meets_every_hypothesis_of_the_part():
    inst = lemma1_norm.norm_witness(3, 33.0)["instance"]
    values = lemma1.LEMMA1.evaluate(inst, parts=["eq27_norm"])
    names = {label.split(":")[0] for label in values}
    assert names == {"A1", "A2", "A3_norm", "noise", "step"}
    assert all(v is True for v in values.values()), values
    # the squared reading's A3 is not a hypothesis of this part, and it would fail here:
    # E||b||^2 = 33^2 > gamma = 33, so the two claims judge different statements
    assert "A3" not in {h.name for h in lemma1.LEMMA1.hypotheses_for(["eq27_norm"])}
    assert "A3_norm" not in {h.name for h in lemma1.LEMMA1.hypotheses_for(["eq27"])}
    squared = next(h for h in lemma1.LEMMA1.hypotheses if h.name == "A3")
    assert squared.evaluate(dict(bias_sq=33.0 ** 2, gamma=inst["gamma"])) is False


def test_the_other_reading_planted_as_gamma_turns_the_claim_to_holds(monkeypatch):
    """gamma = max ||b||^2 (the squared reading's value) instead of max ||b||: 22/53."""
    monkeypatch.setattr(lemma1_norm, "norm_gamma", lambda norms: float(np.max(norms)) ** 2)
    row = get(CLAIM).check(seed=0)
    assert row.verdict == "holds"
    assert row.details["ratio"] == pytest.approx(22 / 53, rel=1e-13)


def test_the_squared_norm_planted_in_the_hypothesis_makes_it_not_applicable(monkeypatch):
    real = lemma1.at_most
    monkeypatch.setattr(lemma1, "at_most", lambda value, limit: real(np.square(value), limit))
    row = get(CLAIM).check(seed=0)
    assert row.verdict == "not-applicable"
    assert "A3_norm" in row.reason


def test_a_gamma_below_the_norm_is_caught_by_the_hypothesis(monkeypatch):
    """A gamma the reading does not admit (sqrt ||b|| < ||b||) would inflate the ratio; the
    predicate refuses the instance instead of accusing the paper."""
    monkeypatch.setattr(lemma1_norm, "norm_gamma", lambda norms: float(np.sqrt(np.max(norms))))
    row = get(CLAIM).check(seed=0)
    assert row.verdict == "not-applicable"
    assert "A3_norm" in row.reason


def test_the_squared_reading_claim_names_its_reading_and_corrects_nothing():
    one_round = get("subtrunc.lemma1.one_round")
    assert "E||b_{k,tau}||^2 <= gamma" in one_round.statement
    assert CLAIM in one_round.statement
    assert one_round.corrects is None and get(CLAIM).corrects is None


@pytest.mark.parametrize("n_clients, norm_v, name", [
    (1, 33.0, "n_clients"), (2.5, 1.0, "n_clients"), (3, 0.0, "norm_v"),
    (3, float("nan"), "norm_v")])
def test_bad_input_is_refused(n_clients, norm_v, name):
    with pytest.raises(ValueError, match=name):
        lemma1_norm.norm_witness(n_clients, norm_v)
