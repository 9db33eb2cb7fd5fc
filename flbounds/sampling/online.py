r"""Online-learning harness for adaptive samplers (K-Vib, Sec. 5): feedback sequences, regret.

Costs are :math:`\ell_t(p)=\sum_i\pi_t(i)^2/p_i` with :math:`p` the sampler's inclusion weights
(:math:`\tilde p` for ISP, :math:`Kq` for multinomial RSP). Over :math:`\mathcal P_K`:

.. math::
    \mathrm{Regret}_S(T)=\sum_t\ell_t(p^t)-\min_p\sum_t\ell_t(p),\qquad
    T_{\rm BFP}=\min_p\sum_t\ell_t(p)-\sum_t\min_p\ell_t(p),

and the best fixed probability in hindsight is exact: :math:`\min_p\sum_t\ell_t(p)` is the
water-filling optimum with weights :math:`\sqrt{\pi^2_{1:T}(i)}`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from flbounds.kernels.isp_round import isp_probabilities

from .adaptive import Feedback
from .optimal import COMPILED_MAX_N, optimal_isp_objective, optimal_isp_probabilities

PROFILES = ("lognormal", "quantile", "uniform")


@dataclass(frozen=True)
class Assumption51Feedback:
    r"""Feedback :math:`\pi_t(i)=\lambda_i(b_i+c_i/\sqrt t)`, :math:`t\ge1` (Assumption 5.1:
    :math:`|\pi_t-\pi_*|=O(1/\sqrt t)`, approaching :math:`\pi_*=\lambda b` from above)."""

    lam: np.ndarray
    base: np.ndarray
    decay: np.ndarray

    @classmethod
    def generate(cls, rng: np.random.Generator, n_clients: int, *, profile: str = "lognormal"):
        r""":math:`\lambda=1/N`; :math:`b` LogNormal(0,1) (``lognormal``), its quantiles
        (``quantile``, deterministic) or U(0.5, 1.5) (``uniform``); :math:`c=u\,b`, u ~ U(0,1)."""
        if profile == "lognormal":
            base = rng.lognormal(0.0, 1.0, n_clients)
        elif profile == "quantile":
            from scipy.stats import norm
            base = np.exp(norm.ppf((np.arange(n_clients) + 0.5) / n_clients))
        elif profile == "uniform":
            base = rng.uniform(0.5, 1.5, n_clients)
        else:
            raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
        decay = rng.random(n_clients) * base
        return cls(np.full(n_clients, 1.0 / n_clients), base, decay)

    @property
    def n_clients(self) -> int:
        return self.lam.size

    def values(self, t: int) -> np.ndarray:
        """:math:`\\pi_t` for round ``t`` (1-indexed)."""
        return self.lam * (self.base + self.decay / np.sqrt(t))

    def block(self, t0: int, t1: int) -> np.ndarray:
        """Rows :math:`\\pi_t` for t = t0..t1-1, shape (t1 - t0, N)."""
        arrays = (self.lam, self.base, self.decay)
        if all(a.dtype == np.float64 and a.ndim == 1 for a in arrays):
            # the same operations in one compiled pass
            from flbounds.kernels.waterfill import feedback_block
            out = np.empty((t1 - t0, self.lam.size))
            feedback_block(*(np.ascontiguousarray(a) for a in arrays), t0, out)
            return out
        t = np.arange(t0, t1, dtype=float)[:, None]
        out = np.divide(self.decay, np.sqrt(t))     # lam * (base + decay / sqrt(t)), the same
        out += self.base                            # operations in place (one array, not
        out *= self.lam                             # three)
        return out

    @property
    def G(self) -> float:
        """Largest feedback, attained at t = 1."""
        return float(np.max(self.values(1)))

    def squared_sums(self, n_rounds: int) -> np.ndarray:
        r""":math:`\pi^2_{1:T}(i)` in closed form (harmonic sums of orders 1/2 and 1)."""
        t = np.arange(1, n_rounds + 1, dtype=float)
        h_half, h_one = np.sum(1 / np.sqrt(t)), np.sum(1 / t)
        b, c = self.base, self.decay
        return self.lam**2 * (n_rounds * b * b + 2 * b * c * h_half + c * c * h_one)

    def variation(self, n_rounds: int) -> np.ndarray:
        r""":math:`V_T(i)=\sum_t(\pi_t(i)-\pi_*(i))^2=\lambda^2c^2H_T`."""
        return (self.lam * self.decay) ** 2 * np.sum(1.0 / np.arange(1, n_rounds + 1))

    def sum_optimal_costs(self, n_rounds: int, budget: float, chunk: int = 4096) -> float:
        r""":math:`\sum_t\min_{p\in\mathcal P_K}\ell_t(p)` (closed form when nothing is capped,
        the numba water-filling kernel otherwise; feedback is positive here)."""
        total = 0.0
        for t0 in range(1, n_rounds + 1, chunk):
            pi = self.block(t0, min(t0 + chunk, n_rounds + 1))
            sums = pi.sum(axis=1)
            free = budget * pi.max(axis=1) <= sums
            total += float(np.sum(sums[free] ** 2) / budget)
            capped = np.ascontiguousarray(pi[~free])
            if capped.shape[0]:
                from flbounds.kernels.waterfill import waterfill_objectives
                out = np.empty(capped.shape[0])
                waterfill_objectives(capped, float(budget), out)
                total += float(out.sum())
        return total


def best_fixed_cost(squared_sums: np.ndarray, budget: float) -> float:
    r""":math:`\min_{p\in\mathcal P_K}\sum_i\pi^2_{1:T}(i)/p_i` (exact, water-filling)."""
    return optimal_isp_objective(np.sqrt(squared_sums), budget)


class OnlineTrace(NamedTuple):
    """Per-round record of an online run."""

    costs: np.ndarray        # l_t(p^t) with the sampler's inclusion weights
    sizes: np.ndarray        # number of distinct sampled clients
    n_capped: np.ndarray     # clients with inclusion weight >= 1 (ISP) at round t


def run_online(sampler, feedback: Assumption51Feedback, n_rounds: int,
               rng: np.random.Generator) -> OnlineTrace:
    """Drive ``sampler`` for ``n_rounds`` rounds with partial feedback (sampled clients only);
    full-information samplers get every value through ``reveal`` first."""
    costs = np.empty(n_rounds)
    sizes = np.empty(n_rounds, dtype=np.int64)
    capped = np.empty(n_rounds, dtype=np.int64)
    for t in range(1, n_rounds + 1):
        pi = feedback.values(t)
        sampler.reveal(pi)
        w = sampler.inclusion_weights()
        costs[t - 1] = np.sum(pi * pi / w)
        capped[t - 1] = np.sum(w >= 1.0)
        draw = sampler.sample(rng)
        sizes[t - 1] = draw.clients.size
        sampler.update(Feedback(draw, pi[draw.clients]))
    return OnlineTrace(costs, sizes, capped)


class Regret(NamedTuple):
    static: float          # Regret_S
    best_fixed: float      # min_p sum_t l_t(p)
    t_bfp: float           # min_p sum_t l_t - sum_t min_p l_t
    dynamic: float         # Regret_D = static + T_BFP


def static_regret(costs: np.ndarray, feedback: Assumption51Feedback, budget: float) -> float:
    """Regret_S of a cost sequence against the exact best fixed p in hindsight."""
    return float(costs.sum() - best_fixed_cost(feedback.squared_sums(costs.size), budget))


def regrets(costs: np.ndarray, feedback: Assumption51Feedback, budget: float) -> Regret:
    """Static, best-fixed, T_BFP and dynamic regret of a cost sequence over its horizon."""
    n_rounds = costs.size
    best = best_fixed_cost(feedback.squared_sums(n_rounds), budget)
    opt = feedback.sum_optimal_costs(n_rounds, budget)
    static = float(costs.sum() - best)
    return Regret(static, best, best - opt, static + best - opt)


class FTRLTrace(NamedTuple):
    costs: np.ndarray
    z: np.ndarray            # z_t = K - #capped (p_min = 0)


def ftrl_full_information(feedback: Assumption51Feedback, n_rounds: int, budget: float,
                          gamma: float) -> FTRLTrace:
    r"""Eq. (10) with full information: :math:`p^t=\arg\min_p\sum_i(\pi^2_{1:t-1}(i)+\gamma)/p_i`
    (Lemma 5.1 with :math:`p_{\min}=0`, i.e. capped :math:`p\propto\sqrt{\cdot}`)."""
    n = feedback.n_clients
    acc = np.zeros(n)
    costs, z = np.empty(n_rounds), np.empty(n_rounds)
    scratch = (np.empty(n), np.empty(n + 1))
    for t in range(1, n_rounds + 1):
        a = np.sqrt(acc + gamma)
        if t == 1 or n > COMPILED_MAX_N:    # round 1 checks the arguments; the rounds after
            p = optimal_isp_probabilities(a, budget)    # it call the kernel this one calls
        else:                                           # (acc only grows: a stays valid)
            isp_probabilities(a, float(budget), 0.0, *scratch, p)
        pi = feedback.values(t)
        costs[t - 1] = np.sum(pi * pi / p)
        z[t - 1] = budget - np.sum(p >= 1.0)
        acc += pi * pi
    return FTRLTrace(costs, z)


class KVibRun(NamedTuple):
    costs: np.ndarray        # l_t(p~^t)
    sizes: np.ndarray        # |S^t|
    capped: np.ndarray       # clients with p^t_i = 1 (before mixing); z_t = K - capped
    theta: float
    gamma: float


def kvib_online(feedback: Assumption51Feedback, n_rounds: int, budget: float,
                rng: np.random.Generator, *, G: float | None = None, gamma: float | None = None,
                theta: float | None = None, variant: str = "paper",
                chunk: int = 2048) -> KVibRun:
    r"""Fast K-Vib online run (numba kernel); same draws as ``run_online(KVib(...), ...)``.

    The uniform plan is drawn from ``rng`` in blocks of ``chunk`` rounds (row-major, so the
    stream equals one ``rng.random(N)`` per round, as the sampler class draws it).
    """
    from flbounds.kernels.waterfill import kvib_rounds

    from .ftrl import KVib

    ref = KVib(feedback.n_clients, budget, n_rounds, G=G, gamma=gamma, theta=theta,
               variant=variant)  # validates and resolves theta / gamma
    n = feedback.n_clients
    omega = np.zeros(n)
    costs = np.empty(n_rounds)
    sizes = np.empty(n_rounds, dtype=np.int64)
    capped = np.empty(n_rounds, dtype=np.int64)
    for t0 in range(1, n_rounds + 1, chunk):
        m = min(chunk, n_rounds + 1 - t0)
        uniforms = rng.random((m, n))
        kvib_rounds((feedback.lam, feedback.base, feedback.decay),
                    (float(budget), ref.theta, ref.gamma, variant == "paper"), t0, uniforms,
                    omega, (costs[t0 - 1:t0 - 1 + m], sizes[t0 - 1:t0 - 1 + m],
                            capped[t0 - 1:t0 - 1 + m]))
    return KVibRun(costs, sizes, capped, ref.theta, ref.gamma)
