"""Printed FOCUS statements found wrong and their corrected companions: each claim changes
verdict when the quantity it checks is planted with the printed (or a wrong) value."""

import numpy as np
import pytest

from flbounds.ledger import load_all
from verify.focus import assumption1, fig1, matrices
from verify.focus.lemma4 import consensus

CLAIMS = load_all()


def _verdict(claim_id):
    return CLAIMS[claim_id].check(seed=0, profile="quick").verdict


@pytest.mark.parametrize("reading", ["q", "q_hat"])
def test_pull_mean_printed_each_reading_matches_a_planted_pull_column(monkeypatch, reading):
    """A pull builder whose mean column were q (or q conditioned on a non-empty round) would
    meet that reading of (5) exactly; the true column (p) meets neither."""
    def planted(p):
        q = matrices.Bernoulli(p).aggregation_weights()
        return q if reading == "q" else q / q.sum()

    monkeypatch.setattr(matrices, "exact_pull_column", planted)
    ev = matrices.pull_mean_printed(rng=None)
    measured, theoretical = np.asarray(ev.measured), np.asarray(ev.theoretical)
    n = matrices.P_EQ5.size
    block = slice(0, n) if reading == "q" else slice(n, 2 * n)
    assert np.allclose(measured[block], theoretical[block], rtol=0, atol=1e-15)
    assert _verdict("focus.eq5.pull_mean_printed") == "violated"
    monkeypatch.undo()
    ev = matrices.pull_mean_printed(rng=None)
    assert np.abs(np.asarray(ev.measured) - np.asarray(ev.theoretical))[block].min() > 0.05


def test_case3a_printed_holds_if_q_were_one_over_m(monkeypatch):
    class Planted(assumption1.UniformWithoutReplacement):
        def aggregation_weights(self):
            return np.full(self.n_clients, 1.0 / self.m)

    monkeypatch.setattr(assumption1, "UniformWithoutReplacement", Planted)
    assert _verdict("focus.assumption1.case3a_printed") != "violated"


def test_case3_weights_are_q_holds_if_q_were_w(monkeypatch):
    class Planted(assumption1.WeightedWithoutReplacement):
        def aggregation_weights(self):
            w = np.asarray(self.weights, dtype=float)
            return w / w.sum()

    monkeypatch.setattr(assumption1, "WeightedWithoutReplacement", Planted)
    assert _verdict("focus.assumption1.case3_weights_are_q") != "violated"


def test_proof_step_104_corrected_is_tight_at_q_one(monkeypatch):
    """32/(3q) is attained at q = 1: a 1% larger proof constant fails the corrected step."""
    assert _verdict("focus.lemma4.proof_step_104_corrected") == "holds"
    constant = consensus.proof_constant
    monkeypatch.setattr(consensus, "proof_constant", lambda q: 1.01 * constant(q))
    assert _verdict("focus.lemma4.proof_step_104_corrected") == "violated"


def test_proof_step_104_is_judged_under_lemma4s_step_condition(monkeypatch):
    """A step beyond Lemma 4's bound on the instances makes the proof step not-applicable."""
    make = consensus.lemma4_instance
    monkeypatch.setattr(consensus, "lemma4_instance",
                        lambda n, p: dict(make(n, p), step=2 * make(n, p)["step"]))
    assert _verdict("focus.lemma4.proof_step_104") == "not-applicable"


def test_consensus_limit_corrected_fails_with_a_wrong_perron_vector(monkeypatch):
    monkeypatch.setattr(matrices, "left_perron", lambda R: np.full(R.shape[0], 1 / R.shape[0]))
    assert _verdict("focus.eq33.consensus_limit_corrected") != "holds"


def test_doubly_stochastic_corrected_fails_against_the_printed_formula(monkeypatch):
    monkeypatch.setattr(fig1, "FIG1_W", fig1.printed_doubly_stochastic(fig1.S13))
    assert _verdict("focus.fig1.doubly_stochastic_corrected") == "violated"


def test_consensus_limit_printed_holds_for_doubly_stochastic_matrices(monkeypatch):
    """With a uniform Perron vector, p 1'x_0 = 1 p'x_0: the printed (33) is then right, and
    the claim must say so."""
    monkeypatch.setattr(matrices, "PRIMITIVE_R", np.full((4, 4), 0.25))
    monkeypatch.setattr(matrices, "SMALL_R", np.array([[0.5, 0.5], [0.5, 0.5]]))
    assert _verdict("focus.eq33.consensus_limit_printed") == "holds"
