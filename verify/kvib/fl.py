r"""Helpers of K-Vib's FL-level claims (no claims here): federated ridge regression set-up,
sampler factories and beta_1 (:mod:`verify.kvib.thm4_1.sampling`,
:mod:`verify.kvib.thm5_2.enhanced_rate`; K-Vib, recipes V14-V15).

Problem: federated ridge regression (:func:`flbounds.problems.generators.random_ridge`),
:math:`\lambda_i=1/N`, full-batch local GD (so :math:`\sigma_l=0`), :math:`\eta_g=1` and
:math:`\eta=R\eta_l=1/(8L)`, the largest step Thm 4.1 allows. K-Vib uses the Sec. 6 practical
:math:`G` (mean first-round feedback) in :math:`\gamma=G^2N/(K\theta)`.
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms.batched_sampler import fedavg_sampler_batched, sampler_uniforms
from flbounds.algorithms.fedavg_sampler import (
    SamplerTrace,
    check_hyper,
    check_weights_and_availability,
    fedavg_sampler,
    local_updates,
)
from flbounds.algorithms.sampler_rounds import Hyper, check_diagnostics, run
from flbounds.problems.generators import random_ridge
from flbounds.sampling import (
    KVib,
    Mabs,
    OracleISP,
    UniformISP,
    UniformRSP,
    Vrb,
)

from .printed_formulas import lemma22_split


def _setup(rng, n_clients, local_steps, *, dim=10, n_samples=20):
    problem = random_ridge(rng, n_clients, n_samples, dim, lam=1.0, heterogeneity=3.0)
    step = 1.0 / (8 * local_steps * problem.L)
    z0 = local_updates(problem, np.zeros(dim), local_steps=local_steps, step=step) / n_clients
    G = float(np.linalg.norm(z0, axis=1).mean())
    return problem, step, G


def _makers(n, k, t, G):
    return {"oracle": lambda: OracleISP(n, k), "kvib": lambda: KVib(n, k, t, G=G),
            "uniform_isp": lambda: UniformISP(n, k), "uniform_rsp": lambda: UniformRSP(n, k),
            "vrb": lambda: Vrb(n, k, t, G=G), "mabs": lambda: Mabs(n, k, t, G=G)}


def _beta1(trace) -> float:
    r"""beta_1 = mean over rounds of the exact excess variance V_t - delta_*^t (spec V12(vi)).

    For ISP samplers this equals ``q_gap`` = l_t(p^t) - l_t(p*^t); for RSP samplers (uniform
    subsets, multinomial Vrb / Mabs) ``q_gap`` evaluates the ISP cost at the inclusion weights
    and is *not* a variance gap, so every sampler uses the exact variance here.
    """
    return float(np.mean(trace.variance - trace.opt_variance))


def _beta1_seeds(problem, make, seeds, n_rounds, local_steps, step) -> np.ndarray:
    """``_beta1(_run(problem, make(), seed, ...))`` for every seed, bit for bit, as one
    :func:`~flbounds.algorithms.fedavg_sampler_batched` run (ISP samplers only)."""
    plan = sampler_uniforms(seeds, n_rounds=n_rounds, n_clients=problem.n_clients)
    tr = fedavg_sampler_batched(problem, [make() for _ in seeds], plan,
                                local_steps=local_steps, step=step, diagnostics="variance")
    return np.array([float(np.mean(tr.variance[b] - tr.opt_variance[b]))
                     for b in range(len(seeds))])


def _runs(problem, make, rngs, n_rounds, local_steps, step) -> list:
    """``[_run(problem, make(), rng, ...) for rng in rngs]``, the same traces bit for bit: an
    ISP sampler's runs as one :func:`~flbounds.algorithms.fedavg_sampler_batched` run, any
    other's side by side (:func:`side_by_side`)."""
    if make().procedure != "isp":
        return side_by_side(problem, [make() for _ in rngs], rngs, n_rounds=n_rounds,
                            local_steps=local_steps, step=step)
    plan = sampler_uniforms(rngs, n_rounds=n_rounds, n_clients=problem.n_clients)
    tr = fedavg_sampler_batched(problem, [make() for _ in rngs], plan,
                                local_steps=local_steps, step=step, diagnostics="variance")
    return [SamplerTrace(*(field[b] for field in tr)) for b in range(len(rngs))]


def side_by_side(problem, samplers, rngs, *, n_rounds, local_steps, step,
                 diagnostics="variance") -> list:
    """``[fedavg_sampler(problem, s, rng, ...) for s, rng in zip(samplers, rngs)]`` (x0 = 0,
    the problem's weights, server step 1), the same traces bit for bit, as the replicates of
    one round loop (:func:`flbounds.algorithms.sampler_rounds.run`): each sampler draws from
    its own generator with its own methods, and every client's local steps are computed for
    all replicates at once (one ``client_gradients`` call per local step)."""
    samplers, rngs = list(samplers), list(rngs)
    if not samplers or len(samplers) != len(rngs):
        raise ValueError("samplers and rngs must be non-empty and of equal length")
    if len({id(s) for s in samplers}) != len(samplers):
        raise ValueError("samplers must be distinct objects (each keeps its own state)")
    diagnostics = check_diagnostics(diagnostics)
    lam, _, _ = check_weights_and_availability(problem, None, None, None,
                                               (n_rounds, problem.n_clients), "(T, N)")
    one_step, steps = check_hyper(local_steps, step, 1.0, int(n_rounds))
    hyper = Hyper(int(local_steps), one_step, 1.0, lam, None, None, diagnostics, steps)
    tr = run(problem, samplers, rngs, int(n_rounds), hyper, np.zeros(problem.dim))
    return [SamplerTrace(*(field[b] for field in tr)) for b in range(len(samplers))]


def _run(problem, sampler, rng, n_rounds, local_steps, step):
    return fedavg_sampler(problem, sampler, rng, n_rounds=n_rounds, local_steps=local_steps,
                          step=step, diagnostics="variance")  # loss, grad_sq unused


def lemma22_value(a: np.ndarray, k: float) -> float:
    r"""min over P_K of sum a_i^2/p_i by the printed rule of Lemma 2.2, independent of
    :mod:`flbounds.sampling`: :math:`(\sum_{i\le l}a_{(i)})^2/(K+l-N)+\sum_{i>l}a_{(i)}^2`."""
    s, l = lemma22_split(a, k)
    return float(s[:l].sum() ** 2 / (k + l - s.size) + np.sum(s[l:] ** 2))


