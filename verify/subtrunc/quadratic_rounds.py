r"""One round of Algorithm 1 on client quadratics, in exact second moments (for the attacks on
Lemmas 1 and 2 of SubTrunc).

Client :math:`i` has :math:`f_i(w) = \frac12 (w - c_i)^\top A_i (w - c_i)` and runs E local
SGD steps from :math:`w_k` with independent Gaussian noise :math:`\xi^{(i)}_t \sim N(0, Q_i)`,
:math:`\operatorname{tr} Q_i = \sigma^2`. Every local iterate is Gaussian and the clients are
independent, so the mean and covariance recursions

.. math:: m_{t+1} = m_t - \eta A_i (m_t - c_i), \qquad
   P_{t+1} = (I - \eta A_i) P_t (I - \eta A_i)^\top + \eta^2 Q_i

give every expectation the lemmas speak of in closed form. The selection law (any law on
subsets of size :math:`\kappa`, independent of the local noise) enters the round only through
its inclusion probabilities :math:`\pi_i` and pairwise inclusions :math:`\Pi_{ij}`
(:func:`law_moments`), computed from the law enumerated subset by subset.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import combinations
from math import comb
from typing import NamedTuple

import numpy as np


@dataclass(frozen=True)
class ClientQuadratics:
    r""":math:`f_i(w) = \frac12 (w - c_i)^\top A_i (w - c_i)`; ``hessians`` (n, d, d) symmetric,
    ``targets`` (n, d) the points :math:`c_i`. The exact smoothness constant is the largest
    :math:`|\lambda(A_i)|`; a client's minimum is 0 when :math:`A_i \succeq 0`, else
    :math:`-\infty`."""

    hessians: np.ndarray
    targets: np.ndarray

    @property
    def L(self) -> float:
        return float(np.abs(np.linalg.eigvalsh(self.hessians)).max())

    def gradients(self, W):
        return np.einsum("nij,...nj->...ni", self.hessians, np.asarray(W) - self.targets)

    def values(self, W):
        diff = np.asarray(W) - self.targets
        return 0.5 * np.einsum("...ni,nij,...nj->...n", diff, self.hessians, diff)

    def minima(self) -> np.ndarray:
        lowest = np.linalg.eigvalsh(self.hessians)[:, 0]
        return np.where(lowest >= -1e-12 * max(1.0, self.L), 0.0, -np.inf)


def rotations(angles) -> np.ndarray:
    """(n, 2, 2) rotation matrices."""
    c, s = np.cos(angles), np.sin(angles)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)


def planar_clients(eig, angles, noise_frac, sigma2):
    r"""Hessians :math:`R_i \operatorname{diag}(e_i) R_i^\top` scaled to largest :math:`|e| = 1`
    (L = 1; all-zero curvature becomes :math:`\operatorname{diag}(1, 0)` for client 0), and
    noise covariances :math:`\sigma^2 R_i \operatorname{diag}(s_i, 1 - s_i) R_i^\top` (the
    noise split between the client's two curvature axes)."""
    eig = np.asarray(eig, dtype=float)
    top = np.abs(eig).max()
    eig = eig / top if top > 0 else np.where(np.arange(eig.size).reshape(eig.shape) == 0,
                                             1.0, 0.0)
    R = rotations(np.asarray(angles, dtype=float))
    hessians = np.einsum("nij,nj,nkj->nik", R, eig, R)
    frac = np.asarray(noise_frac, dtype=float)
    split = sigma2 * np.stack([frac, 1 - frac], -1)
    return hessians, np.einsum("nij,nj,nkj->nik", R, split, R)


class LocalMoments(NamedTuple):
    """Exact moments of every client's local iterates, t = 0..E (leading axis)."""

    means: np.ndarray          # (E + 1, n, d)  E w_t^(i)
    covs: np.ndarray           # (E + 1, n, d, d)
    grad_means: np.ndarray     # (E + 1, n, d)  E grad f_i(w_t^(i))
    grad_vars: np.ndarray      # (E + 1, n)     tr Cov grad f_i(w_t^(i)) = tr(A P_t A)


def local_moments(problem: ClientQuadratics, w, *, step, local_steps, noise_covs):
    """:class:`LocalMoments` of E local SGD steps of every client from ``w``."""
    A, c = problem.hessians, problem.targets
    n, d = c.shape
    contraction = np.eye(d) - step * A
    transposed = np.swapaxes(contraction, -1, -2)
    means = np.empty((local_steps + 1, n, d))
    covs = np.zeros((local_steps + 1, n, d, d))
    means[0] = w
    for t in range(local_steps):
        means[t + 1] = means[t] - step * (A @ (means[t] - c)[..., None])[..., 0]
        covs[t + 1] = contraction @ covs[t] @ transposed + step ** 2 * noise_covs
    grad_means = (A @ (means - c)[..., None])[..., 0]
    grad_vars = np.trace(A @ covs @ A, axis1=-2, axis2=-1)
    return LocalMoments(means, covs, grad_means, grad_vars)


# ---- Lemma 2's quantities (all clients, virtual iterates) ----

def average_gradient_moments(mom: LocalMoments):
    r"""(:math:`E u_t`, :math:`\operatorname{tr}\operatorname{Cov} u_t`) of
    :math:`u_t = \frac1n\sum_i \nabla f_i(w^{(i)}_t)`, t = 0..E."""
    n = mom.grad_means.shape[1]
    return mom.grad_means.mean(axis=1), mom.grad_vars.sum(axis=1) / n ** 2


def consensus(mom: LocalMoments) -> np.ndarray:
    r""":math:`\sum_i E\|w^{(i)}_t - \bar w_t\|^2`, t = 0..E (independent clients:
    :math:`\sum_i \|m_i - \bar m\|^2 + (1 - 1/n)\sum_i \operatorname{tr} P_i`)."""
    n = mom.means.shape[1]
    spread = mom.means - mom.means.mean(axis=1, keepdims=True)
    traces = np.trace(mom.covs, axis1=-2, axis2=-1).sum(axis=1)
    return np.sum(spread ** 2, axis=(1, 2)) + (1 - 1 / n) * traces


# ---- selection laws and Lemma 1's round ----

def law_moments(probs, masks):
    r"""(:math:`\pi`, :math:`\Pi`) of the law that draws subset ``masks[j]`` with probability
    ``probs[j]`` (enumerated, exact)."""
    probs, masks = np.asarray(probs, dtype=float), np.asarray(masks, dtype=float)
    if masks.ndim != 2 or probs.shape != masks.shape[:1] or not np.isclose(probs.sum(), 1):
        raise ValueError("probs must be a law on the rows of masks")
    return probs @ masks, masks.T @ (probs[:, None] * masks)


@cache
def uniform_law(n: int, k: int):
    """The law of k clients of n drawn uniformly without replacement, enumerated:
    ``(pi, Pi)`` over all C(n, k) subsets."""
    chosen = np.array(list(combinations(range(n), k)))
    masks = np.zeros((len(chosen), n))
    np.put_along_axis(masks, chosen, 1.0, axis=1)
    pi, Pi = law_moments(np.full(len(masks), 1 / len(masks)), masks)
    pi.flags.writeable = Pi.flags.writeable = False
    return pi, Pi


def point_law(selected, n: int):
    """(pi, Pi) of a fixed subset."""
    mask = np.zeros(n)
    mask[np.asarray(selected, dtype=int)] = 1.0
    return mask, np.outer(mask, mask)


def stochastic_greedy_law(f, k: int, sample_size: int):
    r"""The law of stochastic greedy's k picks (eq. (17): at each step R is a uniform
    ``sample_size``-subset of the remaining clients and the best gain in R is added, ties to
    the smallest index, as :func:`flbounds.selection.stochastic_greedy` with uniform keys),
    enumerated over partial selections: the remaining clients ranked by gain, the one at rank
    j (from 0) is added with probability :math:`\binom{m-j-1}{r-1}/\binom{m}{r}` (it is in R,
    the j better ones are not). Returns ``(probs, masks)``."""
    level = {(): 1.0}
    for _ in range(k):
        following: dict = {}
        for chosen, p in level.items():
            state = f.start()
            for e in chosen:
                f.push(state, e)
            cand = np.setdiff1d(np.arange(f.n), chosen)
            m, r = cand.size, min(sample_size, cand.size)
            order = cand[np.lexsort((cand, -f.gains(state, cand)))]
            for j, e in enumerate(order[:m - r + 1]):
                key = tuple(sorted((*chosen, int(e))))
                following[key] = following.get(key, 0.0) + p * comb(m - j - 1, r - 1) / comb(m, r)
        level = following
    masks = np.zeros((len(level), f.n))
    for row, chosen in enumerate(level):
        masks[row, list(chosen)] = 1.0
    return np.array(list(level.values())), masks


def partial_selections(n: int, k: int) -> int:
    r"""The most partial selections :func:`stochastic_greedy_law` can visit:
    :math:`\sum_{j<k}\binom{n}{j}`."""
    return sum(comb(n, j) for j in range(k))


def selected_round(problem: ClientQuadratics, mom: LocalMoments, pi, Pi, k: int, noise_var):
    r"""(:math:`E f(w_{k+1})`, :math:`E\|b_\tau\|^2` for :math:`\tau < E`) of the round whose server
    averages the final iterates of k clients drawn from the law (``pi``, ``Pi``):
    :math:`w_{k+1} = \frac1k\sum_{i\in S} w^{(i)}_E` and
    :math:`b_\tau = \sum_i (1_{i\in S}/k - 1/n)\hat u^{(i)}_\tau` (eq. (18)), with
    ``noise_var`` = :math:`\operatorname{tr} Q_i` per client."""
    A, c = problem.hessians, problem.targets
    n = c.shape[0]
    A_bar = A.mean(axis=0)
    v_bar = np.einsum("nij,nj->i", A, c) / n
    const = 0.5 * np.einsum("ni,nij,nj->", c, A, c) / n
    m, P = mom.means[-1], mom.covs[-1]
    second = Pi / k ** 2                                       # E[alpha_i alpha_j]
    f_next = (0.5 * np.einsum("ij,ia,ab,jb->", second, m, A_bar, m)
              - (pi / k) @ (m @ v_bar) + const
              + 0.5 * np.diag(second) @ np.einsum("ab,nba->n", A_bar, P))
    beta2 = second - (pi[:, None] + pi[None, :]) / (n * k) + 1 / n ** 2   # E[beta_i beta_j]
    g = mom.grad_means[:-1]                                    # (E, n, d)
    bias_sq = (np.einsum("ij,tia,tja->t", beta2, g, g)
               + (mom.grad_vars[:-1] + noise_var) @ np.diag(beta2))
    return float(f_next), bias_sq
