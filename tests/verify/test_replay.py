"""Generators as JSON values (verify/replay.py): a cell replays the claim's draws exactly."""

import json

import numpy as np
import pytest

from verify.replay import generator_at, generator_of, generator_state, seed_of


def _json(value):
    return json.loads(json.dumps(value))


def test_a_state_replays_the_same_draws():
    rng = np.random.default_rng(2024)
    rng.standard_normal(7)
    state = _json(generator_state(rng))
    assert np.array_equal(generator_at(state).standard_normal(5), rng.standard_normal(5))


def test_a_childs_seed_replays_its_draws_and_children():
    parent = np.random.default_rng(np.random.SeedSequence(11))
    children = parent.spawn(3)
    again = generator_of(_json(seed_of(children[2])))
    assert np.array_equal(again.random(4), children[2].random(4))
    a, b = generator_of(_json(seed_of(children[1]))).spawn(2), children[1].spawn(2)
    assert np.array_equal(a[1].random(3), b[1].random(3))


def test_other_generators_are_refused():
    with pytest.raises(ValueError, match="rng"):
        generator_state(np.random.Generator(np.random.Philox(1)))
    rng = np.random.default_rng(3)
    rng.spawn(1)
    with pytest.raises(ValueError, match="rng"):
        seed_of(rng)
