r"""The samplers of K-Vib and its baselines draw the law they state: what the library draws
against the exact inclusion probabilities, pairwise inclusions and multinomial shares.

Every sampler of :mod:`flbounds.sampling` is brought to a non-uniform state (a few rounds of
sampling and feedback), then draws many times at that state through its public entry point
(``sample_many``, the same draws as repeated ``sample`` calls: tested bit for bit) and, for
the ISP samplers the compiled loops run, through the compiled round
(:func:`flbounds.kernels.isp_round.isp_sampler_round`) as well. The exact law of a draw:

- ISP (uniform ISP, K-Vib, K-Vib's incremental form, the oracle): client i joins
  independently with probability :math:`\tilde p_i`, so :math:`P(i, j \in S) = \tilde p_i
  \tilde p_j`;
- multinomial RSP (Vrb, Mabs, Avare): K i.i.d. draws from q, so a client's count over n rounds
  is :math:`\mathrm{Binomial}(nK, q_i)`, :math:`P(i \in S) = 1 - (1 - q_i)^K` and
  :math:`P(i, j \in S) = 1 - (1 - q_i)^K - (1 - q_j)^K + (1 - q_i - q_j)^K`;
- uniform RSP (K of N without replacement): :math:`K/N` and :math:`K(K-1)/(N(N-1))`.

Each claim tests every cell with an exact binomial test under Holm's rule, one family per
sampler, the families combined by Bonferroni, at :data:`ALPHA` for the whole claim, fixed
before any draw (:mod:`flbounds.draw_laws`, :func:`verify.stats_checks.law_evidence`); the
number of draws is
derived from :data:`BIAS`: enough that a relative bias of 1% in any client's inclusion
probability is detected with probability :data:`POWER`. ``violated`` is a rejection at that
level; the detectable bias of every cell is reported.
"""

from __future__ import annotations

import numpy as np

from flbounds.draw_laws import inclusion_cells, law_test, trials_to_detect
from flbounds.kernels.isp_round import IspRound, isp_sampler_round
from flbounds.ledger import claim
from flbounds.sampling import Avare, Feedback, KVib, Mabs, OracleISP, UniformISP, UniformRSP, Vrb
from flbounds.sampling.incremental import KVibIncremental

from ..stats_checks import law_evidence
from .alg1 import ALG1

#: family-wise level of each claim's Holm rule, fixed before the draws
ALPHA = 1e-3
#: the relative bias of one client's inclusion probability each claim must detect ...
BIAS = 0.01
#: ... with this probability
POWER = 0.9
N, K, T = 5, 3, 20
#: feedback of the warm-up rounds: heterogeneous, so adaptive samplers leave uniform
FEEDBACK = np.array([0.5, 0.8, 1.2, 1.6, 2.0])
WARMUP = 6

ISP = {"uniform_isp": lambda: UniformISP(N, K),
       "kvib": lambda: KVib(N, K, T, G=4.0),
       "kvib_incremental": lambda: KVibIncremental(N, K, T, G=4.0),
       "oracle": lambda: OracleISP(N, K)}
MULTINOMIAL = {"vrb": lambda: Vrb(N, K, T, G=4.0), "mabs": lambda: Mabs(N, K, T, G=4.0),
               "avare": lambda: Avare(N, K, G=4.0)}


def warmed(make, rng):
    """A sampler after :data:`WARMUP` rounds of sampling and feedback (its state is then
    whatever its update rule gives; the law is tested at that state)."""
    sampler = make()
    for _ in range(WARMUP):
        sampler.reveal(FEEDBACK)
        draw = sampler.sample(rng)
        sampler.update(Feedback(draw, FEEDBACK[draw.clients]))
    sampler.reveal(FEEDBACK)
    return sampler


def n_draws_for(inclusion, n_cells, n_families):
    """Draws so that a relative :data:`BIAS` of any inclusion cell is detected with
    probability :data:`POWER` at the per-cell level of Holm's first step."""
    return trials_to_detect(inclusion, BIAS, alpha_cell=ALPHA / (n_families * n_cells),
                            power=POWER)


def _isp_law(p):
    return p, np.outer(p, p)


def _multinomial_law(q, k):
    miss = (1 - q) ** k
    pair = 1 - miss[:, None] - miss[None, :] + (1 - q[:, None] - q[None, :]) ** k
    return 1 - miss, pair


def _judge(counts, inclusion, pairwise, extra=None):
    names, succ, prob = inclusion_cells(counts > 0, inclusion, pairwise)
    trials = np.full(succ.size, counts.shape[0], dtype=float)
    if extra is not None:
        names, succ, trials, prob = (list(names) + extra[0], np.r_[succ, extra[1]],
                                     np.r_[trials, extra[2]], np.r_[prob, extra[3]])
    return law_test(names, succ, trials, prob, alpha=ALPHA, power=POWER)


@claim("kvib.draw_law.isp_samplers", ref="Sec. 2.2, ISP; Algorithm 2 line 4", kind="algorithm",
       expected="holds", result=ALG1, parts=("line3",),
       statement="Uniform ISP, K-Vib (both forms) and the full-information oracle include "
                 "each client independently with their stated probabilities p~_i.",
       quick=dict(samplers=tuple(ISP)), full=dict(samplers=tuple(ISP)))
