r"""The impossibility construction: no learner succeeds under incomplete participation.

Theorem 1 of SAFARI builds a two-point distribution with :math:`P(x_2) = 4\epsilon`,
:math:`\epsilon = (1-\omega)/8`, :math:`\omega = m/M`, and draws :math:`Mn` samples. The
adversarial participation process keeps :math:`mn` of them, preferring :math:`x_1`; the
training set carries no information about :math:`x_2` on the event
:math:`\hat s < (1-\omega)Mn`, where :math:`\hat s \sim \mathrm{Bin}(Mn, 4\epsilon)` counts the
:math:`x_2` draws.

References
----------
SAFARI: Server-assisted federated learning under incomplete client participation, Theorem 1 and
      Appendix A (``shared/papers/000_e0ee0ed9d3888010.txt``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import stats

from flbounds.validation import check_int


def _check_sizes(n_clients, n_participating, n_samples) -> None:
    n_clients = check_int(n_clients, "n_clients", minimum=1)
    n_participating = check_int(n_participating, "n_participating")
    check_int(n_samples, "n_samples", minimum=1)
    if not 0 <= n_participating < n_clients:
        raise ValueError(f"n_participating must satisfy 0 <= m < M = {n_clients} "
                         f"(incomplete participation), got {n_participating}")


def impossibility_event_probability(n_clients: int, n_participating: int,
                                    n_samples: int) -> float:
    r"""Exact :math:`P[\mathrm{Bin}(Mn, (1-\omega)/2) < (1-\omega)Mn]`, :math:`\omega = m/M`.

    This is :math:`P[S \in \mathcal S]`, the probability that the participating clients' data
    hold only copies of :math:`x_1`, so that the two targets :math:`f_1, f_2` are
    indistinguishable to any learner (SAFARI, Theorem 1, Appendix A).

    Parameters
    ----------
    n_clients : int
        :math:`M \ge 1`.
    n_participating : int
        :math:`m`, with :math:`0 \le m < M` (incomplete participation).
    n_samples : int
        :math:`n \ge 1` samples per client.

    Returns
    -------
    float
        The probability, from the exact binomial CDF (no Chernoff approximation).
    """
    _check_sizes(n_clients, n_participating, n_samples)
    total = n_clients * n_samples
    threshold = (n_clients - n_participating) * n_samples  # (1 - omega) M n, an integer
    p_x2 = (n_clients - n_participating) / (2 * n_clients)  # 4 eps = (1 - omega) / 2
    return float(stats.binom.cdf(threshold - 1, total, p_x2))


def impossibility_chernoff_bound(n_clients: int, n_participating: int, n_samples: int) -> float:
    r"""The paper's Chernoff bound :math:`\exp(-(1-\omega)Mn/6)` on the complement event.

    :math:`P[\hat s \ge 2 \cdot 4\epsilon Mn] \le \exp(-4\epsilon Mn/3)` with
    :math:`4\epsilon = (1-\omega)/2` (SAFARI, Appendix A).
    """
    _check_sizes(n_clients, n_participating, n_samples)
    return math.exp(-(n_clients - n_participating) * n_samples / 6.0)


# ---------------------------------------------------------------------------------------------
# The two-point construction, the participation processes and the learners (Thm 1, App. A).
# Points are coded 0 (x_1) and 1 (x_2); labels are +1/-1. A training set is summarised by its
# counts (k_1 copies of x_1, k_2 copies of x_2), labelled by the target, which is all any of
# the learners below can see.
# ---------------------------------------------------------------------------------------------

#: the two targets as label pairs (f(x_1), f(x_2)): they agree at x_1 and differ at x_2
TARGETS = {"f1": (1, 1), "f2": (1, -1)}
LEARNERS = ("erm", "majority", "nearest_neighbor", "randomized")


def two_point_distribution(n_clients: int, n_participating: int) -> tuple[float, float, float]:
    r"""The construction's :math:`(\epsilon, P(x_1), P(x_2))`, :math:`\epsilon = (1-\omega)/8`.

    :math:`P(x_2) = 4\epsilon = (1-\omega)/2` and :math:`P(x_1) = 1 - 4\epsilon` (SAFARI, App. A).
    """
    _check_sizes(n_clients, n_participating, 1)
    eps = (1.0 - n_participating / n_clients) / 8.0
    return eps, 1.0 - 4.0 * eps, 4.0 * eps


def _check_counts(name: str, value) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu" or np.any(arr < 0):
        raise ValueError(f"{name} must be an array of non-negative integers")
    return arr.astype(np.int64)


def adversarial_selection(x2_counts, n_clients: int, n_participating: int,
                          n_samples: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The sample-level process :math:`\mathcal F`: keep :math:`mn` of the :math:`Mn` draws,
    taking as many copies of :math:`x_1` as there are.

    Parameters
    ----------
    x2_counts : array of int
        :math:`\hat s`, the number of :math:`x_2` draws among the :math:`Mn` pooled samples
        (one entry per replicate), each in :math:`[0, Mn]`.

    Returns
    -------
    kept_x1, kept_x2 : arrays of int
        Counts of the :math:`mn` kept samples; ``kept_x2 == 0`` iff
        :math:`\hat s \le (1-\omega)Mn`.
    """
    _check_sizes(n_clients, n_participating, n_samples)
    s_hat = _check_counts("x2_counts", x2_counts)
    total, kept = n_clients * n_samples, n_participating * n_samples
    if np.any(s_hat > total):
        raise ValueError(f"x2_counts must be <= M n = {total}")
    kept_x1 = np.minimum(kept, total - s_hat)
    return kept_x1, kept - kept_x1


