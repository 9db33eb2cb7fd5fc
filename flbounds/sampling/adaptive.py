r"""Common types of the adaptive client samplers: a draw, its feedback, and the two procedures.

Every sampler exposes

* ``probabilities()``: its current sampling distribution (ISP inclusion probabilities summing to
  :math:`K`, or the single-draw distribution :math:`q` summing to 1 for multinomial samplers);
* ``inclusion_weights()``: the vector :math:`p` whose cost :math:`\ell_t(p)=\sum_i\pi_t(i)^2/p_i`
  is the sampler's per-round cost in [003, Sec. 5] (:math:`p=\tilde p` for ISP, :math:`p=Kq`
  for multinomial RSP, :math:`K/N` for uniform subsets);
* ``sample(rng) -> Draw`` and ``update(feedback)``; ``reveal(values)`` gives full-information
  samplers (the oracle) every client's feedback before sampling and is a no-op otherwise.

The estimator of a draw is :math:`d=\sum_j w_j z_{c_j}` with ``clients`` :math:`c` and
``weights`` :math:`w`; it is unbiased for :math:`\sum_i z_i` for every sampler here.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.validation import as_float_array, check_budget, check_int


class Draw(NamedTuple):
    """One round's sample: distinct clients, multiplicities, estimator weights, probabilities."""

    clients: np.ndarray   # int, distinct, ascending
    counts: np.ndarray    # int, multiplicity of each client (1 for ISP / subsets)
    weights: np.ndarray   # estimator coefficient of each client: d = sum weights * z[clients]
    probs: np.ndarray     # sampling-time probability (p~_i for ISP, q_i for multinomial)


class Feedback(NamedTuple):
    """Feedback pi_t(i) = lambda_i ||g_i^t|| of the clients of ``draw`` (same order)."""

    draw: Draw
    values: np.ndarray


def check_feedback(feedback: Feedback) -> np.ndarray:
    """The feedback values: finite, nonnegative, one per drawn client."""
    return as_float_array(feedback.values, "feedback.values",
                          shape=feedback.draw.clients.shape, nonnegative=True)


def isp_draw(p: np.ndarray, uniforms: np.ndarray) -> Draw:
    """Independent sampling: client i joins iff U_i < p_i."""
    clients = np.flatnonzero(uniforms < p)
    probs = p[clients]
    return Draw(clients, np.ones(clients.size, dtype=np.int64), 1.0 / probs, probs)


def multinomial_draw(q: np.ndarray, k: int, rng: np.random.Generator) -> Draw:
    """K i.i.d. draws from q, collapsed to distinct clients with counts; weights c/(K q)."""
    idx = rng.choice(q.size, size=k, p=q)
    clients, counts = np.unique(idx, return_counts=True)
    probs = q[clients]
    return Draw(clients, counts, counts / (k * probs), probs)


def check_sizes(n_clients, budget) -> tuple[int, float]:
    """``n_clients >= 1`` as an int and the expected sample size ``0 < budget <= n_clients``."""
    n_clients = check_int(n_clients, "n_clients", minimum=1)
    return n_clients, check_budget(budget, n_clients, "budget")


class SamplerBase:
    """Defaults shared by all samplers."""

    procedure = "isp"

    def reveal(self, values) -> None:  # noqa: B027 - optional hook
        """Full-information hook (only the oracle uses it)."""

    def inclusion_weights(self) -> np.ndarray:
        return self.probabilities()
