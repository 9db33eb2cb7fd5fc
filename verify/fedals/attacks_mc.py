r"""Attack surfaces of FedALS's corrected Remark 4.2 bounds (Cases I and II), Monte Carlo
quantities attacked as ``fedals.thm41.bound`` is: each evaluation draws its datasets and
participant plans from a generator with a fixed seed (common random numbers, so the ratio is a
deterministic function of the point and a witness replays exactly) and compares the gap's
*lower* 5-standard-error limit (``K_FAMILY``) with the bound: a ratio above 1 is a violation
significant at 5 SE. The space is Remark 4.2's domain for uniform K: K up to 16 clients, K_hat
up to 16 draws (Case II: K_hat <= K, the hypothesis rejects the rest), non-iidness zeta from 0
(iid) to 3, lambda over three decades and n down to d + 2 samples. A point is judged by the
claim's own result hypotheses (``instance=``).
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import Box, Integers, attack_surface
from flbounds.theory.data_models import RidgeModel
from flbounds.theory.generalization import summarize_bound

from ._local_sgd import _avg_se, _b1_runs
from .instances import DIM, K_FAMILY, NOISE_SD
from .remark4_2.case1 import _bound as _bound72
from .remark4_2.case1 import _common, _instance, _weight_moment
from .remark4_2.case2 import _bound73, _case2_instance, _case2_terms
from .thm4_1.attacks import MC, MC_SEED
from .thm4_1.logistic import _logistic_cell, _logistic_pool
from .thm4_3 import attacks as ROUNDS

K_MAX = 16
#: dataset and plan draws per evaluation
N_DRAWS = 400
SPACE = {"n_clients": Integers(1, K_MAX), "n_participants": Integers(1, K_MAX),
         "zeta": Box(0, 3), "lam": Box(0.01, 10, log=True),
         "n_samples": Integers(DIM + 2, 60)}


def _case1_instance(*, n_clients, n_participants, zeta, lam, n_samples):
    """Remark 4.2's Case I hypotheses at a point (uniform K over ``n_clients``)."""
    rng = np.random.default_rng(MC_SEED)    # the model _common and _case2_terms draw first
    model = RidgeModel(rng.standard_normal(DIM) + zeta * rng.standard_normal((n_clients, DIM)),
                       NOISE_SD, lam)
    return _instance(model, np.full(n_clients, 1.0 / n_clients), n_participants)


@attack_surface("fedals.remark42.case1_bound", space=SPACE, tolerance=0.0, tolerance_why=MC,
                budget={"quick": 40, "full": 200}, instance=_case1_instance,
                fixed=[{"n_clients": 2, "n_participants": 16, "zeta": 0.0, "lam": 1.0,
                        "n_samples": 40}],
                note="K, K_hat <= 16 (draws with replacement), zeta 0..3, lambda 0.01..10, "
                     f"n >= d + 2; {N_DRAWS} draws per point, gap at its lower 5-SE limit")
def case1(*, n_clients, n_participants, zeta, lam, n_samples):
    """(out-of-sample gap - 5 SE) over the corrected Case I bound (E w^3, E w^2, D^w)."""
    params = dict(n_clients=n_clients, n_participants=n_participants, zeta=zeta, lam=lam,
                  n_samples=n_samples, n_draws=N_DRAWS)
    model, weights, _, oos, G, G_se, D = _common(np.random.default_rng(MC_SEED), params)
    first = np.array([_weight_moment(p, n_participants, 3) for p in weights])
    second = np.array([_weight_moment(p, n_participants, 2) for p in weights])
    bound, bound_se = _bound72(G, G_se, D["w2_weighted"], first, second, model.L / model.mu)
    se = float(np.hypot(oos.std(ddof=1) / np.sqrt(N_DRAWS), bound_se))
    return (float(oos.mean()) - K_FAMILY * se) / bound


def _case2_point_instance(*, n_clients, n_participants, zeta, lam, n_samples):
    """Remark 4.2's Case II hypotheses at a point (K_hat > K fails ``case_II``)."""
    return _case2_instance(_case1_instance(n_clients=n_clients, n_participants=1, zeta=zeta,
                                           lam=lam, n_samples=n_samples)["model"],
                           n_clients, n_participants)


