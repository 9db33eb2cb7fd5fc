r"""K-Vib Def. 2.1 and Algorithm 1 line 12 (K-Vib): the estimator the library's FedAvg loop
builds, averaged exactly over every sample a sampler can draw.

Line 12 is :math:`d^t = \sum_{i\in S^t}\lambda_i g_i^t / p_i^t`; Def. 2.1 asks
:math:`E_{S^t}[d^t] = \sum_i \lambda_i g_i^t` with :math:`E|S^t| = \sum_i p_i^t = K`
(Remark 2.1). The check runs the library's round
(:func:`flbounds.algorithms.fedavg_sampler_batched`, one replicate per subset S of the N
clients, each fed the uniforms that make an ISP draw return exactly S) with the server step 1,
so :math:`d_S = x^t - x^{t+1}_S` is whatever the implementation aggregates. The subset
probabilities :math:`\Pr(S)=\prod_{i\in S}p_i\prod_{i\notin S}(1-p_i)` use the sampler's
own ``probabilities()``. A water level that is off (so :math:`\sum p \ne K`), weights that
are not the inverse of the probabilities the draw used, or a draw that does not follow p
all move the enumerated mean or the expected size.
"""

from __future__ import annotations

import copy
import itertools

import numpy as np

from flbounds.algorithms.batched_sampler import fedavg_sampler_batched
from flbounds.algorithms.fedavg_sampler import fedavg_sampler, local_updates
from flbounds.ledger import Evidence, Tolerance, claim, result
from flbounds.problems.generators import random_ridge
from flbounds.sampling import KVib, OracleISP, UniformISP, multinomial_estimate
from flbounds.sampling.exact import all_masks, design_moments, uniform_subset_design
from flbounds.sampling.incremental import KVibIncremental
from flbounds.tolerances import EPS

from .alg1 import ALG1
from .conditions import budget_of_sampler

LOCAL_STEPS = 2

DEF2_1 = result(
    "kvib.def2_1", ref="Definition 2.1", title="unbiased client sampling and its variance",
    parts={"unbiased": "E_{S^t}[d^t] = E[sum_{i in S^t} lambda_i g_i^t/p_i^t] = "
                       "sum_i lambda_i g_i^t, with E|S^t| = K",
           "variance": ("eq. (2): V(S^t) := E||sum_{i in S^t} lambda_i g_i^t/p_i^t - "
                        "sum_i lambda_i g_i^t||^2",
                        "a definition; its ISP closed form is kvib.lemma2_1:isp")},
    hypotheses=(budget_of_sampler,))


def _forcing_uniforms(masks, p):
    """Uniforms that make ``U < p`` reproduce each mask: p/2 inside, (1 + p)/2 outside (kept
    below 1; a mask leaving out a client with p_i = 1 has probability 0 and is not checked)."""
    return np.where(masks, 0.5 * p, np.minimum(0.5 * (1.0 + p), np.nextafter(1.0, 0.0)))


def _enumerate(problem, sampler, x, step):
    """Exact E[d] and E|S| of the library's line 12 over all 2^N draws of ``sampler`` at
    model ``x``; also the target sum_i lambda_i g_i."""
    n = problem.n_clients
    lam = np.full(n, 1.0 / n)
    z = lam[:, None] * local_updates(problem, x, local_steps=LOCAL_STEPS, step=step)
    probe = copy.deepcopy(sampler)
    probe.reveal(np.linalg.norm(z, axis=1))
    p = probe.probabilities()
    masks = all_masks(n)
    probs = np.prod(np.where(masks, p, 1.0 - p), axis=1)
    uniforms = _forcing_uniforms(masks, p)[:, None, :]
    trace = fedavg_sampler_batched(problem, [copy.deepcopy(sampler) for _ in masks], uniforms,
                                   local_steps=LOCAL_STEPS, step=step, weights=lam, x0=x,
                                   diagnostics=False)
    d = trace.x[:, 0] - trace.x[:, 1]
    drawn = (trace.sizes[:, 0] == masks.sum(axis=1)) | (probs == 0)
    return (probs @ d, float(probs @ masks.sum(axis=1)), z.sum(axis=0), bool(np.all(drawn)),
            p)


