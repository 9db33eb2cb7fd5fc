r"""The draws of the compiled paths against their exact laws: the FedAvg sampler loop and the
bandit baselines' replicate kernels (K-Vib, Algorithm 1 with Algorithm 2 and App. F's
baselines). The Python samplers and the compiled ISP round are :mod:`verify.kvib.draw_laws`.

- **The sampler loop** (:func:`flbounds.algorithms.fedavg_sampler` and
  :func:`~flbounds.algorithms.fedavg_sampler_batched` with ``diagnostics=False``: every round
  in :func:`flbounds.kernels.sampler_loop.drawn_rounds`). Its trace holds the iterates, not the
  draws, so the draws are read from the iterates on a designed problem: client i's loss
  :math:`f_i(x)=\tfrac12Nc\,x_i^2-x_i` touches coordinate i only (a quadratic with
  :math:`A_i=Nc\,e_ie_i^\top`, :math:`b_i=e_i`, c small), so coordinate i of the server
  model moves in a round iff client i was drawn (exactly: the other clients' updates are 0
  there). Uniform ISP draws with :math:`K/N` every round (one run of many rounds, and many
  replicates of a few rounds); K-Vib, at a warmed state, draws its first round with the
  Python sampler's :math:`\tilde p` (many replicates of one round).
- **The bandit kernels** (:mod:`flbounds.kernels.bandit_replicates`, the replicates behind
  :func:`flbounds.sampling.online_batched.baseline_costs`): at a designed non-uniform state,
  Mabs's compiled draw writes each replicate's per-client counts; Vrb's compiled rounds
  write its state :math:`s_i \mathrel{+}= c_i\pi_i^2/q_i`, from which one round's counts are
  read back exactly. Each replicate's K draws are i.i.d. from
  :math:`q=(1-\text{mix})w/\sum w+\text{mix}/N`.

Tests, level, power and draw counts as in :mod:`verify.kvib.draw_laws`: exact binomial cells
under Holm per family, families by Bonferroni, level :data:`~verify.kvib.draw_laws.ALPHA`,
enough draws that a 1% relative bias in any client's inclusion probability is detected with
probability :data:`~verify.kvib.draw_laws.POWER`.
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms import fedavg_sampler, fedavg_sampler_batched
from flbounds.kernels.bandit_replicates import BanditRun, mabs_draw, vrb_rounds
from flbounds.ledger import claim
from flbounds.problems import Quadratic
from flbounds.sampling import UniformISP

from ..stats_checks import law_evidence
from .alg1 import ALG1
from .draw_laws import (
    FEEDBACK,
    ISP,
    K,
    N,
    _isp_law,
    _judge,
    _multinomial_law,
    n_draws_for,
    warmed,
)

#: curvature scale of the designed problem: N c x_i stays far below 1 over every run here
CURVATURE = 1e-9
#: rounds per replicate of the batched uniform-ISP run
BATCH_ROUNDS = 50
#: a designed non-uniform bandit state: weights w proportional to 1, ..., N
BANDIT_WEIGHTS = np.arange(1.0, N + 1.0)
N_PAIRS = N * (N - 1) // 2


def separable_problem() -> Quadratic:
    """Client i's loss touches coordinate i only (module docstring)."""
    A = np.zeros((N, N, N))
    A[np.arange(N), np.arange(N), np.arange(N)] = N * CURVATURE
    return Quadratic(A, np.eye(N))


def drawn_masks(xs: np.ndarray) -> np.ndarray:
    """Draws (rounds, N) read from iterates (..., T + 1, N): coordinate i moved iff client i
    was drawn."""
    return (np.diff(xs, axis=-2) != 0).reshape(-1, N)


_RUN = dict(local_steps=1, step=0.1, server_step=1.0, diagnostics=False)


def _uniform_state(rng):
    return np.full(N, K / N), None


def _kvib_state(rng):
    sampler = warmed(ISP["kvib"], rng)
    return sampler.probabilities(), sampler


def _loop_single(rng, n, _):
    trace = fedavg_sampler(separable_problem(), UniformISP(N, K), rng, n_rounds=n, **_RUN)
    return drawn_masks(trace.x)


