r"""Draws against their exact laws: exact binomial tests per cell, Holm over the family, power.

A participation process or a client sampler draws sets of clients; its exact law gives, for
every *cell* (a client's inclusion, a pair's joint inclusion, a Markov transition, a client's
share of multinomial draws), the probability :math:`\pi_c` that one trial succeeds. Over
:math:`n_c` independent trials the number of successes is :math:`\mathrm{Binomial}(n_c, \pi_c)`
under the law, so each cell gets an exact two-sided binomial p-value (the doubled smaller
tail), and the family of cells is judged by Holm's rule at a level fixed before the draws
(:func:`flbounds.stats.holm`): the draws contradict the law when Holm rejects any cell.

Power: with per-cell level :math:`\alpha/m` (Holm's first step) a relative bias
:math:`\delta` of a cell, :math:`\pi_c(1 + \delta)`, is detected with probability about
``power`` when

.. math::
    \delta \ge (z_{1 - \alpha/(2m)} + z_{\mathrm{power}})
    \sqrt{(1 - \pi_c) / (n_c \pi_c)}

(normal approximation of the binomial, accurate for :math:`n_c\pi_c(1-\pi_c) \gg 1`).
:func:`trials_to_detect` inverts it, so a check chooses its number of draws from the bias it
must detect, before drawing.

References
----------
.. [1] S. Holm, "A simple sequentially rejective multiple test procedure", Scandinavian
   Journal of Statistics 6(2), 1979.
.. [2] C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits illustrated in
   the case of the binomial", Biometrika 26(4), 1934 (the exact binomial tails).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

from flbounds.stats import HolmResult, holm
from flbounds.validation import as_float_array


def binomial_pvalues(successes, trials, prob) -> np.ndarray:
    r"""Exact two-sided binomial p-values, cell by cell: :math:`\min(1, 2\min(P[X \le k],
    P[X \ge k]))` for :math:`X \sim \mathrm{Binomial}(n, \pi)`.

    A cell with :math:`\pi \in \{0, 1\}` gets p-value 1 when the count is the only possible
    one and 0 otherwise.
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    p = as_float_array(prob, "prob")
    k, n, p = np.broadcast_arrays(k, n, p)
    if np.any(k < 0) or np.any(k > n) or np.any(k != np.round(k)):
        raise ValueError("successes must be integers in [0, trials]")
    if np.any((p < 0) | (p > 1)):
        raise ValueError("prob must lie in [0, 1]")
    lower = _st.binom.cdf(k, n, p)
    upper = _st.binom.sf(k - 1, n, p)
    out = np.minimum(1.0, 2.0 * np.minimum(lower, upper))
    certain = (p == 0) | (p == 1)
    out[certain] = np.where(k[certain] == n[certain] * p[certain], 1.0, 0.0)
    return out


def _z(alpha_cell: float, power: float) -> float:
    if not (0 < alpha_cell < 1) or not (0 < power < 1):
        raise ValueError(f"alpha and power must lie in (0, 1), got {alpha_cell!r}, {power!r}")
    return float(_st.norm.isf(alpha_cell / 2) + _st.norm.ppf(power))


