r"""Aggregation rules of an FL round: the weight :math:`w_i(S)` of client :math:`i`'s message
when the participating set is :math:`S` (0 for :math:`i \notin S`), as used by
:mod:`flbounds.pep.describe`.

Each rule maps the possible sets (a bool array, one row per set) and the inclusion
probabilities :math:`\pi_i` to the weights, one row per set; :mod:`flbounds.pep.expect`
takes their exact moments over the participation law.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flbounds.validation import check_positive


def _check_weights(weights, name="weights"):
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size < 1 or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"{name} must be a non-empty vector of nonnegative numbers")
    return tuple(float(v) for v in w)


@dataclass(frozen=True)
class Uniform:
    r"""The mean over the participants: :math:`w_i = s_i / |S|` (0 on an empty round)."""

    def coefficients(self, masks, inclusion):
        size = masks.sum(axis=1, keepdims=True).astype(float)
        return np.divide(masks, size, out=np.zeros(masks.shape), where=size > 0)


@dataclass(frozen=True)
class Sum:
    r"""The plain sum over the participants: :math:`w_i = s_i`."""

    def coefficients(self, masks, inclusion):
        return masks.astype(float)


@dataclass(frozen=True)
class Unbiased:
    r"""Inverse-probability weights :math:`w_i = s_i p_i / \pi_i` (unbiased for
    :math:`\sum_i p_i m_i`); :math:`\pi_i = 0` gives weight 0.

    Attributes
    ----------
    weights : tuple of float, optional
        :math:`p`, one per client (default :math:`1/N` each).
    """

    weights: tuple | None = None

    def coefficients(self, masks, inclusion):
        n = masks.shape[1]
        p = np.full(n, 1.0 / n) if self.weights is None else np.asarray(self.weights)
        if p.size != n:
            raise ValueError(f"weights has {p.size} entries, the setting has {n} clients")
        ratio = np.divide(p, inclusion, out=np.zeros(n), where=inclusion > 0)
        return masks * ratio


@dataclass(frozen=True)
class FixedWeights:
    r"""Fixed weights over the participants: :math:`w_i = \text{scale}\; s_i p_i` (Li et
    al.'s Scheme II: ``scale = N/K`` under uniform K-subsets).

    Attributes
    ----------
    weights : tuple of float
        :math:`p`, one nonnegative number per client.
    scale : float, default 1
        A positive factor.

    References
    ----------
    X. Li, K. Huang, W. Yang, S. Wang and Z. Zhang, On the convergence of FedAvg on non-IID
    data, ICLR 2020 (Scheme II).
    """

    weights: tuple
    scale: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "weights", _check_weights(self.weights))
        object.__setattr__(self, "scale", check_positive(self.scale, "scale"))

    def coefficients(self, masks, inclusion):
        if len(self.weights) != masks.shape[1]:
            raise ValueError(f"weights has {len(self.weights)} entries, the setting has "
                             f"{masks.shape[1]} clients")
        return self.scale * masks * np.asarray(self.weights)


@dataclass(frozen=True)
class Normalized:
    r"""Weights renormalised over the participants: :math:`w_i = s_i p_i / \sum_{j \in S}
    p_j` (0 on an empty round; sample-count weighting with :math:`p_i` the sample counts).

    Attributes
    ----------
    weights : tuple of float
        :math:`p`, one nonnegative number per client.
    """

    weights: tuple

    def __post_init__(self):
        object.__setattr__(self, "weights", _check_weights(self.weights))

    def coefficients(self, masks, inclusion):
        if len(self.weights) != masks.shape[1]:
            raise ValueError(f"weights has {len(self.weights)} entries, the setting has "
                             f"{masks.shape[1]} clients")
        raw = masks * np.asarray(self.weights)
        total = raw.sum(axis=1, keepdims=True)
        return np.divide(raw, total, out=np.zeros(raw.shape), where=total > 0)


RULES = {"uniform": Uniform(), "sum": Sum(), "unbiased": Unbiased()}


def aggregation(rule):
    """An aggregation rule from its name (``"uniform"``, ``"sum"``, ``"unbiased"``) or
    itself."""
    if isinstance(rule, str):
        if rule not in RULES:
            raise ValueError(f"aggregation rule must be one of {sorted(RULES)} or a rule "
                             f"object, got {rule!r}")
        return RULES[rule]
    if not hasattr(rule, "coefficients"):
        raise ValueError(f"aggregation rule must have coefficients(masks, inclusion), "
                         f"got {rule!r}")
    return rule


__all__ = ["RULES", "FixedWeights", "Normalized", "Sum", "Unbiased", "Uniform", "aggregation"]