@attack_surface("fedals.remark42.case2_bound", space=SPACE, tolerance=0.0, tolerance_why=MC,
                budget={"quick": 40, "full": 120}, instance=_case2_point_instance,
                fixed=[{"n_clients": 10, "n_participants": 2, "zeta": 1.0, "lam": 0.1,
                        "n_samples": 40}],
                note="K <= 16, K_hat <= K (uniform subsets), zeta 0..3, lambda 0.01..10, "
                     f"n >= d + 2; {N_DRAWS} draws per point, gap at its lower 5-SE limit")
def case2(*, n_clients, n_participants, zeta, lam, n_samples):
    """(out-of-sample gap - 5 SE) over bound (73) with D conditional on participation."""
    terms = _case2_terms(np.random.default_rng(MC_SEED), n_clients, n_participants, zeta, lam,
                         n_samples, N_DRAWS)
    bound, bound_se, _, _ = _bound73(terms, n_participants, terms["D_part"])
    se = float(np.hypot(terms["oos"].std(ddof=1) / np.sqrt(N_DRAWS), bound_se))
    return (float(terms["oos"].mean()) - K_FAMILY * se) / bound


# ---- Theorem B.1 (one round after tau local mini-batch SGD steps) ----

B1_SPACE = {"n_clients": Integers(1, K_MAX), "zeta": Box(0, 3), "lam": Box(0.01, 10, log=True),
            "n_samples": Integers(DIM + 2, 60), "batch_frac": Box(0, 1),
            "step": Box(0.01, 1.5, log=True), "tau": Integers(1, 20)}


def _b1_batch(n_samples, batch_frac):
    return 1 + int(round(batch_frac * (n_samples - 1)))


#: draws per evaluation of Thm B.1 (each costs a pilot of 200 draws too: ~1 s per point)
B1_DRAWS = 200


def _b1_cell(*, n_clients, zeta, lam, n_samples, batch_frac, step, tau):
    (run,) = _b1_runs(np.random.default_rng(MC_SEED), n_draws=B1_DRAWS, n_clients=n_clients,
                      n_samples=n_samples, lam=lam, batch_size=_b1_batch(n_samples, batch_frac),
                      step=step, local_steps=[tau], zeta=[zeta])
    return run


def _b1_instance(**point):
    """Thm B.1's hypotheses at a point: the model (drawn as ``_b1_runs`` draws it), uniform
    K, tau local SGD steps."""
    rng = np.random.default_rng(MC_SEED)
    base = rng.standard_normal(DIM)
    model = RidgeModel(base + point["zeta"] * rng.standard_normal((point["n_clients"], DIM)),
                       NOISE_SD, point["lam"])
    return dict(model=model, w=np.full(point["n_clients"], 1.0 / point["n_clients"]),
                local="sgd", local_steps=point["tau"])


@attack_surface("fedals.thmB1.bound", space=B1_SPACE, tolerance=0.0, tolerance_why=MC,
                budget={"quick": 12, "full": 45}, instance=_b1_instance,
                fixed=[{"n_clients": 4, "zeta": 1.0, "lam": 0.1, "n_samples": 40,
                        "batch_frac": 7 / 39, "step": 0.5, "tau": t} for t in (1, 20)],
                note="K <= 16 clients, zeta 0..3, lambda 0.01..10, n >= d + 2, batch 1..n, "
                     f"step 0.01..1.5, tau 1..20; {B1_DRAWS} draws, gap at its lower 5-SE limit "
                     "(~1 s a point: a thin search)")
def thm_b1(*, n_clients, zeta, lam, n_samples, batch_frac, step, tau):
    """(gap - 5 SE) over bound (37) in one (zeta, tau) cell of the claim's simulator."""
    s = _b1_cell(n_clients=n_clients, zeta=zeta, lam=lam, n_samples=n_samples,
                 batch_frac=batch_frac, step=step, tau=tau)["summary"]
    return (s.gap - K_FAMILY * float(np.hypot(s.gap_se, s.bound_se))) / s.bound


# ---- Theorem 4.1 on L2-regularised logistic regression ----

LOGISTIC_DRAWS, LOGISTIC_POOL = 100, 500
LOGISTIC_SPACE = {"base": Box(-3, 3, shape=DIM), "n_clients": Integers(1, K_MAX),
                  "zeta": Box(0, 3), "lam": Box(0.01, 10, log=True),
                  "n_samples": Integers(DIM + 2, 60)}


