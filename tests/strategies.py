"""Hypothesis strategies shared by the tests: bounded floats, drawn sizes and seeds.

Raw float arrays are not drawn; a seed is, and the arrays are made from it, so shrinking
acts on sizes and scales. ``CORNER_CASES`` are the cases to pin with ``@example``.
"""

from typing import NamedTuple

import numpy as np
from hypothesis import strategies as st

MAX_CLIENTS = 5
MAX_DIM = 4
MAX_SAMPLES = 6


def bounded_floats(min_value, max_value):
    """Finite floats in ``[min_value, max_value]``."""
    return st.floats(min_value, max_value, allow_nan=False, allow_infinity=False)


def log_uniform_floats(min_value, max_value):
    """Positive floats whose log10 is uniform on ``[log10 min, log10 max]``."""
    lo, hi = np.log10(min_value), np.log10(max_value)
    return bounded_floats(lo, hi).map(lambda e: float(10.0**e))


def seeds():
    return st.integers(0, 2**32 - 1)


def client_subsets(n_clients):
    """Index lists into ``range(n_clients)``: empty, repeated and full selections."""
    return st.lists(st.integers(0, n_clients - 1), min_size=0, max_size=n_clients + 1)


class Case(NamedTuple):
    """One drawn problem instance: sizes, seed, scales and a client subset."""

    n_clients: int
    dim: int
    n_samples: int
    seed: int
    data_scale: float
    point_scale: float
    clients: tuple

    def rng(self):
        return np.random.default_rng(self.seed)


@st.composite
def cases(draw, max_clients=MAX_CLIENTS, max_dim=MAX_DIM, max_samples=MAX_SAMPLES):
    n_clients = draw(st.integers(1, max_clients))
    return Case(
        n_clients=n_clients,
        dim=draw(st.integers(1, max_dim)),
        n_samples=draw(st.integers(1, max_samples)),
        seed=draw(seeds()),
        data_scale=draw(log_uniform_floats(1e-2, 1e2)),
        point_scale=draw(log_uniform_floats(1e-2, 1e2)),
        clients=tuple(draw(client_subsets(n_clients))),
    )


CORNER_CASES = (
    Case(1, 1, 1, 0, 1.0, 1.0, (0,)),  # d = 1, one client, one sample
    Case(1, 3, 2, 1, 1.0, 1.0, ()),  # one client, empty subset
    Case(4, 1, 3, 2, 1.0, 1.0, (3, 3, 0)),  # d = 1, repeated clients
)
