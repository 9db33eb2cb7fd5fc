r"""Predicates shared by the hypotheses of several K-Vib results (K-Vib).

Each returns a truth value for named values of an instance; a result wraps it in a
:func:`flbounds.ledger.hypothesis` with the paper's own wording and scope. Comparisons of a
computed quantity with a printed limit use :func:`verify.predicates.at_most` (relative
rounding slack :data:`verify.predicates.RTOL`).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import hypothesis

from ..predicates import RTOL, at_most


def _arrays(value) -> list[np.ndarray]:
    """One array, or a list of them (an instance may carry one vector per round or draw)."""
    if isinstance(value, list | tuple) and value and np.ndim(value[0]) >= 1:
        return [np.asarray(v, dtype=float) for v in value]
    return [np.asarray(value, dtype=float)]


def budget_in_range(budget, n_clients) -> bool:
    """Remark 2.1: the budget K (expected number of sampled clients) lies in [1, N]."""
    k = np.asarray(budget, dtype=float)
    return bool(np.all(k >= 1 - RTOL) and at_most(k, n_clients))


def feedback_max(feedback, n_rounds) -> float:
    r"""The largest feedback :math:`\max_{t\le T,i}\pi_t(i)` (Assumption 5.1's G over the
    run). Each client's :math:`\pi_t(i)=\lambda_i(b_i+c_i/\sqrt t)` is monotone in t, so the
    largest value is at t = 1 (feedback from above) or t = T (from below)."""
    return float(max(np.max(feedback.values(1)), np.max(feedback.values(int(n_rounds)))))


def isp_probabilities(p, budget) -> bool:
    """Remark 2.1: 0 < p_i <= 1 for every client and sum_i p_i = K (rounding slack)."""
    ks = np.broadcast_to(np.asarray(budget, dtype=float), (len(_arrays(p)),))
    for q, k in zip(_arrays(p), ks, strict=True):
        if not (q.size and np.all(q > 0) and at_most(q, 1.0)):
            return False
        if abs(q.sum() - k) > 1e-9 * max(k, 1.0) * q.size:
            return False
    return True


def nonnegative(values) -> bool:
    """Every entry >= 0 and finite (update norms a_i = lambda_i ||g_i||, feedback)."""
    return all(bool(v.size and np.all(np.isfinite(v)) and np.all(v >= 0))
               for v in _arrays(values))


def positive(values) -> bool:
    """Every entry > 0 and finite (Lemma 2.2: 0 < a_1 <= ... <= a_N)."""
    return all(bool(v.size and np.all(np.isfinite(v)) and np.all(v > 0))
               for v in _arrays(values))


def assumption_5_1(feedback, n_rounds) -> bool:
    r"""Assumption 5.1 on rounds 1..T: feedback in [0, G] with G its largest value, and
    :math:`|\pi_t(i)-\pi_*(i)|\le C/\sqrt t` with C the first round's deviation (the feedback
    classes of :mod:`flbounds.sampling.online` converge to :math:`\pi_*=\lambda b`)."""
    t_last = int(n_rounds)
    t = np.unique(np.geomspace(1, max(t_last, 1), num=min(t_last, 200)).astype(int))
    pi = np.stack([feedback.values(int(s)) for s in t])
    if not (np.all(np.isfinite(pi)) and np.all(pi >= 0)):
        return False
    star = np.asarray(feedback.lam * feedback.base, dtype=float)
    root = np.sqrt(t)[:, None]
    # rounding of pi_t - pi_* (a difference of nearby float64 numbers), scaled by sqrt(t)
    slack = 64 * np.finfo(float).eps * (np.abs(pi) + np.abs(star)) * root
    return at_most(np.abs(pi - star) * root, np.abs(feedback.values(1) - star)[None, :] + slack)


@hypothesis("weights", "a_i = lambda_i ||g_i^t|| > 0 for every client")
def positive_weights(*, a):
    return positive(a)


@hypothesis("K", "Remark 2.1: the budget K = E|S^t| lies in [1, N]")
def budget_hypothesis(*, a, budget):
    return budget_in_range(budget, np.shape(a)[-1])


@hypothesis("P_K", "Remark 2.1: 0 < p_i <= 1 and sum_i p_i = K")
def isp_hypothesis(*, p, budget):
    return isp_probabilities(p, budget)


@hypothesis("K", "Remark 2.1: the budget K = E|S^t| lies in [1, N] (the sampler is built "
                 "with it; its p^t > 0 with sum p^t = K is what the claims measure)")
def budget_of_sampler(*, budget, n_clients):
    return budget_in_range(budget, n_clients)


@hypothesis("A5.1", "the online problem of Sec. 5: feedback under Assumption 5.1 (pi_t in "
                    "[0, G], |pi_t - pi_*| <= O(1/sqrt t)) over the T rounds")
def online_feedback(*, feedback, n_rounds):
    return assumption_5_1(feedback, n_rounds)


@hypothesis("K", "budgets K in [1, N] (Remark 2.1)")
def online_budgets(*, budget, n_clients):
    return budget_in_range(budget, n_clients)


@hypothesis("weights", "0 < a_1 <= ... <= a_N (sorted for notation)")
def positive_sorted_weights(*, a):
    return positive(a)


@hypothesis("K", "1 <= K < N (the uniform ISP variance delta_U is 0 at K = N)")
def budget_below_n(*, a, budget):
    return bool(1 <= budget < np.shape(a)[-1])


@hypothesis("uncapped", "K max_i a_i <= sum_i a_i (no client capped at p = 1)")
def uncapped(*, a, budget):
    a = np.asarray(a, dtype=float)
    return bool(budget * a.max() <= a.sum() * (1 + 1e-12))
