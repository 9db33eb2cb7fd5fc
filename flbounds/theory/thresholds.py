r"""One-dimensional threshold classifiers: ERM, exact excess errors, transfer constants.

The running example of SAFARI (Assumption 2, Theorems 2-3, Lemma 2).

Hypotheses are :math:`h_t(x) = 1[x \ge t]` (the paper's "h_t = t"). Distributions on the line
are finite mixtures of uniforms, given as ``(weights, lows, highs)``. With a realizable target
threshold :math:`t^*`, the best hypothesis under any distribution is :math:`h_{t^*}` and the
excess error of :math:`h_t` is the mass of the disagreement interval between :math:`t` and
:math:`t^*`.

References
----------
SAFARI: Server-assisted FL under incomplete client participation: Assumption 2 and its 1-D
      example, Theorems 2-3, Lemma 2 (``shared/papers/000_e0ee0ed9d3888010.txt``).
"""

from __future__ import annotations

import numpy as np

from flbounds.validation import as_vector, check_probability_vector


class UniformMixture:
    r"""A finite mixture :math:`\sum_j w_j U[\ell_j, u_j]` on the line."""

    def __init__(self, weights, lows, highs):
        w = check_probability_vector(np.atleast_1d(weights), "weights")
        lo = as_vector(np.atleast_1d(lows), "lows", n=w.size)
        hi = as_vector(np.atleast_1d(highs), "highs", n=w.size)
        if np.any(hi <= lo):
            raise ValueError("highs must exceed lows in every component")
        self.weights, self.lows, self.highs = w, lo, hi

    def cdf(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)[..., None]
        frac = np.clip((x - self.lows) / (self.highs - self.lows), 0.0, 1.0)
        return frac @ self.weights

    def mass(self, left, right) -> np.ndarray:
        """Mass of the interval between ``left`` and ``right`` (in either order)."""
        left, right = np.asarray(left, dtype=float), np.asarray(right, dtype=float)
        return np.abs(self.cdf(right) - self.cdf(left))

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        comp = rng.choice(self.weights.size, size=size, p=self.weights)
        return self.lows[comp] + (self.highs[comp] - self.lows[comp]) * rng.random(size)


def uniform(low: float, high: float) -> UniformMixture:
    return UniformMixture([1.0], [low], [high])


def excess_error(dist: UniformMixture, thresholds, target: float) -> np.ndarray:
    r""":math:`\epsilon_D(h_t) = D([\min(t, t^*), \max(t, t^*)])` for a realizable target."""
    return dist.mass(thresholds, np.full(np.shape(thresholds), float(target)))


def paper_alpha(a: float, b: float, a_prime: float, b_prime: float) -> float:
    r"""The 1-D example's :math:`\alpha = 1 - (b'-a')/(b-a)` (with :math:`\beta = 1`)."""
    if not a <= a_prime < b_prime <= b:
        raise ValueError("need a <= a' < b' <= b")
    return 1.0 - (b_prime - a_prime) / (b - a)


def mixture_alpha(a: float, b: float, a_prime: float, b_prime: float, server_weight: float):
    r"""Corrected :math:`\alpha` (with :math:`\beta=1`) for the SA-FL mixture :math:`Q`.

    The density ratio :math:`r = dQ/dP` lies in :math:`[\lambda_2, \lambda_2 + \lambda_1
    (b-a)/(b'-a')]`, so for every interval :math:`P/Q \in [1/r_{\max}, 1/r_{\min}]` and
    :math:`|\epsilon_P - \epsilon_Q| \le \max(1 - 1/r_{\max}, 1/r_{\min} - 1)\,\epsilon_Q`.
    """
    if not 0.0 < server_weight <= 1.0:
        raise ValueError(f"server_weight must lie in (0, 1], got {server_weight}")
    paper_alpha(a, b, a_prime, b_prime)  # validates the ordering
    r_min = server_weight
    r_max = server_weight + (1.0 - server_weight) * (b - a) / (b_prime - a_prime)
    return max(1.0 - 1.0 / r_max, 1.0 / r_min - 1.0)


def sa_fl_mixture(a, b, a_prime, b_prime, server_weight) -> UniformMixture:
    return UniformMixture([1.0 - server_weight, server_weight], [a_prime, a], [b_prime, b])


# ---------------------------------------------------------------------------------------------
# ERM over thresholds on [lo, hi] with a pinned tie-break.
# ---------------------------------------------------------------------------------------------

