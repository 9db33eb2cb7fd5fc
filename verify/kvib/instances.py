"""Random instances shared by the K-Vib claim modules (drawn only from the caller's rng)."""

from __future__ import annotations

import numpy as np


def random_weights(rng: np.random.Generator, max_clients: int = 200):
    """A LogNormal(0, s) weight vector, s in [0.1, 2.5], N in [2, max_clients], with ties."""
    n = int(rng.integers(2, max_clients + 1))
    a = rng.lognormal(0.0, rng.uniform(0.1, 2.5), n)
    if rng.random() < 0.2:
        a = np.round(a, 1) + 0.1
    return a


def random_budget(rng: np.random.Generator, n: int) -> float:
    """Integer K in [1, N] half of the time, else a real K in [1, N]."""
    return float(rng.integers(1, n + 1)) if rng.random() < 0.5 else float(rng.uniform(1, n))
