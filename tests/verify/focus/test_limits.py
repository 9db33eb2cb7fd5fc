"""The Theorem 1(a)/(b) limit-point claims fail on a FOCUS that is off by a relative 1e-6.

Two planted bugs, each made at the one place where the public functions hand their inputs to
the compiled loop (the module attribute ``run_focus`` of ``flbounds.algorithms.focus``):
the server iterate scaled by (1 + 1e-6) after every round (the loop is then driven one round
at a time), and a bias of 1e-6 in every gradient a client evaluates (so in every stored
gradient). The printed-rate claims let both through (``test_pep_claims``); these claims
must not.
"""

import importlib

import numpy as np
import pytest

from flbounds.kernels.rounds import FocusRecord
from flbounds.ledger import get

focus_module = importlib.import_module("flbounds.algorithms.focus")
REAL_KERNEL = focus_module.run_focus
CLAIMS = ("focus.thm1a.limit_point", "focus.thm1b.limit_point")


def _scaled_iterates(rel):
    """The loop, round by round, with the server iterate multiplied by 1 + rel."""
    def planted(data, plan, noise, settings, state, record):
        for r in range(plan.shape[0]):
            sums = record.g_sums[r:r + 2] if record.g_sums.shape[0] else record.g_sums
            part = FocusRecord(record.xs[r:r + 2], record.ys[r:r + 2], sums)
            REAL_KERNEL(data, plan[r:r + 1], noise[r:r + 1] if noise.shape[0] else noise,
                        settings, state, part)
            state.x[:] = state.x * (1 + rel)
            record.xs[r + 1] = state.x
    return planted


def _biased_gradients(bias):
    """The loop with every client gradient off by ``bias``."""
    def planted(data, plan, noise, settings, state, record):
        shape = (plan.shape[0], plan.shape[1], settings.local_steps, state.x.shape[0])
        noise = (noise if noise.shape[0] else np.zeros(shape)) + bias
        REAL_KERNEL(data, plan, noise, settings, state, record)
    return planted


@pytest.mark.parametrize("cid", CLAIMS)
def test_limit_point_holds_on_the_library(cid):
    res = get(cid).check(seed=0, n_runs=2)
    assert res.verdict == "holds", res.details
    assert res.hypotheses and all(v is True for v in res.hypotheses.values())


@pytest.mark.parametrize("cid", CLAIMS)
@pytest.mark.parametrize("plant", [_scaled_iterates(1e-6), _biased_gradients(1e-6)],
                         ids=["iterate", "gradient"])
def test_limit_point_fails_on_a_focus_off_by_1e_6(monkeypatch, cid, plant):
    monkeypatch.setattr(focus_module, "run_focus", plant)
    res = get(cid).check(seed=0, n_runs=2)
    assert res.verdict == "violated", res.details
    # not a near miss: the gap is many orders above the bound plus its tolerance
    assert res.measured > 1e3 * (res.theoretical + np.max(res.tolerance["value"]))