def erm_threshold(x, y) -> float:
    r"""Empirical-risk minimiser over :math:`\{h_t\}` with a deterministic tie-break.

    Candidate cuts lie between consecutive sorted samples; the empirical risk of a cut at gap
    :math:`j` (``j`` points to its left) is (#positives left) + (#negatives right). Among the
    minimising gaps the leftmost is taken; an inner gap returns its midpoint, an outer gap
    (all points on one side) returns the nearest sample.

    Parameters
    ----------
    x : (n,) float, n >= 1
    y : (n,) labels in {0, 1}
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y)
    if x.ndim != 1 or x.size == 0 or y.shape != x.shape:
        raise ValueError("x and y must be 1-D arrays of one non-zero length")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("y must hold labels in {0, 1}")
    # without ties (or NaN) the sorted order is unique, and the unstable sort finds it faster;
    # with them the stable sort pins it
    order = np.argsort(x)
    xs = x[order]
    if np.any(xs[1:] == xs[:-1]) or np.isnan(xs[-1]):
        order = np.argsort(x, kind="stable")
        xs = x[order]
    ys = y[order].astype(np.int64)
    pos_left = np.concatenate([[0], np.cumsum(ys)])
    neg_right = np.concatenate([[0], np.cumsum((1 - ys)[::-1])])[::-1]
    j = int(np.argmin(pos_left + neg_right))
    if j == 0:
        return float(xs[0])
    if j == xs.size:
        return float(xs[-1])
    return float(0.5 * (xs[j - 1] + xs[j]))


def labels(rng: np.random.Generator, x, target: float, flip: float = 0.0) -> np.ndarray:
    r"""Labels :math:`1[x \ge t^*]`, each flipped with probability ``flip`` (Massart noise)."""
    if not 0.0 <= flip < 0.5:
        raise ValueError(f"flip must lie in [0, 1/2), got {flip}")
    y = (np.asarray(x) >= target).astype(np.int64)
    if flip > 0:
        y = np.where(rng.random(y.shape) < flip, 1 - y, y)
    return y


def lemma1_complexity(n: int, delta: float, dim: int = 1) -> float:
    r"""Standard :math:`A(n, \delta) = (d/n)\log(n/d) + (1/n)\log(1/\delta)` (spec section 7)."""
    if n < 1 or not 0 < delta < 1:
        raise ValueError("need n >= 1 and delta in (0, 1)")
    return dim / n * np.log(max(n / dim, np.e)) + np.log(1 / delta) / n


def pooled_erm_errors(rng: np.random.Generator, *, n_client: int, n_server: int,
                      client_dist: UniformMixture, server_dist: UniformMixture,
                      target: float, client_target: float | None = None, flip: float = 0.0,
                      n_reps: int) -> dict:
    r"""ERM on the pooled client + server sample, ``n_reps`` independent draws.

    Client points come from ``client_dist`` (the participating distribution :math:`\mathcal D`),
    labelled by ``client_target`` (defaults to ``target``; a different value is a label
    shift); server points from ``server_dist`` (:math:`P`), labelled by ``target``. Returns the
    ERM thresholds, :math:`\epsilon_P` of each (exact, for a realizable target under
    ``server_dist``) and the empirical risks on the server sample of the ERM, of
    :math:`h_{t^*}` and of the client labelling threshold :math:`h_{t_c}` (used by Theorem 3 (i)
    and Lemma 2).
    """
    if n_client < 0 or n_server < 0 or n_client + n_server < 1:
        raise ValueError("need n_client, n_server >= 0 with at least one sample")
    client_target = target if client_target is None else client_target
    t_hat = np.empty(n_reps)
    risk_hat, risk_star, risk_client = np.zeros(n_reps), np.zeros(n_reps), np.zeros(n_reps)
    for r in range(n_reps):
        xc = client_dist.sample(rng, n_client)
        xs = server_dist.sample(rng, n_server)
        yc = labels(rng, xc, client_target, flip)
        ys = labels(rng, xs, target, flip)
        t_hat[r] = erm_threshold(np.concatenate([xc, xs]), np.concatenate([yc, ys]))
        if n_server:
            risk_hat[r] = np.mean((xs >= t_hat[r]).astype(np.int64) != ys)
            risk_star[r] = np.mean((xs >= target).astype(np.int64) != ys)
            risk_client[r] = np.mean((xs >= client_target).astype(np.int64) != ys)
    return {"t_hat": t_hat, "eps_p": excess_error(server_dist, t_hat, target),
            "server_risk_erm": risk_hat, "server_risk_target": risk_star,
            "server_risk_client_target": risk_client}
