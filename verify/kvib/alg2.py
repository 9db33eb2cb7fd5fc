r"""Algorithm 2 of K-Vib (the K-Vib sampler): the result, its parts, its hypotheses and its
claims.

Inputs N, K, T, :math:`\gamma`, :math:`\theta`; per round: :math:`p_i^t\propto
\sqrt{\omega(i)+\gamma}` "by Lemma 5.1" (the capped FTRL solution, summing to K), mixing
:math:`\tilde p^t=(1-\theta)p^t+\theta K/N`, an ISP draw :math:`S^t\sim\tilde p^t`, and
:math:`\omega(i)\mathrel{+}=\pi_t(i)^2/\tilde p_i^t` for the sampled clients. Instances carry
``n_clients``, ``budget``, ``gamma`` and ``theta``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.sampling import (
    KVib,
    optimal_isp_probabilities,
)
from flbounds.sampling.online import kvib_online, run_online

from .conditions import budget_in_range
from .guards import ROUNDING, _feedback


@hypothesis("inputs", "N, K, T, gamma, theta: 1 <= K <= N (Remark 2.1), gamma > 0, "
                      "theta in [0, 1]")
def inputs(*, n_clients, budget, gamma, theta):
    return bool(budget_in_range(budget, n_clients) and gamma > 0 and 0 <= theta <= 1)


ALG2 = result(
    "kvib.alg2", ref="Algorithm 2", title="the K-Vib sampler",
    parts={"line_p": "p_i^t proportional to sqrt(omega(i) + gamma), 'by Lemma 5.1'",
           "mixing": "p~_i^t = (1 - theta) p_i^t + theta K/N",
           "draw": "S^t ~ p~^t (ISP)",
           "update": "omega(i) += pi_t(i)^2/p~_i^t for the sampled clients"},
    hypotheses=(inputs,))


@claim("kvib.alg2.compiled_loop", ref="Alg. 2, lines 3-8", kind="algorithm", expected="holds",
       result=ALG2,
       statement="K-Vib per round: p^t from FTRL on omega + gamma (square root), mixing "
                 "(1 - theta) p^t + theta K/N, ISP draw, omega_i += pi_t(i)^2/p~_i for the "
                 "sampled clients; the compiled loop and the sampler class run these lines.",
       quick=dict(n_instances=4, n_rounds=150), full=dict(n_instances=20, n_rounds=1000))
def compiled_loop(*, rng, n_instances, n_rounds):
    """Random N in 6..30, K in [1, N/2], theory theta and gamma (G = max feedback). Both
    paths get the same seed, hence the same uniforms. Measured: the largest relative
    difference of the per-round costs l_t(p~^t) plus the number of rounds whose sample sizes
    differ (an ISP draw U < p~ would flip only on an exact tie). Tolerance: rounding."""
    worst, size_mismatch, instances = 0.0, 0, []
    for r in rng.spawn(n_instances):
        n = int(r.integers(6, 31))
        k = float(r.integers(1, n // 2 + 1))
        fb = _feedback(r, n)
        G = float(np.max(fb.values(1)))
        seed = int(r.integers(2**63))
        fast = kvib_online(fb, n_rounds, k, np.random.default_rng(seed), G=G)
        sampler = KVib(n, k, n_rounds, G=G)
        instances.append(dict(n_clients=n, budget=k, gamma=sampler.gamma, theta=sampler.theta))
        slow = run_online(sampler, fb, n_rounds, np.random.default_rng(seed))
        worst = max(worst, float(np.max(np.abs(fast.costs - slow.costs) / slow.costs)))
        size_mismatch += int(np.sum(fast.sizes != slow.sizes))
    return Evidence(measured=worst + size_mismatch, theoretical=0.0, relation="<=",
                    instance=instances,
                    tolerance=ROUNDING,
                    details={"max_rel_cost_diff": worst, "rounds_size_differs": size_mismatch,
                             "n_instances": n_instances})


@claim("kvib.alg2.printed_proportional", ref="Algorithm 2 ('p_i^t proportional to "
       "sqrt(omega(i)+gamma)  by Lemma 5.1')", kind="remark", expected="violated",
       result=ALG2, parts=("line_p",),
       statement="Read without its Lemma 5.1 pointer, normalising p proportional to "
                 "sqrt(omega + gamma) to sum K gives valid inclusion probabilities (<= 1).",
       quick=dict(), full=dict())
def alg2_printed_proportional(*, rng):
    r"""Read literally, the line gives :math:`p=K\sqrt{w}/\sum\sqrt{w}`, which exceeds 1 when
    one client dominates: w = (1, 1, 100), K = 2 gives p_3 = 20/12 = 1.67. The capped Lemma 5.1
    solution (what :class:`flbounds.sampling.KVib` uses) gives (0.5, 0.5, 1). Expected
    **violated** for the literal reading only. Algorithm 2's line carries the pointer
    "by Lemma 5.1", whose solution is the capped FTRL probability, so the line is shorthand
    for the capped rule and Algorithm 2 itself is not wrong; hence kind ``remark`` (a notation
    hazard for implementers), not ``algorithm``. The capped form is checked by
    ``kvib.eq12.mixing_and_estimates`` and ``kvib.lemma5_1.corrected``."""
    w = np.array([1.0, 1.0, 100.0])
    plain = 2 * np.sqrt(w) / np.sqrt(w).sum()
    # the library's Algorithm 2 line at omega + gamma = w (no mixing): the capped rule
    sampler = KVib(3, 2, 10, gamma=1.0, theta=0.0)
    sampler.omega[:] = w - sampler.gamma
    return Evidence(measured=float(plain.max()), theoretical=1.0, relation="<=",
                    instance=dict(n_clients=3, budget=2, gamma=sampler.gamma,
                                  theta=sampler.theta),
                    tolerance=Tolerance.exact(),
                    details={"smallest_instance": {
                                 "w": [1.0, 100.0], "K": 1.5,
                                 "p_max": float(1.5 * 10 / 11),
                                 "why": "K = 1 never exceeds 1; N = 2 with K in (1, 2) does"},
                             "plain": plain, "capped": optimal_isp_probabilities(np.sqrt(w), 2),
                             "library_kvib_line": sampler.probabilities()})
