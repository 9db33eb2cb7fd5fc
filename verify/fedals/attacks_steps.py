r"""Attack surfaces of the proof steps of FedALS Theorems 4.1 / A.2 (``fedals.thm41.proof_steps``,
App. A) and B.1 (``fedals.thmB1.proof_steps``, App. B, one round after tau local mini-batch
SGD steps (5)).

Each inequality of a proof is a ratio of its own, above 1 only when that step fails beyond the
claim's own allowance:

- a **per-draw** step (deterministic for given datasets) is
  ``max over draws and clients of lhs / (rhs + ROUNDING x scale)``: the claim's rounding
  allowance (1e-10 x the size of the risks involved) added to the right side, so the ratio is
  above 1 exactly where the claim's check fails. Theorem 4.1: smoothness (16), strong
  convexity (22), (29) ||g||^2 <= 2L (excess), and Cauchy-Schwarz (18)-(20) (exact on the
  empirical measure of the draws). Theorem B.1: (16), (47)-(49), and, with
  :math:`a = \mathcal A_k(S_k) - \theta^\star(S'_k)`, :math:`b = \theta^\star(S'_k) -
  \mathcal A_k(S'_k)` (:math:`\theta^\star(S'_k)` the ERM of :math:`S'_k`), (40) with (46)
  :math:`\|a + b\|^2 \le 2(\|a\|^2 + \|b\|^2)` (printed as "=", an inequality) and strong
  convexity at the minimiser of :math:`R_{S'_k}` for a and for b ((41)-(44)). On ridge the
  constants are the extreme eigenvalues of the per-sample Hessian, so (16), (22) and (29)
  are tight: one sample per client (or d = 1) makes (16) and (29) exact, fewer samples than
  dimensions (or lambda >> 1) makes (22) nearly so; a search reaches 1 from below there;
- an **expectation** step (Monte Carlo: (21)-(22), (45)) is ``(E lhs - 5 SE) / E rhs``, the
  SE that of the per-draw difference lhs - rhs (``K_FAMILY`` = 5, the claims' family
  multiple): above 1 only for a violation significant at 5 SE;
- an **identity in expectation** (exchangeability (35), E excess = D_k; (50),
  E excess = E(delta_k + eps_k)) is ``|E(lhs - rhs)| / (5 SE)``, the claim's own residual
  over its own tolerance. (45) and (50) are attacked under both readings of eps_k: as
  printed, on :math:`S'_k`, and as meant, on :math:`S_k` (equal in expectation).

The engine holds one surface per claim, so a claim's surface is the largest of its steps'
ratios at a point: every step is evaluated at every point the search visits (all steps read
the same draws), and :func:`thm41_step_ratios` / :func:`b1_step_ratios` name the step a
witness breaks. Since the tight per-draw steps sit at their supremum 1 at the corners (the
first starts), a search that climbs the largest ratio would stay there and learn nothing of
the other steps; the search is therefore differential evolution, whose first generation (a
Latin hypercube larger than the budget) spreads the evaluations over the whole domain after
the corners and the claim's own cells: a space-filling design on which every step is
evaluated. Every evaluation draws its datasets (and batch plans) from one fixed seed
(common random numbers): the ratio is a deterministic function of the point and a witness
replays exactly.

The spaces are the theorems' hypothesis domains on ridge on the sphere (mu = lambda,
L = 1 + lambda exactly): dimension 1..8, K up to 16 clients, any weights on the simplex
(uniform and Dirichlet(1) draws among the starts), lambda over five decades, label noise from
0, heterogeneity zeta from 0 (iid) to 3. Theorem 4.1 adds unequal n_k (a spread around n)
down to one sample; Theorem B.1 adds batch 1..n, tau 1..20, the step eta L from 0.01 to 3
(the theorem sets no step-size condition: past eta L = 2 the local iterates may grow, and
eps_k with them) and any common starting point, with equal n_k (the local SGD reads the
samples themselves, kept for equal n only). A point is judged by the claim's result
hypotheses (``instance=``).
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import Box, Integers, Simplex, attack_surface
from flbounds.theory.data_models import RidgeModel
from flbounds.theory.generalization import one_round_batch, one_round_draws
from flbounds.theory.generalization_rounds import batch_plan, ridge_local_sgd

from .instances import K_FAMILY
from .thm4_1.attacks import MC_SEED
from .thm4_1.claims import ROUNDING

#: the largest dimension, number of clients and samples per client searched
D_MAX, K_MAX, N_MAX = 8, 16, 40
#: the largest number of local steps searched (Theorem B.1)
TAU_MAX = 20
#: dataset draws per evaluation
N_DRAWS = 200
#: the factors of the right sides (and of eps_k in (50)), named for planted-defect tests
FACTORS = {"smooth": 0.5, "sc": 0.5, "pl": 2.0, "v_erm": 2.0, "v_sgd": 4.0, "parallelogram": 2.0,
           "eps_50": 1.0}
STEPS_WHY = ("none beyond each step's ratio: per-draw steps carry the claim's rounding "
             "allowance (1e-10 x the risk scale) in their right side, expectation steps the "
             "5-SE limit of the per-draw difference, identities their 5-SE residual")

COMMON = {"dim": Integers(1, D_MAX), "base": Box(-2, 2, shape=D_MAX),
          "u_seed": Integers(0, 10**6), "zeta": Box(0, 3), "n_clients": Integers(1, K_MAX),
          "w": Simplex(K_MAX, floor=1e-3), "n_samples": Integers(1, N_MAX),
          "lam": Box(1e-3, 100, log=True), "noise": Box(0, 3)}
THM41_SPACE = {**COMMON, "spread": Box(0, 1)}
B1_SPACE = {**COMMON, "batch_frac": Box(0, 1), "tau": Integers(1, TAU_MAX),
            "step_frac": Box(0.01, 3.0, log=True), "start": Box(-3, 3, shape=D_MAX)}


# ---- step ratios (shared with Theorem B.1's surface) ----

def risk_scale(dr) -> float:
    """The claims' size of the risks involved: 1 + max|loo| + max excess + max ||g||^2."""
    return 1.0 + float(np.max(np.abs(dr.loo)) + np.max(dr.excess_copy) + np.max(dr.g_sq))