def client_level_x2_probabilities(n_clients: int, n_participating: int) -> np.ndarray:
    r"""Per-client :math:`P_i(x_2)` of the client-level variant (spec section 3).

    Clients :math:`0..m-1` participate and hold :math:`\delta_{x_1}`; the :math:`M-m` excluded
    clients hold :math:`P_i(x_1) = P_i(x_2) = 1/2`. With :math:`\lambda_i = 1/M` the pooled
    :math:`P(x_2) = (1-\omega)/2 = 4\epsilon`, as in the sample-level construction.
    """
    _check_sizes(n_clients, n_participating, 1)
    probs = np.full(n_clients, 0.5)
    probs[:n_participating] = 0.0
    return probs


def learner_predictions(learner: str, kept_x1, kept_x2, target: str,
                        coins=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Predictions :math:`(h(x_1), h(x_2))` of a learner trained on the labelled counts.

    Learners (all see only the training set, labelled by ``target``):

    - ``erm``: ERM over :math:`\{f_1, f_2\}`, ties broken toward :math:`f_1`;
    - ``majority``: the label most seen at the queried point, :math:`+1` at unseen points;
    - ``nearest_neighbor``: 1-NN with :math:`x_1 = 0, x_2 = 1` on the line, :math:`+1` on an
      empty training set;
    - ``randomized``: the label seen at the point, a fair coin (``coins``, shape
      ``(2, n)`` in :math:`\{-1, +1\}`, drawn by the caller) at unseen points.
    """
    if learner not in LEARNERS:
        raise ValueError(f"learner must be one of {LEARNERS}, got {learner!r}")
    if target not in TARGETS:
        raise ValueError(f"target must be one of {tuple(TARGETS)}, got {target!r}")
    k1, k2 = _check_counts("kept_x1", kept_x1), _check_counts("kept_x2", kept_x2)
    if k1.shape != k2.shape:
        raise ValueError("kept_x1 and kept_x2 must have the same shape")
    y1, y2 = TARGETS[target]
    seen1, seen2 = k1 > 0, k2 > 0
    if learner == "erm":
        # f_1 and f_2 agree on x_1, so only x_2 samples separate them; ties go to f_1.
        h2 = np.where(seen2, y2, TARGETS["f1"][1])
        return np.full(k1.shape, y1), h2
    if learner == "majority":
        return np.where(seen1, y1, 1), np.where(seen2, y2, 1)
    if learner == "nearest_neighbor":
        h1 = np.where(seen1, y1, np.where(seen2, y2, 1))
        h2 = np.where(seen2, y2, np.where(seen1, y1, 1))
        return h1, h2
    coins = np.asarray(coins)
    if coins.shape != (2, *k1.shape) or not np.all(np.isin(coins, (-1, 1))):
        raise ValueError(f"coins must have shape {(2, *k1.shape)} with entries in {{-1, +1}}")
    return np.where(seen1, y1, coins[0]), np.where(seen2, y2, coins[1])


def true_risk(h_x1, h_x2, target: str, p_x2: float) -> np.ndarray:
    r""":math:`R_P(h, f) = P(x_1) 1[h(x_1) \ne f(x_1)] + P(x_2) 1[h(x_2) \ne f(x_2)]`."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {tuple(TARGETS)}, got {target!r}")
    if not 0.0 <= p_x2 <= 1.0:
        raise ValueError(f"p_x2 must lie in [0, 1], got {p_x2}")
    y1, y2 = TARGETS[target]
    return ((1.0 - p_x2) * (np.asarray(h_x1) != y1)
            + p_x2 * (np.asarray(h_x2) != y2)).astype(float)


