"""The FOCUS reference notebook's code claims: the mirror is the notebook's arithmetic, its
MIFA defect is one line, and each claim changes verdict under a planted defect."""

import numpy as np
import pytest

from flbounds.algorithms import mifa
from flbounds.ledger import load_all
from flbounds.participation import Cyclic
from verify.focus import notebook

CLAIMS = load_all()


def _verdict(claim_id):
    return CLAIMS[claim_id].check(seed=0, profile="quick").verdict


def _small():
    rows = notebook.SMALL_ROWS
    return rows, tuple(r.copy() for r in rows), Cyclic(2, 1).plan(None, notebook.SMALL_ROUNDS)


def test_full_participation_hides_the_defect():
    """Every client in every round: the old local model is never used before it is
    overwritten the same way, so the buggy and fixed mirrors both equal MIFA."""
    rows, targets, _ = _small()
    plan = np.ones((30, 2), dtype=bool)
    problem = notebook.least_squares(rows, targets)
    ref = mifa(problem, plan, step=0.1, local_steps=1, x0=np.zeros(1)).x
    for fixed in (False, True):
        got = notebook.notebook_mifa(rows, targets, plan, step=0.1, local_steps=1,
                                     pull_fixed=fixed)
        assert np.allclose(got, ref, rtol=0, atol=1e-14)


@pytest.mark.parametrize("fixed", [False, True])
def test_smallest_instance(fixed):
    rows, targets, plan = _small()
    got = notebook.notebook_mifa(rows, targets, plan, step=notebook.SMALL_STEP, local_steps=1,
                                 pull_fixed=fixed)
    error = abs(got[-1, 0] - 1.0)
    assert (error < 1e-3) if fixed else (error > 1e4)


def test_stale_model_claim_holds_once_the_line_is_fixed(monkeypatch):
    fixed = notebook.notebook_mifa
    monkeypatch.setattr(notebook, "notebook_mifa",
                        lambda *a, **k: fixed(*a, **dict(k, pull_fixed=True)))
    assert _verdict("focus.code.notebook_mifa_stale_model") == "holds"


def test_fixed_claim_fails_on_a_biased_reference(monkeypatch):
    def biased(problem, plan, **kw):
        trace = mifa(problem, plan, **kw)
        return trace._replace(x=trace.x * (1 + 1e-6))

    monkeypatch.setattr(notebook, "mifa", biased)
    assert _verdict("focus.code.notebook_mifa_fixed") == "violated"


def test_q_bars_claim_holds_if_inclusion_were_m_times_the_weights(monkeypatch):
    class Planted(notebook.WeightedWithoutReplacement):
        def inclusion_probabilities(self):
            return self.m * np.asarray(self.weights, dtype=float)

    monkeypatch.setattr(notebook, "WeightedWithoutReplacement", Planted)
    assert _verdict("focus.code.notebook_q_bars") == "holds"


def test_notebook_weights_are_the_printed_seed_5_weights():
    from verify.focus.assumption1 import NOTEBOOK_WEIGHTS

    assert np.array_equal(np.round(notebook.notebook_weights(), 4), NOTEBOOK_WEIGHTS)