def per_draw_ratio(lhs, rhs, allowance: float) -> float:
    """max over draws and clients of lhs / (rhs + allowance): above 1 where lhs > rhs +
    allowance, the claim's per-draw failure."""
    return float(np.max(np.asarray(lhs) / (np.asarray(rhs) + allowance)))


def mc_ratio(lhs, rhs, allowance: float) -> float:
    """Largest over clients of (E lhs - 5 SE) / E rhs, the SE that of the per-draw difference:
    written 1 + (E(lhs - rhs) - 5 SE - allowance) / max(|E rhs|, allowance), which is that
    quotient where E rhs > 0 and keeps the sign of the test elsewhere."""
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    diff = lhs - rhs
    m, se = diff.mean(0), diff.std(0, ddof=1) / np.sqrt(diff.shape[0])
    scale = np.maximum(np.abs(rhs.mean(0)), allowance)
    return float(np.max(1.0 + (m - K_FAMILY * se - allowance) / scale))


def identity_ratio(lhs, rhs, allowance: float) -> float:
    """Largest over clients of |E(lhs - rhs)| / (5 SE + allowance): an identity in
    expectation, its residual over the claim's tolerance."""
    diff = np.asarray(lhs) - np.asarray(rhs)
    m, se = diff.mean(0), diff.std(0, ddof=1) / np.sqrt(diff.shape[0])
    return float(np.max(np.abs(m) / (K_FAMILY * se + allowance)))


def shared_steps(dr, L: float, allowance: float, pl_ref: str = "(29)") -> dict:
    """The per-draw steps Theorems 4.1 and B.1 share: smoothness (16),
    loo - <g, v> <= (L/2)||v||^2, and ``pl_ref`` ((29); (47)-(49) in B.1),
    ||g||^2 <= 2L (excess)."""
    return {"(16) smoothness per draw": per_draw_ratio(
                dr.loo - dr.g_dot_v, FACTORS["smooth"] * L * dr.v_sq, allowance),
            f"{pl_ref} ||g||^2 <= 2L excess per draw": per_draw_ratio(
                dr.g_sq, FACTORS["pl"] * L * dr.excess_copy, allowance)}