class FailurePlan(NamedTuple):
    """Random inputs of one Monte Carlo run of the construction (drawn by :func:`draw_plan`)."""

    client_x1: np.ndarray   # (n_reps,) x_1 count among the training data the process keeps
    client_x2: np.ndarray   # (n_reps,) x_2 count among the kept training data
    server_x1: np.ndarray   # (n_reps,) x_1 count among n_T server samples ~ P
    server_x2: np.ndarray   # (n_reps,) x_2 count among the server samples
    coins: np.ndarray       # (2, n_reps) fair +-1 coins for the randomized learner


def draw_plan(rng: np.random.Generator, n_clients: int, n_participating: int, n_samples: int,
              *, n_reps: int, n_server: int = 0, variant: str = "sample") -> FailurePlan:
    r"""Draw the data of ``n_reps`` independent runs of the construction.

    ``variant="sample"``: :math:`Mn` i.i.d. draws from :math:`P`, then the adversarial
    selection; ``variant="client"``: the client-level variant (participants hold
    :math:`\delta_{x_1}`). ``n_server`` extra samples from :math:`P` go to the server (SA-FL).
    """
    _check_sizes(n_clients, n_participating, n_samples)
    n_reps = check_int(n_reps, "n_reps", minimum=1)
    n_server = check_int(n_server, "n_server", minimum=0)
    _, _, p_x2 = two_point_distribution(n_clients, n_participating)
    if variant == "sample":
        s_hat = rng.binomial(n_clients * n_samples, p_x2, size=n_reps)
        k1, k2 = adversarial_selection(s_hat, n_clients, n_participating, n_samples)
    elif variant == "client":
        probs = client_level_x2_probabilities(n_clients, n_participating)
        per_client = rng.binomial(n_samples, probs, size=(n_reps, n_clients))
        k2 = per_client[:, :n_participating].sum(axis=1)   # the process keeps the participants
        k1 = n_participating * n_samples - k2
    else:
        raise ValueError(f"variant must be 'sample' or 'client', got {variant!r}")
    t2 = rng.binomial(n_server, p_x2, size=n_reps)
    coins = rng.choice(np.array([-1, 1]), size=(2, n_reps))
    return FailurePlan(k1.astype(np.int64), k2.astype(np.int64), n_server - t2, t2, coins)


def failure_indicators(plan: FailurePlan, learner: str, target: str, n_clients: int,
                       n_participating: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Per replicate: :math:`1[R_P(\mathcal L(\mathcal F(S)), f) > (1-\omega)/8]` and the risk.

    The learner sees the kept client data plus the server samples (none in plain FL).
    """
    eps, _, p_x2 = two_point_distribution(n_clients, n_participating)
    h1, h2 = learner_predictions(learner, plan.client_x1 + plan.server_x1,
                                 plan.client_x2 + plan.server_x2, target, coins=plan.coins)
    risk = true_risk(h1, h2, target, p_x2)
    return risk > eps, risk
