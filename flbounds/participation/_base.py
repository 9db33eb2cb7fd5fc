"""Shared plumbing of the participation processes."""

from __future__ import annotations

import numpy as np

from flbounds.validation import (
    as_float_array,
    check_int,
    check_rng,
)

MAX_CLIENTS_WEIGHTED = 22  # subset DP: 2^N floats and ~2^N N operations
MAX_CLIENTS_SUBSETS = 16  # subset_distribution returns 2^N rows
# Bernoulli quadrature: the tail beyond s = c / sum(p) is below e^-c ~ 2e-22 (relative),
# the Gauss rule on [0, b] is chosen so that its proved error is below 1e-17 (relative).
_TAIL_C = 50.0
_QUAD_REL_TOL = 1e-17


# ---------------------------------------------------------------------------- helpers
def _probabilities(x, name: str) -> np.ndarray:
    arr = as_float_array(x, name, ndim=1, copy=True)
    if arr.size == 0 or np.any((arr < 0.0) | (arr > 1.0)):
        raise ValueError(f"{name} must be non-empty with entries in [0, 1]")
    arr.setflags(write=False)
    return arr


def all_masks(n_clients: int) -> np.ndarray:
    """Every participation set of ``n_clients`` clients, as masks.

    Parameters
    ----------
    n_clients : int
        N (2^N rows: keep it small).

    Returns
    -------
    numpy.ndarray of bool, shape (2^N, N)
        Row k is the binary expansion of k: client i is in set k iff bit i of k is set.
    """
    codes = np.arange(1 << n_clients, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n_clients)) & 1).astype(bool)


def _mask_from_indices(chosen: np.ndarray, n_clients: int) -> np.ndarray:
    mask = np.zeros((chosen.shape[0], n_clients), dtype=bool)
    np.put_along_axis(mask, chosen, True, axis=1)
    return mask


# ---------------------------------------------------------------------------- base class
class _Process:
    """Shared public interface; subclasses define ``_plan`` and the cached moments."""

    n_clients: int

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_clients={self.n_clients})"

    def plan(self, rng: np.random.Generator, n_rounds: int) -> np.ndarray:
        """Draw a participation plan: bool array (n_rounds, n_clients), row r = S_r."""
        check_rng(rng)
        plan = self._plan(rng, check_int(n_rounds, "n_rounds", minimum=0))
        return np.ascontiguousarray(plan, dtype=bool)

    def inclusion_probabilities(self) -> np.ndarray:
        r"""Exact :math:`\pi_i = P(i \in S_r)`, shape (n_clients,)."""
        return np.array(self._inclusion, dtype=np.float64)

    def aggregation_weights(self) -> np.ndarray:
        r"""Exact :math:`q_i = E[1\{i \in S\}/|S|; S \neq \emptyset]`, shape (n_clients,)."""
        return np.array(self._aggregation, dtype=np.float64)

    def empty_probability(self) -> float:
        r"""Exact :math:`P(S_r = \emptyset)`."""
        return float(self._empty)


# ---------------------------------------------------------------------------- Bernoulli