def _model(*, dim, base, u_seed, zeta, n_clients, lam, noise):
    """Ridge on the sphere in dimension ``dim``, client optima base + zeta u_k (u from u_seed)."""
    u = np.random.default_rng(u_seed).standard_normal((n_clients, dim))
    return RidgeModel(np.asarray(base)[:dim] + zeta * u, noise, lam)


def _weights(w, n_clients):
    w = np.asarray(w, dtype=float)[:n_clients]
    return w / w.sum()


def _dirichlet(seed):
    return np.random.default_rng(seed).dirichlet(np.ones(K_MAX))


# ---- Theorem 4.1 ----

def _sizes(n_samples, spread, n_clients):
    """n_k spread linearly over [n (1 - spread), n (1 + spread)], at least one sample."""
    if n_clients == 1:
        return int(n_samples)
    grid = np.linspace(1.0 - spread, 1.0 + spread, n_clients)
    return np.maximum(np.round(grid * n_samples), 1).astype(int)


def _thm41_instance(*, dim, base, u_seed, zeta, n_clients, w, n_samples, spread, lam, noise):
    """Theorem 4.1's hypotheses at a point: the ridge model, the weights, local ERMs."""
    return dict(model=_model(dim=dim, base=base, u_seed=u_seed, zeta=zeta, n_clients=n_clients,
                             lam=lam, noise=noise),
                w=_weights(w, n_clients), local="erm")


def thm41_step_ratios(*, dim, base, u_seed, zeta, n_clients, w, n_samples, spread, lam,
                      noise, n_draws=N_DRAWS) -> dict:
    """Each step of the proof of Theorem 4.1 -> its ratio at one point (see the module)."""
    model = _model(dim=dim, base=base, u_seed=u_seed, zeta=zeta, n_clients=n_clients,
                   lam=lam, noise=noise)
    weights = _weights(w, n_clients)
    dr = one_round_draws(model, weights, _sizes(n_samples, spread, n_clients), n_draws,
                         np.random.default_rng(MC_SEED))
    allowance = ROUNDING * risk_scale(dr)
    diff_sq = dr.v_sq / weights ** 2              # ||A_k(S_k) - A_k(S'_k)||^2, from (21)
    # R_{S'_k}(A_k(S_k)) - R_{S'_k}(A_k(S'_k)): the library's slack plus what it subtracted
    sc_rhs = dr.sc_slack + 0.5 * model.mu * diff_sq
    cs_lhs = dr.g_dot_v.mean(0)
    cs_rhs = np.sqrt(dr.g_sq.mean(0) * dr.v_sq.mean(0))
    return {**shared_steps(dr, model.L, allowance),
            "(22) strong convexity per draw": per_draw_ratio(
                FACTORS["sc"] * model.mu * diff_sq, sc_rhs, allowance),
            "(18)-(20) Cauchy-Schwarz": per_draw_ratio(cs_lhs, cs_rhs, allowance),
            "(21)-(22) E||v||^2 <= 2K(k)^2 G_k/mu": mc_ratio(
                dr.v_sq, FACTORS["v_erm"] * weights ** 2 * dr.local_gap / model.mu, allowance),
            "(35) E excess = D_k": identity_ratio(dr.excess_copy, dr.nonid, allowance)}


def _thm41_fixed():
    """The claim's own cells (d = 5, n = 40, uniform K, lambda in {0.1, 1}, K in {2, 8},
    zeta in {0, 1}) and the corners: one sample per client, fewer samples than dimensions,
    16 clients with Dirichlet(1) weights and unequal n_k, lambda and the noise at their
    limits."""
    base = np.full(D_MAX, 0.5)
    uniform = np.full(K_MAX, 1.0 / K_MAX)
    own = [dict(dim=5, base=base, u_seed=0, zeta=z, n_clients=k, w=uniform, n_samples=40,
                spread=0.0, lam=lam, noise=1.0)
           for lam in (0.1, 1.0) for k in (2, 8) for z in (0.0, 1.0)]
    corners = [dict(dim=5, base=base, u_seed=1, zeta=1.0, n_clients=4, w=uniform, n_samples=1,
                    spread=0.0, lam=0.1, noise=1.0),
               dict(dim=D_MAX, base=base, u_seed=2, zeta=0.5, n_clients=K_MAX, w=_dirichlet(3),
                    n_samples=3, spread=0.5, lam=1e-3, noise=0.0),
               dict(dim=1, base=base, u_seed=4, zeta=3.0, n_clients=K_MAX, w=_dirichlet(5),
                    n_samples=N_MAX, spread=1.0, lam=100.0, noise=3.0)]
    return own + corners