def _logistic_point_instance(*, base, n_clients, zeta, lam, n_samples):
    """Thm 4.1's hypotheses at a point: the clients' finite pools (rebuilt from the seed the
    ratio uses), uniform K, local ERMs."""
    return dict(model=_logistic_pool(MC_SEED, base, n_clients, zeta, LOGISTIC_POOL, lam),
                w=np.full(n_clients, 1.0 / n_clients), local="erm")


@attack_surface("fedals.thm41.logistic_bound", space=LOGISTIC_SPACE, tolerance=0.0,
                tolerance_why=MC, budget={"quick": 8, "full": 25},
                instance=_logistic_point_instance,
                fixed=[{"base": [2.0, 0, 0, 0, 0], "n_clients": k, "zeta": z, "lam": 0.1,
                        "n_samples": 40} for k, z in ((1, 0.0), (4, 2.0))],
                note="the client optima base + zeta u_k (base searched in [-3, 3]^5), K <= 16, "
                     f"lambda 0.01..10, n >= d + 2; pools of {LOGISTIC_POOL}, "
                     f"{LOGISTIC_DRAWS} draws, gap at its lower 5-SE limit (Newton ERMs: ~2 s a "
                     "point, a thin search)")
def logistic(*, base, n_clients, zeta, lam, n_samples):
    """(gap - 5 SE) over Thm 4.1's bound, one cell of the claim's simulator."""
    cell = _logistic_cell(rng=np.random.default_rng(MC_SEED), n_draws=LOGISTIC_DRAWS,
                          n_samples=n_samples, lam=lam, pool_size=LOGISTIC_POOL,
                          base=np.asarray(base), pool_seed=MC_SEED, n_clients=n_clients,
                          zeta=zeta)
    row = cell["row"]
    return (row["gap"] - K_FAMILY * float(cell["se"])) / row["bound"]


# ---- (56) as printed (E(Delta + eps) under the root), on fedals.thm43.per_round_bound's space ----

EQ56_SPACE = {"base": Box(-2, 2, shape=DIM), "u": Box(-2, 2, shape=(ROUNDS.K_MAX, DIM)),
              "zeta": Box(0, 3), "n_clients": Integers(1, ROUNDS.K_MAX),
              "lam": Box(0.01, 10, log=True), "tau": Integers(1, 10),
              "batch_size": Integers(1, 8), "step_frac": Box(0.01, 1.0, log=True)}
EQ56_FIXED = [{"base": np.ones(DIM), "u": np.eye(ROUNDS.K_MAX, DIM), "zeta": 1.0,
               "n_clients": 4, "lam": 0.1, "tau": tau, "batch_size": 4, "step_frac": 0.5}
              for tau in (1, 10)]


@attack_surface("fedals.thm43.eq56_printed", space=EQ56_SPACE,
                tolerance=0.0, tolerance_why=MC, budget={"quick": 20, "full": 150},
                instance=ROUNDS._instance, fixed=EQ56_FIXED,
                note="the space of fedals.thm43.per_round_bound's attack (ridge, K <= 16, "
                     "tau 1..10, batch 1..8, step up to 1/L, R = 5 rounds, 100 draws), against "
                     "(56) as printed")
def eq56(*, base, u, zeta, n_clients, lam, tau, batch_size, step_frac):
    """(round-averaged gap - 5 SE) over the round-averaged printed (56)."""
    rng = np.random.default_rng(ROUNDS.MC_SEED)
    model = ROUNDS._model(base, u, zeta, n_clients, lam)
    w = np.full(n_clients, 1.0 / n_clients)
    corrected, draws = ROUNDS.bound_rounds(model, w, rng, local_steps=tau,
                                           batch_size=batch_size, step=step_frac / model.L)
    sums = [summarize_bound(dr, w, model.mu, model.L, rng, kind="eq56") for dr in draws]
    gap, gap_se = _avg_se(corrected)
    bound = float(np.mean([s.bound for s in sums]))
    bound_se = float(np.sqrt(np.mean([s.bound_se ** 2 for s in sums])))
    return (gap - K_FAMILY * float(np.hypot(gap_se, bound_se))) / bound
