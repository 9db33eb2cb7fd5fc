r"""Aggregation rules of FedAvg: how the server combines the participants' local models.

Round :math:`r` ends with local models :math:`z_i` of the participants :math:`S_r` (with their
multiplicities :math:`c_i`, 1 for a participation mask, the counts of a plan drawn with
replacement, :class:`flbounds.participation.WithReplacement`). Every rule is one of three
forms with client coefficients :math:`a_i`:

- *normalized*: :math:`x_{r+1} = \sum_{S_r} c_i a_i z_i / \sum_{S_r} c_i a_i`;
- *absolute*: :math:`x_{r+1} = \sum_{S_r} c_i a_i z_i`;
- *increment*: :math:`x_{r+1} = x_r + \sum_{S_r} c_i a_i (z_i - x_r)`.

An empty round leaves :math:`x` unchanged. The rules, and the objective each one targets
(with one local step, :math:`\tau = 1`, and full participation every rule is exactly gradient
descent on that objective, so FedAvg with a small step converges to its minimiser):

- :func:`uniform` (the default): normalized, :math:`a_i = 1`; objective
  :math:`\frac1N\sum_i f_i`;
- :func:`scheme_ii` ``(n_sampled, weights)``: absolute, :math:`a_i = N p_i / K`; objective
  :math:`\sum_i p_i f_i`;
- :func:`inverse_probability` ``(probabilities, weights)``: increment,
  :math:`a_i = p_i / \pi_i`; objective :math:`\sum_i p_i f_i`;
- :func:`sample_counts` ``(n_samples)``: normalized, :math:`a_i = n_i`; objective
  :math:`\sum_i n_i f_i / \sum_i n_i`.

Under partial participation:

- :func:`uniform` averages over the set that came: with one local step its mean update is a
  gradient step on :math:`\sum_i q_i f_i / \sum_i q_i` (small steps settle near that
  minimiser), with :math:`q_i = E[1\{i \in S\}/|S|; S \ne \emptyset]`
  (the process's ``aggregation_weights()``): the plain mean when sampling is symmetric, not
  the weighted objective :math:`\sum_i p_i f_i` of a problem with unequal weights. With
  counts drawn by Li et al.'s Scheme I (K draws with replacement with probabilities
  :math:`p_i`) it is :math:`\frac1K\sum_{k} z_{i_k}`, whose mean is :math:`\sum_i p_i z_i`.
- :func:`scheme_ii` is Li, Huang, Yang, Wang, Zhang (ICLR 2020), Scheme II: K clients
  uniformly without replacement, :math:`x_{r+1} = \frac NK \sum_{S_r} p_i z_i`, unbiased
  (:math:`E[x_{r+1}] = \sum_i p_i z_i`). Its coefficients sum to one only in expectation
  (always when :math:`p_i = 1/N`, the balanced case their Theorem 3 assumes): with unequal
  weights and :math:`K < N` each round multiplies the iterate by the random factor
  :math:`\frac NK\sum_{S_r} p_i` (mean 1), and FedAvg does not settle at the minimiser (the
  tests show it drifting away). For unequal weights run the balanced rule on Li et al.'s
  rescaled clients :math:`\tilde f_i = N p_i f_i` (same minimiser of the mean).
- :func:`inverse_probability` (Horvitz-Thompson; :math:`1/(N\pi_i)` for uniform weights) is
  unbiased for the increment :math:`\sum_i p_i (z_i - x_r)` under any process with inclusion
  probabilities :math:`\pi_i`; its variance keeps a constant step from converging exactly.
- :func:`sample_counts` is the rule of Flower's FedAvg strategy (weights by the number of
  examples of each client, normalized over those that came).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.validation import as_float_array, check_int, check_probability_vector

__all__ = ["FORMS", "Aggregation", "inverse_probability", "sample_counts", "scheme_ii",
           "uniform"]

#: kernel codes of the three forms
FORMS = {"normalized": 0, "absolute": 1, "increment": 2}


class Aggregation(NamedTuple):
    """A rule: ``name``, ``form`` (a key of :data:`FORMS`) and how its coefficients come:
    ``coefficients`` (N,) given, or built from ``weights`` (None: the problem's) and
    ``scale``/``probabilities`` when the run knows the problem."""

    name: str
    form: str
    coefficients: np.ndarray | None = None
    weights: np.ndarray | None = None
    n_sampled: int | None = None
    probabilities: np.ndarray | None = None

    def client_coefficients(self, problem) -> np.ndarray | None:
        """The coefficients :math:`a_i` for ``problem`` (None for :func:`uniform`);
        ``ValueError`` naming ``aggregation`` if a length does not match the problem."""
        n = problem.n_clients
        if self.name == "uniform":
            return None
        if self.coefficients is not None:
            return _length(self.coefficients, n, "coefficients")
        p = problem.weights if self.weights is None else _length(self.weights, n, "weights")
        if self.name == "scheme_ii":
            if self.n_sampled > n:
                raise ValueError(f"aggregation: n_sampled = {self.n_sampled} exceeds the "
                                 f"{n} clients")
            return p * (n / self.n_sampled)
        return p / _length(self.probabilities, n, "probabilities")

    @property
    def code(self) -> int:
        return FORMS[self.form]


def _length(arr, n, what):
    if arr.shape[0] != n:
        raise ValueError(f"aggregation: {what} has length {arr.shape[0]}, the problem "
                         f"{n} clients")
    return arr


def uniform() -> Aggregation:
    r""":math:`x_{r+1} = \sum_{S_r} c_i z_i / \sum_{S_r} c_i` (the mean over the set that
    came; with a mask, :math:`|S_r|^{-1}\sum_{S_r} z_i`). The default."""
    return Aggregation("uniform", "normalized")


def scheme_ii(n_sampled, weights=None) -> Aggregation:
    r"""Li et al.'s Scheme II, :math:`x_{r+1} = \frac NK \sum_{S_r} p_i z_i` with
    ``n_sampled`` = K; ``weights`` p (default: the problem's weights)."""
    n_sampled = check_int(n_sampled, "n_sampled", minimum=1)
    w = None if weights is None else check_probability_vector(weights, "weights")
    return Aggregation("scheme_ii", "absolute", weights=w, n_sampled=n_sampled)


def inverse_probability(probabilities, weights=None) -> Aggregation:
    r"""Unbiased increments, :math:`x_{r+1} = x_r + \sum_{S_r} \frac{p_i}{\pi_i}(z_i - x_r)`;
    ``probabilities`` :math:`\pi_i \in (0, 1]` (a process's ``inclusion_probabilities()``),
    ``weights`` p (default: the problem's)."""
    pi = as_float_array(probabilities, "probabilities", ndim=1, copy=True)
    if pi.size == 0 or np.any((pi <= 0.0) | (pi > 1.0)):
        raise ValueError("probabilities must be non-empty with entries in (0, 1]")
    w = None if weights is None else check_probability_vector(weights, "weights")
    if w is not None and w.size != pi.size:
        raise ValueError(f"weights has length {w.size}, probabilities {pi.size}")
    return Aggregation("inverse_probability", "increment", weights=w, probabilities=pi)


def sample_counts(n_samples) -> Aggregation:
    r"""Flower's rule, :math:`x_{r+1} = \sum_{S_r} n_i z_i / \sum_{S_r} n_i`; ``n_samples``
    positive (the clients' numbers of examples)."""
    n = as_float_array(n_samples, "n_samples", ndim=1, copy=True)
    if n.size == 0 or np.any(n <= 0.0):
        raise ValueError("n_samples must be non-empty and positive")
    return Aggregation("sample_counts", "normalized", coefficients=n)


def check_aggregation(aggregation) -> Aggregation:
    """None (uniform) or an :class:`Aggregation`."""
    if aggregation is None:
        return uniform()
    if not isinstance(aggregation, Aggregation):
        raise ValueError("aggregation must be built by flbounds.algorithms.aggregation "
                         f"(uniform, scheme_ii, inverse_probability, sample_counts), got "
                         f"{aggregation!r}")
    return aggregation
