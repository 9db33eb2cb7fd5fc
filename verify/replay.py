r"""Generators as JSON values, so that a claim split into cells replays its own draws.

A claim whose draws feed every cell (a task, an instance, one child generator per cell) keeps
its numbers when split: the grid records the generator's state (:func:`generator_state`) or a
child's seed sequence (:func:`seed_of`) as a cell parameter, and the cell rebuilds the same
generator from it (:func:`generator_at`, :func:`generator_of`). Claims that repeat one run
draw its data from one stream (:func:`shared_generator`), so that the run is computed once.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import claim_seed_sequence


def generator_state(rng: np.random.Generator) -> dict:
    """The state of ``rng``'s PCG64 bit generator as JSON values (its integers as strings)."""
    state = rng.bit_generator.state
    if state.get("bit_generator") != "PCG64":
        raise ValueError(f"rng must run on PCG64, got {state.get('bit_generator')!r}")
    return dict(state, state={k: str(v) for k, v in state["state"].items()})


def generator_at(state: dict) -> np.random.Generator:
    """A generator in the state :func:`generator_state` recorded."""
    bit_generator = np.random.PCG64()
    bit_generator.state = dict(state, state={k: int(v) for k, v in state["state"].items()})
    return np.random.Generator(bit_generator)


def seed_of(rng: np.random.Generator) -> dict:
    """The seed sequence of a generator made from one (``rng.spawn``, ``default_rng``), as
    JSON values: its entropy (a string) and spawn key."""
    seq = rng.bit_generator.seed_seq
    if not isinstance(seq, np.random.SeedSequence) or seq.n_children_spawned:
        raise ValueError("rng must come fresh from a SeedSequence (no child spawned yet)")
    return dict(entropy=str(seq.entropy), spawn_key=list(seq.spawn_key),
                pool_size=seq.pool_size)


def generator_of(seed: dict) -> np.random.Generator:
    """The generator :func:`seed_of` described, fresh (its draws and children the same)."""
    return np.random.default_rng(np.random.SeedSequence(
        int(seed["entropy"]), spawn_key=tuple(seed["spawn_key"]),
        pool_size=int(seed["pool_size"])))


def shared_generator(rng: np.random.Generator, stream: str) -> np.random.Generator:
    """A fresh generator keyed by (the root seed ``rng`` is keyed by, ``stream``): the claim
    ``stream`` names gets this generator as its own, so claims that draw a shared run's data
    from it (and its cells) draw the same numbers as that claim, and a run they repeat is
    one run (:func:`flbounds.ledger.engine.runs.reused_run`)."""
    seq = rng.bit_generator.seed_seq
    if not isinstance(seq, np.random.SeedSequence) or not isinstance(seq.entropy, int):
        raise ValueError("rng must come from a SeedSequence with an integer root seed")
    if not isinstance(stream, str) or not stream:
        raise ValueError(f"stream must be a non-empty string, got {stream!r}")
    return np.random.default_rng(claim_seed_sequence(seq.entropy, stream))