def _loop_batched(rng, n, _):
    reps = -(-n // BATCH_ROUNDS)
    trace = fedavg_sampler_batched(separable_problem(), [UniformISP(N, K) for _ in range(reps)],
                                   rng.random((reps, BATCH_ROUNDS, N)), **_RUN)
    return drawn_masks(trace.x)


def _clones(sampler, n):
    """``n`` shallow copies of ``sampler``: fresh instances given its attributes (the
    samplers keep their state in ``__dict__``), without the generic copy protocol. They
    share ``omega``: the loop reads each replicate's state into an array of its own when it
    starts and writes it back when it ends, so the draws are those of independent copies
    (only the samplers' state after the run, which nothing here reads, is shared)."""
    cls, state = type(sampler), sampler.__dict__
    clones = [object.__new__(cls) for _ in range(n)]
    for clone in clones:
        clone.__dict__.update(state)
    return clones


def _loop_first_round(rng, n, sampler):
    # every replicate starts from the warmed state (the loop reads each sampler's omega)
    clones = _clones(sampler, n)
    trace = fedavg_sampler_batched(separable_problem(), clones, rng.random((n, 1, N)), **_RUN)
    return drawn_masks(trace.x)


#: family -> (its law and state before any draw, its draws through the loop)
LOOP = {"uniform_isp_one_run": (_uniform_state, _loop_single),
        "uniform_isp_replicates": (_uniform_state, _loop_batched),
        "kvib_first_round_replicates": (_kvib_state, _loop_first_round)}


@claim("kvib.draw_law.sampler_loop", ref="Alg. 1 line 3; Alg. 2 line 4 (compiled loop)",
       kind="algorithm", expected="holds", result=ALG1, parts=("line3",),
       statement="The compiled FedAvg sampler loop (one run and replicates) includes each "
                 "client independently with the sampler's probabilities p~_i.",
       quick=dict(families=tuple(LOOP)), full=dict(families=tuple(LOOP)))
def sampler_loop(*, rng, families):
    """Per family: the loop's draws (read from the iterates, module docstring) against p~_i
    and p~_i p~_j, through the public ``fedavg_sampler`` / ``fedavg_sampler_batched``; the
    number of draws is fixed from the law before drawing."""
    out = {}
    for name in families:
        state_of, draws_of = LOOP[name]
        p, state = state_of(rng)
        n = n_draws_for(p, N + N_PAIRS, len(families))
        masks = draws_of(rng, n, state)
        inclusion, pairwise = _isp_law(p)
        out[name] = _judge(masks.astype(np.int64), inclusion, pairwise), {
            "draws": int(masks.shape[0]), "p": p.tolist()}
    return law_evidence(out, "loops", {"problem": "A_i = N c e_i e_i^T, b_i = e_i",
                                          "c": CURVATURE})


def _bandit_run(n_reps, mix, rng):
    """Settings of ``n_reps`` one-round replicates at budget K: uniforms (B, 1, K) drawn here."""
    return BanditRun(np.full(n_reps, K, dtype=np.int64), np.full(n_reps, mix),
                     np.zeros(n_reps), rng.random((n_reps, 1, K)), np.empty((n_reps, 1)),
                     np.empty((n_reps, 1), dtype=np.int64))


def _feedback_arrays():
    """Round-1 feedback pi = lam (b + c) = FEEDBACK (lam = 1/N, c = 0)."""
    return (np.full(N, 1.0 / N), N * FEEDBACK, np.zeros(N))


def _mabs_counts(rng, n, mix):
    """Counts (n, N) written by Mabs's compiled draw at weights :data:`BANDIT_WEIGHTS`."""
    q, counts = np.empty((n, N)), np.empty((n, N), dtype=np.int64)
    w = np.tile(BANDIT_WEIGHTS, (n, 1))
    mabs_draw(_feedback_arrays(), _bandit_run(n, mix, rng), 1, w, q, counts)
    return counts


def _vrb_counts(rng, n, mix):
    """One round of Vrb's compiled rounds from s = :data:`BANDIT_WEIGHTS`^2 per replicate; the
    counts read back from s's update c_i pi_i^2 / q_i (integers to rounding)."""
    s0 = np.tile(BANDIT_WEIGHTS**2, (n, 1))
    s = s0.copy()
    vrb_rounds(_feedback_arrays(), _bandit_run(n, mix, rng), s)
    q = bandit_law(mix)
    return np.rint((s - s0) * q / FEEDBACK**2).astype(np.int64)


def bandit_law(mix):
    """q = (1 - mix) w / sum w + mix / N at the designed weights."""
    return (1 - mix) * BANDIT_WEIGHTS / BANDIT_WEIGHTS.sum() + mix / N


#: family -> (mixing weight of the sampler, its compiled draws)
BANDITS = {"vrb": (0.3, _vrb_counts), "mabs": (0.4, _mabs_counts)}


@claim("kvib.draw_law.bandit_kernels", ref="App. F baselines (compiled replicates)",
       kind="algorithm", expected="holds", result=ALG1, parts=("line3",),
       statement="The compiled replicates of Vrb and Mabs draw K clients i.i.d. from their q: "
                 "shares q_i, inclusion 1 - (1 - q_i)^K and the pairwise inclusions.",
       quick=dict(samplers=tuple(BANDITS)), full=dict(samplers=tuple(BANDITS)))
def bandit_kernels(*, rng, samplers):
    """Per sampler: one round of many replicates at a designed state through the compiled
    kernels (module docstring); each client's share of the n K draws against Binomial(nK,
    q_i), inclusion and pairwise inclusion cells. One family per sampler."""
    families = {}
    for name in samplers:
        mix, draws_of = BANDITS[name]
        q = bandit_law(mix)
        inclusion, pairwise = _multinomial_law(q, K)
        n = n_draws_for(inclusion, 2 * N + N_PAIRS, len(samplers))
        counts = draws_of(rng, n, mix)
        shares = ([f"share of draws, client {i}" for i in range(N)], counts.sum(axis=0),
                  np.full(N, float(n * K)), q)
        families[name] = _judge(counts, inclusion, pairwise, shares), {
            "draws": n, "q": q.tolist(), "counts_sum_to_K": bool(np.all(counts.sum(1) == K))}
    return law_evidence(families, "samplers", {"weights": BANDIT_WEIGHTS.tolist()})