def isp_samplers(*, rng, samplers):
    """Per sampler: inclusion of each client and of each pair against p~_i and p~_i p~_j,
    through ``sample_many`` (the public draws). One family per sampler at level ALPHA."""
    families = {}
    for name in samplers:
        sampler = warmed(ISP[name], rng)
        p = sampler.probabilities()
        inclusion, pairwise = _isp_law(p)
        n = n_draws_for(inclusion, N + N * (N - 1) // 2, len(samplers))
        test = _judge(sampler.sample_many(rng, n), inclusion, pairwise)
        families[name] = test, {"draws": n, "p": p.tolist()}
    return law_evidence(families, "samplers", {})


@claim("kvib.draw_law.isp_compiled_round", ref="Sec. 2.2, ISP; Algorithm 2 line 4",
       kind="algorithm", expected="holds", result=ALG1, parts=("line3",),
       statement="The compiled round of the ISP samplers (the batched and looped runs) "
                 "includes each client independently with the probabilities it computes.",
       quick=dict(samplers=("uniform_isp", "kvib", "oracle")),
       full=dict(samplers=("uniform_isp", "kvib", "oracle")))
def isp_compiled_round(*, rng, samplers):
    """Per sampler kind: one compiled round over many replicates at the warmed state (each
    replicate its own uniforms); the replicates' masks against the probabilities the kernel
    wrote, p_i and p_i p_j."""
    from flbounds.algorithms.sampler_rounds import _compiled_settings

    families = {}
    for name in samplers:
        sampler = warmed(ISP[name], rng)
        settings = _compiled_settings([sampler])
        p = sampler.probabilities()
        n = n_draws_for(p, N + N * (N - 1) // 2, len(samplers))
        omega = np.tile(getattr(sampler, "omega", np.zeros(N)), (n, 1))
        pi = np.tile(FEEDBACK, (n, 1))
        out = IspRound(np.empty((n, N)), np.empty((n, N), dtype=np.bool_), np.empty(n),
                       np.empty(n), np.empty(n))
        isp_sampler_round(settings, pi, omega, rng.random((n, N)), out)
        inclusion, pairwise = _isp_law(out.p[0])
        test = _judge(out.mask.astype(np.int64), inclusion, pairwise)
        families[name] = test, {"draws": n, "p": out.p[0].tolist(),
                                "p_equals_python": bool(np.allclose(out.p[0], p, rtol=1e-12))}
    return law_evidence(families, "samplers", {})


@claim("kvib.draw_law.multinomial_samplers", ref="Sec. 2.2, RSP; App. D baselines",
       kind="algorithm", expected="holds", result=ALG1, parts=("line3",),
       statement="Vrb, Mabs and Avare draw K clients i.i.d. from their stated q: a client's "
                 "share of the draws is q_i, its inclusion 1 - (1 - q_i)^K, and the pairwise "
                 "inclusions follow.",
       quick=dict(samplers=tuple(MULTINOMIAL)), full=dict(samplers=tuple(MULTINOMIAL)))
def multinomial_samplers(*, rng, samplers):
    """Per sampler: each client's count over the n K single draws against Binomial(nK, q_i),
    plus inclusion and pairwise inclusion cells. One family per sampler at level ALPHA."""
    families = {}
    for name in samplers:
        sampler = warmed(MULTINOMIAL[name], rng)
        q = sampler.probabilities()
        inclusion, pairwise = _multinomial_law(q, K)
        n_cells = 2 * N + N * (N - 1) // 2
        n = n_draws_for(inclusion, n_cells, len(samplers))
        counts = sampler.sample_many(rng, n)
        shares = ([f"share of draws, client {i}" for i in range(N)], counts.sum(axis=0),
                  np.full(N, float(n * K)), q)
        test = _judge(counts, inclusion, pairwise, shares)
        families[name] = test, {"draws": n, "q": q.tolist()}
    return law_evidence(families, "samplers", {})


@claim("kvib.draw_law.uniform_rsp", ref="Sec. 2.2, RSP (uniform)", kind="algorithm",
       expected="holds", result=ALG1, parts=("line3",),
       statement="Uniform RSP draws K of N clients without replacement: inclusion K/N, "
                 "pairwise K(K-1)/(N(N-1)).",
       quick=dict(bias=BIAS), full=dict(bias=BIAS))
def uniform_rsp(*, rng, bias):
    """Through ``sample_many`` (one ``sample`` call per draw: the sampler has no batched
    draw). The number of draws is sized, as for the other samplers, so that a relative
    ``bias`` (1%) of any client's inclusion probability is detected with probability
    POWER at both profiles (about 1.9e5 draws, a few seconds); the pairwise cells are tested
    in the same Holm family at the bias they resolve (reported)."""
    sampler = UniformRSP(N, K)
    inclusion = np.full(N, K / N)
    pairwise = np.full((N, N), K * (K - 1) / (N * (N - 1)))
    n = trials_to_detect(inclusion, bias, alpha_cell=ALPHA / (N + N * (N - 1) // 2),
                         power=POWER)
    test = _judge(sampler.sample_many(rng, n), inclusion, pairwise)
    return law_evidence({"uniform_rsp": (test, {"draws": n, "designed_bias": bias})},
                        "samplers", {})
