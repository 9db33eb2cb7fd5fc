"""One implementation per algorithm: a bug planted in the compiled FOCUS path reaches every
FOCUS claim that runs FOCUS, the one-round lemma checks included (they once ran a private copy
of the round).

The planted bug is a bias of 1e-3 in every gradient a client evaluates (it breaks FOCUS's
exactness, so even the step-independent fixed-point claims see it), made at the one place where
the public functions hand their inputs to the compiled loop (the module attribute
``run_focus`` that :func:`flbounds.algorithms.focus` and ``sg_focus`` call). That the
batched and unbatched forms share the loop itself is tested bit for bit elsewhere
(``tests/flbounds/kernels/test_scale_kernels.py``,
``tests/flbounds/algorithms/test_scale_batched.py``).
"""

import importlib
import json

import numpy as np
import pytest

from flbounds.ledger import select

# the module, not the function ``flbounds.algorithms.focus`` of the same name
focus_module = importlib.import_module("flbounds.algorithms.focus")

REAL_KERNEL = focus_module.run_focus


@pytest.fixture()
def plant(monkeypatch):
    """``plant(bias)``: from then on every client gradient in the FOCUS loop is off by
    ``bias`` (0: no bug); every call is counted in ``plant.calls``."""
    calls = []

    def set_bias(bias):
        def planted(data, plan, noise, settings, state, record):
            calls.append(1)
            if bias:
                shape = (plan.shape[0], plan.shape[1], settings.local_steps, state.x.shape[0])
                noise = (noise if noise.shape[0] else np.zeros(shape)) + bias
            REAL_KERNEL(data, plan, noise, settings, state, record)

        monkeypatch.setattr(focus_module, "run_focus", planted)

    set_bias.calls = calls
    return set_bias


def _measured(claim):
    """The claim's numbers: its measured value and its details (a claim whose measured value
    is a count, e.g. of Holm rejections, keeps the underlying estimates in its details)."""
    result = claim.check(seed=0).to_dict()
    assert result["verdict"] != "error", (claim.id, result["details"])
    return json.dumps([result["measured"], result["details"]], sort_keys=True)


def test_focus_bug_reaches_every_focus_claim_that_runs_focus(plant):
    plant(0.0)
    users, clean = [], {}
    for claim in select(["focus"]):
        before = len(plant.calls)
        measured = _measured(claim)
        if len(plant.calls) > before:
            users.append(claim.id)
            clean[claim.id] = measured
    assert {"focus.lemma3.descent", "focus.lemma4.consensus"} <= set(users)
    plant(1e-3)
    unchanged = [cid for cid in users if _measured(select([cid])[0]) == clean[cid]]
    assert unchanged == []