def detectable_bias(prob, trials, *, alpha_cell: float, power: float = 0.9) -> np.ndarray:
    """Smallest relative bias of each cell detected with probability ``power`` at the
    two-sided per-cell level ``alpha_cell`` (module docstring; ``inf`` for prob 0 or 1)."""
    p = as_float_array(prob, "prob")
    n = np.asarray(trials, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _z(alpha_cell, power) * np.sqrt((1 - p) / (n * p))
    return np.where((p > 0) & (p < 1) & (n > 0), out, np.inf)


def trials_to_detect(prob, bias: float, *, alpha_cell: float, power: float = 0.9) -> int:
    """Trials per cell so that a relative ``bias`` of every cell with probability in
    ``prob`` (strictly between 0 and 1) is detected with probability ``power``."""
    p = as_float_array(prob, "prob")
    p = p[(p > 0) & (p < 1)]
    if p.size == 0:
        raise ValueError("prob must hold a probability strictly between 0 and 1")
    if not bias > 0:
        raise ValueError(f"bias must be > 0, got {bias!r}")
    return int(math.ceil((_z(alpha_cell, power) / bias) ** 2 * float(np.max((1 - p) / p))))


@dataclass(frozen=True)
class LawTest:
    """Observed counts of a family of cells against their exact probabilities.

    ``rejected``: Holm rejects some cell at ``alpha``; ``detectable``: the smallest relative
    bias of each cell detected with probability ``power``.
    """

    cells: tuple[str, ...]
    prob: np.ndarray
    successes: np.ndarray
    trials: np.ndarray
    pvalues: np.ndarray
    holm: HolmResult
    detectable: np.ndarray
    power: float

    @property
    def alpha(self) -> float:
        return self.holm.alpha

    @property
    def rejected(self) -> bool:
        return bool(np.any(self.holm.reject))

    @property
    def min_adjusted(self) -> float:
        """The smallest Holm-adjusted p-value (the family rejects iff it is <= alpha)."""
        return float(np.min(self.holm.adjusted))

    def summary(self) -> dict:
        """The most extreme cell, the family's size and level, and the power reached."""
        i = int(np.argmin(self.pvalues))
        freq = self.successes[i] / self.trials[i]
        return {"cells": len(self.cells), "alpha": self.alpha, "power": self.power,
                "min_adjusted_pvalue": self.min_adjusted, "rejected": self.rejected,
                "most_extreme_cell": self.cells[i], "exact": float(self.prob[i]),
                "observed": float(freq),
                "relative_deviation": float(freq / self.prob[i] - 1) if self.prob[i] else None,
                "largest_detectable_relative_bias": float(np.max(self.detectable))}


def law_test(cells, successes, trials, prob, *, alpha: float,
             power: float = 0.9) -> LawTest:
    """Test observed ``successes`` out of ``trials`` against exact ``prob``, cell by cell,
    under Holm's rule at family-wise level ``alpha``."""
    cells = tuple(str(c) for c in cells)
    k = np.asarray(successes, dtype=float).ravel()
    n = np.broadcast_to(np.asarray(trials, dtype=float), k.shape).copy()
    p = np.broadcast_to(as_float_array(prob, "prob"), k.shape).copy()
    if len(cells) != k.size:
        raise ValueError(f"cells must name every cell ({k.size}), got {len(cells)}")
    pv = binomial_pvalues(k, n, p)
    result = holm(pv, alpha)
    det = detectable_bias(p, n, alpha_cell=alpha / k.size, power=power)
    return LawTest(cells, p, k, n, pv, result, det, float(power))


def inclusion_cells(masks, inclusion, pairwise=None):
    """Cells of i.i.d. inclusion masks ``(n_draws, N)``: each client's inclusion and, when
    ``pairwise`` (N, N) is given, each pair's joint inclusion. Returns (names, successes,
    probabilities); every cell has ``n_draws`` trials."""
    masks = np.asarray(masks, dtype=bool)
    if masks.ndim != 2:
        raise ValueError(f"masks must have shape (n_draws, n_clients), got {masks.shape}")
    n = masks.shape[1]
    inclusion = as_float_array(inclusion, "inclusion", shape=(n,))
    names = [f"P({i} in S)" for i in range(n)]
    succ = list(masks.sum(axis=0))
    prob = list(inclusion)
    if pairwise is not None:
        pairwise = as_float_array(pairwise, "pairwise", shape=(n, n))
        m = masks.astype(np.int64)
        joint = m.T @ m
        for i in range(n):
            for j in range(i + 1, n):
                names.append(f"P({i}, {j} in S)")
                succ.append(joint[i, j])
                prob.append(pairwise[i, j])
    return names, np.array(succ, dtype=float), np.array(prob)


def transition_cells(chains, stay_on, turn_on):
    """Cells of on/off chains, shape ``(n_rounds, N)`` or ``(n_rounds, M, N)`` (M independent
    chains per client, pooled): for every client, the transitions from "on" (successes: still
    on; probability ``stay_on[i]``) and from "off" (successes: turned on; probability
    ``turn_on[i]``). By the Markov property each count is binomial given the visits.
    Returns (names, successes, trials, probabilities), two cells per client."""
    chains = np.asarray(chains, dtype=bool)
    if chains.ndim == 2:
        chains = chains[:, None, :]
    if chains.ndim != 3 or chains.shape[0] < 2:
        raise ValueError(f"chains must have shape (n_rounds >= 2, [n_chains,] n_clients), got "
                         f"{chains.shape}")
    n = chains.shape[2]
    stay_on = as_float_array(stay_on, "stay_on", shape=(n,))
    turn_on = as_float_array(turn_on, "turn_on", shape=(n,))
    before, after = chains[:-1], chains[1:]
    on_on = np.sum(before & after, axis=(0, 1))
    on = np.sum(before, axis=(0, 1))
    off_on = np.sum(~before & after, axis=(0, 1))
    off = np.sum(~before, axis=(0, 1))
    names = [name for i in range(n) for name in (f"P(on | on), client {i}",
                                                 f"P(on | off), client {i}")]
    succ = np.column_stack([on_on, off_on]).ravel().astype(float)
    trials = np.column_stack([on, off]).ravel().astype(float)
    prob = np.column_stack([stay_on, turn_on]).ravel()
    return names, succ, trials, prob
