r"""Common types of the adaptive client samplers: a draw, its feedback, and the two procedures.

Every sampler exposes

* ``probabilities()``: its current sampling distribution (ISP inclusion probabilities summing to
  :math:`K`, or the single-draw distribution :math:`q` summing to 1 for multinomial samplers);
* ``inclusion_weights()``: the vector :math:`p` whose cost :math:`\ell_t(p)=\sum_i\pi_t(i)^2/p_i`
  is the sampler's per-round cost in [003, Sec. 5] (:math:`p=\tilde p` for ISP, :math:`p=Kq`
  for multinomial RSP, :math:`K/N` for uniform subsets);
* ``sample(rng) -> Draw`` and ``update(feedback)``; ``reveal(values)`` gives full-information
  samplers (the oracle) every client's feedback before sampling and is a no-op otherwise;
* ``sample_many(rng, n_draws)``: the client counts of ``n_draws`` draws at the current state,
  the same draws as that many calls of ``sample(rng)`` without an update in between (the
  draw laws are checked on them: ``flbounds.draw_laws``).

The estimator of a draw is :math:`d=\sum_j w_j z_{c_j}` with ``clients`` :math:`c` and
``weights`` :math:`w`; it is unbiased for :math:`\sum_i z_i` for every sampler here.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.validation import as_float_array, check_budget, check_int


class Draw(NamedTuple):
    """One round's sample: distinct clients, multiplicities, estimator weights, probabilities.

    Attributes
    ----------
    clients : numpy.ndarray of int
        The distinct clients drawn, ascending.
    counts : numpy.ndarray of int
        How often each was drawn (1 for ISP and subsets).
    weights : numpy.ndarray
        The estimator's coefficient of each: ``d = sum(weights * z[clients])``.
    probs : numpy.ndarray
        Each client's probability when drawn (:math:`\tilde p_i` for ISP, :math:`q_i` for
        multinomial draws).
    """

    clients: np.ndarray   # int, distinct, ascending
    counts: np.ndarray    # int, multiplicity of each client (1 for ISP / subsets)
    weights: np.ndarray   # estimator coefficient of each client: d = sum weights * z[clients]
    probs: np.ndarray     # sampling-time probability (p~_i for ISP, q_i for multinomial)


class Feedback(NamedTuple):
    r"""The feedback :math:`\pi_t(i) = \lambda_i \|g_i^t\|` of the clients of a draw.

    Attributes
    ----------
    draw : Draw
        The round's sample.
    values : numpy.ndarray
        One nonnegative value per drawn client, in the order of ``draw.clients``.
    """

    draw: Draw
    values: np.ndarray


def check_feedback(feedback: Feedback) -> np.ndarray:
    """The feedback values: finite, nonnegative, one per drawn client."""
    return as_float_array(feedback.values, "feedback.values",
                          shape=feedback.draw.clients.shape, nonnegative=True)


def isp_included(p: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Independent sampling's decisions: client i joins iff U_i < p_i (one draw, shape (N,),
    or many, shape (n, N))."""
    return uniforms < p


def isp_draw(p: np.ndarray, uniforms: np.ndarray) -> Draw:
    """Independent sampling: client i joins iff U_i < p_i.

    Parameters
    ----------
    p : numpy.ndarray, shape (N,)
        Inclusion probabilities.
    uniforms : numpy.ndarray, shape (N,)
        One uniform on [0, 1) per client (the round's randomness, drawn by the caller).

    Returns
    -------
    Draw
        Estimator weights 1/p_i.
    """
    clients = np.flatnonzero(isp_included(p, uniforms))
    probs = p[clients]
    return Draw(clients, np.ones(clients.size, dtype=np.int64), 1.0 / probs, probs)


def multinomial_counts(q: np.ndarray, k: int, rng: np.random.Generator,
                       n_draws: int) -> np.ndarray:
    """Counts (n_draws, N) of ``n_draws`` rounds of K i.i.d. draws from q: the same numbers
    as ``n_draws`` calls of :func:`multinomial_draw`."""
    idx = rng.choice(q.size, size=(n_draws, k), p=q)
    rows = np.repeat(np.arange(n_draws), k)
    return np.bincount(rows * q.size + idx.ravel(),
                       minlength=n_draws * q.size).reshape(n_draws, q.size)


def multinomial_draw(q: np.ndarray, k: int, rng: np.random.Generator) -> Draw:
    """K i.i.d. draws from q, collapsed to distinct clients with counts; weights c/(K q).

    Parameters
    ----------
    q : numpy.ndarray, shape (N,)
        The draw distribution.
    k : int
        The number of draws K.
    rng : numpy.random.Generator
        The source of the draws.

    Returns
    -------
    Draw
    """
    every = multinomial_counts(q, k, rng, 1)[0]
    clients = np.flatnonzero(every)
    counts = every[clients]
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

    def sample_many(self, rng: np.random.Generator, n_draws: int) -> np.ndarray:
        """Client counts, shape (n_draws, N), of ``n_draws`` draws at the current state: the
        draws of ``n_draws`` calls of ``sample(rng)`` with no update in between."""
        n_draws = check_int(n_draws, "n_draws", minimum=1)
        out = np.zeros((n_draws, self.n_clients), dtype=np.int64)
        for t in range(n_draws):
            draw = self.sample(rng)
            out[t, draw.clients] = draw.counts
        return out

    def _isp_many(self, p: np.ndarray, rng: np.random.Generator, n_draws: int) -> np.ndarray:
        """:meth:`sample_many` of an ISP sampler drawing with probabilities ``p``."""
        n_draws = check_int(n_draws, "n_draws", minimum=1)
        return isp_included(p, rng.random((n_draws, self.n_clients))).astype(np.int64)