@attack_surface("fedals.thm41.proof_steps", space=THM41_SPACE, tolerance=0.0,
                # full budget: seeds 0 and 1 at 350 evaluations reach 1 - 1.0e-10 (both), within
                # 1e-3 of it from evaluation 1 (a corner); 120 is far above twice that, to keep a
                # space-filling design on which every step is evaluated
                budget={"quick": 40, "full": 120},
                tolerance_why=STEPS_WHY, method="de",
                instance=_thm41_instance, fixed=_thm41_fixed,
                note="space-filling (DE's first generation) after the corners; ridge on the "
                     f"sphere, d 1..{D_MAX}, K <= {K_MAX}, weights on the simplex, "
                     f"n_k 1..{2 * N_MAX} (spread), lambda 1e-3..100, noise 0..3, zeta 0..3; "
                     f"{N_DRAWS} draws; the largest of the steps' ratios (16), (22), (29), "
                     "(18)-(20) per draw, (21)-(22) at 5 SE, (35) residual over 5 SE")
def thm41_steps(**point):
    """The largest ratio over the steps of Theorem 4.1's proof (:func:`thm41_step_ratios`)."""
    return max(thm41_step_ratios(**point).values())


# ---- Theorem B.1 ----

def _b1_instance(*, dim, base, u_seed, zeta, n_clients, w, n_samples, batch_frac, tau,
                 step_frac, start, lam, noise):
    """Theorem B.1's hypotheses at a point: the ridge model, the weights, tau local SGD steps."""
    return dict(model=_model(dim=dim, base=base, u_seed=u_seed, zeta=zeta, n_clients=n_clients,
                             lam=lam, noise=noise),
                w=_weights(w, n_clients), local="sgd", local_steps=tau)


def _sq(x):
    return np.einsum("tki,tki->tk", x, x)


def b1_step_ratios(*, dim, base, u_seed, zeta, n_clients, w, n_samples, batch_frac, tau,
                   step_frac, start, lam, noise, n_draws=N_DRAWS) -> dict:
    """Each step of the proof of Theorem B.1 -> its ratio at one point (see the module)."""
    model = _model(dim=dim, base=base, u_seed=u_seed, zeta=zeta, n_clients=n_clients, lam=lam,
                   noise=noise)
    weights = _weights(w, n_clients)
    rng = np.random.default_rng(MC_SEED)
    data = model.sample(rng, n_draws, n_samples)
    copy = model.sample(rng, n_draws, n_samples)
    batch = 1 + int(round(batch_frac * (n_samples - 1)))
    step = step_frac / model.L
    theta0 = np.broadcast_to(np.asarray(start, dtype=float)[:dim], (n_draws, n_clients, dim))

    def local(d):
        plan = batch_plan(rng, n_draws, n_clients, n_samples, tau, batch)
        return ridge_local_sgd(model, d, plan, step=step, start=theta0)

    theta, theta_c = local(data), local(copy)
    dr = one_round_batch(model, weights, data, copy, theta, theta_c)
    allowance = ROUNDING * risk_scale(dr)
    star_c = model.erm(copy)
    a, b = theta - star_c, star_c - theta_c
    min_c = model.empirical_risk(copy, star_c)
    eps_c = model.empirical_risk(copy, theta_c) - min_c
    mu = model.mu
    # eps_k as printed, on S'_k, and as meant, on S_k (equal in expectation): both readings
    readings = {"S_k": dr.opt_error, "S'_k (as printed)": eps_c}
    return {**shared_steps(dr, model.L, allowance, pl_ref="(47)-(49)"),
            "(40), (46) ||a + b||^2 <= 2(||a||^2 + ||b||^2) per draw": per_draw_ratio(
                _sq(a + b), FACTORS["parallelogram"] * (_sq(a) + _sq(b)), allowance),
            "(41)-(44) strong convexity at the ERM of S'_k per draw": per_draw_ratio(
                FACTORS["sc"] * mu * _sq(a), model.empirical_risk(copy, theta) - min_c,
                allowance),
            "(41)-(44) (mu/2)||b||^2 <= eps_k(S'_k) per draw": per_draw_ratio(
                FACTORS["sc"] * mu * _sq(b), eps_c, allowance),
            **{f"(45) E||v||^2 <= (4K(k)^2/mu) E(Delta_k + 2 eps_k), eps_k on {on}": mc_ratio(
                dr.v_sq, FACTORS["v_sgd"] * weights ** 2 * (dr.local_gap + 2 * eps) / mu,
                allowance) for on, eps in readings.items()},
            **{f"(50) E excess = E(delta_k + eps_k), eps_k on {on}": identity_ratio(
                dr.excess_copy, dr.nonid + FACTORS["eps_50"] * eps, allowance)
               for on, eps in readings.items()}}


