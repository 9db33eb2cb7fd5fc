"""Random instances shared by the SubTrunc / UnionFL claims (no claims are registered here)."""

from __future__ import annotations

import numpy as np


def gradient_points(rng: np.random.Generator, n: int, dim: int = 5) -> np.ndarray:
    """Client 'gradients' with heterogeneous scales: a few clusters plus per-client spread."""
    n_clusters = max(1, n // 4)
    centers = rng.normal(size=(n_clusters, dim)) * rng.uniform(0.5, 3.0, size=(n_clusters, 1))
    labels = rng.integers(0, n_clusters, size=n)
    return centers[labels] + rng.normal(size=(n, dim)) * rng.uniform(0.1, 1.0, size=(n, 1))


def distances(points: np.ndarray) -> np.ndarray:
    """Pairwise Euclidean distances ``d_ij = ||g_i - g_j||`` (float64, symmetric)."""
    diff = points[:, None, :] - points[None, :, :]
    return np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))


def random_dissim(rng: np.random.Generator, n: int, dim: int = 5) -> np.ndarray:
    return distances(gradient_points(rng, n, dim))


def random_losses(rng: np.random.Generator, n: int) -> np.ndarray:
    """Nonnegative client losses f_i ~ Exp(1) (Assumption 2)."""
    return rng.exponential(size=n)


def divfl_offset(dissim: np.ndarray) -> float:
    """DivFL's code constant ``L_s0 = 2 max_j sum_i d_ij``."""
    return float(2.0 * dissim.sum(axis=0).max())


def value_tolerance(full_value: float) -> float:
    """The spec's rounding tolerance ``1e-9 max(1, |F(N)|)`` for exact set-function checks."""
    return 1e-9 * max(1.0, abs(full_value))