def _warm(problem, sampler, rng, step, n_rounds=5):
    """The sampler after a few rounds of the library's loop (non-uniform probabilities)."""
    fedavg_sampler(problem, sampler, rng, n_rounds=n_rounds, local_steps=LOCAL_STEPS, step=step,
                   diagnostics=False)
    return sampler


def _samplers(n, k, G):
    """The ISP samplers of the library (the compiled round and, for the App. G subclass, the
    samplers' own methods)."""
    return {"kvib": KVib(n, k, 50, G=G), "kvib_incremental": KVibIncremental(n, k, 50, G=G),
            "oracle": OracleISP(n, k), "uniform_isp": UniformISP(n, k)}


def _rsp_errors(rng, n_clients, k):
    """Relative errors of the RSP designs of Def. 2.1's discussion: uniform K-subsets (exact
    design moments) and K = 2 multinomial draws (the library's estimator, all N^K draws on
    the first 6 clients)."""
    z = rng.standard_normal((n_clients, 2)) * rng.lognormal(0, 1, (n_clients, 1))
    scale = 1 + np.abs(z).sum()
    mom = design_moments(z, *uniform_subset_design(n_clients, k))
    errs = [float(np.abs(mom.mean - z.sum(axis=0)).max()) / scale]
    zs = z[:6]
    a = np.linalg.norm(zs, axis=1)
    q = a / a.sum()
    mean = np.zeros(2)
    for seq in itertools.product(range(6), repeat=2):
        counts = np.bincount(seq, minlength=6)
        mean += float(np.prod(q[list(seq)])) * multinomial_estimate(zs, q, counts)
    errs.append(float(np.abs(mean - zs.sum(axis=0)).max()) / scale)
    return errs


@claim("kvib.def2_1.unbiased_exact", ref="Def. 2.1, eq. (2); Alg. 1 line 12", kind="statement",
       expected="holds",
       statement="E[sum_{i in S} lambda_i g_i/p_i] = sum_i lambda_i g_i with E|S| = K, for the "
                 "estimator Algorithm 1 builds with the ISP samplers (K-Vib, its App. G form, "
                 "the optimal and the uniform one), and for uniform K-subsets and multinomial "
                 "draws.",
       quick=dict(n_instances=2, n_clients=8, k=3), full=dict(n_instances=8, n_clients=10, k=4),
       result=DEF2_1, parts=("unbiased", ALG1.part("line12")))
def unbiased_exact(*, rng, n_instances, n_clients, k):
    """Per instance: a ridge problem (N clients, d = 4), samplers warmed up by 5 rounds of
    the library's loop, then all 2^N draws at a fresh model. Measured: the largest relative
    error of E[d] (to sum lambda_i g_i) and of E|S| (to K), per sampler, and the RSP errors.
    Also required: every replicate drew exactly its forced subset. Expected **holds**.
    Tolerance: sums of 2^N products of N factors, 1e3 * 2^N eps relative."""
    errors, per_sampler, instances = [], {}, []
    for _ in range(n_instances):
        problem = random_ridge(rng, n_clients, 12, 4, lam=1.0, heterogeneity=3.0)
        step = 1.0 / (8 * LOCAL_STEPS * problem.L)
        x = rng.standard_normal(problem.dim)
        G = float(np.linalg.norm(local_updates(problem, x, local_steps=LOCAL_STEPS, step=step),
                                 axis=1).mean() / n_clients)
        for name, sampler in _samplers(n_clients, k, G).items():
            _warm(problem, sampler, rng, step)
            mean, size, target, drawn, p = _enumerate(problem, sampler, x, step)
            instances.append(dict(p=p, budget=k, n_clients=n_clients))
            err = [float(np.abs(mean - target).max() / np.abs(target).max()),
                   abs(size - k) / k, 0.0 if drawn else np.inf]
            per_sampler[name] = max(per_sampler.get(name, 0.0), max(err))
            errors.extend(err)
        errors.extend(_rsp_errors(rng, n_clients, k))

    return Evidence(measured=np.array(errors), theoretical=0.0, relation="==", instance=instances,
                    tolerance=Tolerance.rounding(1e3 * 2**n_clients * EPS, "2^N-term sums"),
                    details={"worst_relative_error_per_isp_sampler": per_sampler,
                             "n_enumerated_draws": 2**n_clients})