def _b1_fixed():
    """The claim's own cells (d = 5, K = 4 uniform, n = 40, b = 8, eta = 0.5, from 0,
    lambda = 0.1, tau in {1, 5, 20}, zeta in {0, 1}) and the corners: one sample, 16 clients
    with Dirichlet(1) weights, a step past 2/L, lambda at its limits."""
    base, zero = np.full(D_MAX, 0.5), np.zeros(D_MAX)
    uniform = np.full(K_MAX, 1.0 / K_MAX)
    w4 = np.r_[np.full(4, 0.25), np.zeros(K_MAX - 4)]
    dirichlet = _dirichlet(3)
    own = [dict(dim=5, base=base, u_seed=0, zeta=z, n_clients=4, w=w4, n_samples=N_MAX,
                batch_frac=7 / (N_MAX - 1), tau=tau, step_frac=0.5 * 1.1, start=zero, lam=0.1,
                noise=1.0)
           for z in (0.0, 1.0) for tau in (1, 5, TAU_MAX)]
    corners = [dict(dim=5, base=base, u_seed=1, zeta=1.0, n_clients=4, w=uniform, n_samples=1,
                    batch_frac=0.0, tau=TAU_MAX, step_frac=1.0, start=zero, lam=0.1,
                    noise=1.0),
               dict(dim=D_MAX, base=base, u_seed=2, zeta=0.5, n_clients=K_MAX, w=dirichlet,
                    n_samples=3, batch_frac=0.5, tau=10, step_frac=2.9, start=np.ones(D_MAX),
                    lam=1e-3, noise=0.0),
               dict(dim=1, base=base, u_seed=4, zeta=3.0, n_clients=K_MAX, w=dirichlet,
                    n_samples=N_MAX, batch_frac=1.0, tau=1, step_frac=0.01, start=zero,
                    lam=100.0, noise=3.0)]
    return own + corners


@attack_surface("fedals.thmB1.proof_steps", space=B1_SPACE, tolerance=0.0,
                # full budget: seeds 0 and 1 at 160 evaluations reach 1 - 1.0e-10 (both), within
                # 1e-3 of it from evaluation 1 (a corner); 80 is far above twice that, to keep a
                # space-filling design on which every step is evaluated
                budget={"quick": 20, "full": 80},
                tolerance_why=STEPS_WHY, method="de",
                instance=_b1_instance, fixed=_b1_fixed,
                note="space-filling (DE's first generation) after the corners; ridge on the "
                     f"sphere, d 1..{D_MAX}, K <= {K_MAX}, weights on the simplex, "
                     f"n 1..{N_MAX}, batch 1..n, tau 1..{TAU_MAX}, eta L 0.01..3, any start, "
                     f"lambda 1e-3..100, noise 0..3, zeta 0..3; {N_DRAWS} draws; the largest "
                     "of the steps' ratios (40), (41)-(44), (16), (47)-(49) per draw, (45) at "
                     "5 SE, (50) residual over 5 SE")
def thmB1_steps(**point):
    """The largest ratio over the steps of Theorem B.1's proof (:func:`b1_step_ratios`)."""
    return max(b1_step_ratios(**point).values())
