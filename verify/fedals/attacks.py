r"""Attack surfaces of FedALS's partial-participation identities and one-round generalization
bounds ([001]).

Lemma C.1/C.2 are identities, attacked as residual / rounding tolerance (above 1 breaks the
identity). The generalization bounds are Monte Carlo quantities: each evaluation draws its
datasets from a generator with a fixed seed (common random numbers), so the ratio is a
deterministic function of the instance and a witness replays exactly, and it compares the
*lower* confidence limit of the gap, gap - 5 SE (``K_FAMILY``, the claims' family-wise
multiple), with the bound: a ratio above 1 is a violation significant at 5 standard errors,
which keeps false alarms rare over the thousands of evaluations of a search.
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import Box, Integers, Simplex, attack_surface
from flbounds.ledger import get
from flbounds.theory.data_models import RidgeModel
from flbounds.theory.generalization import one_round_draws, summarize_bound

from .iid_discussion import _iid_sweep
from .instances import DIM, K_FAMILY, NOISE_SD
from .partial import EPS, _case1_moments, _case1_targets

K_MAX = 5
#: seed of the common random numbers of the Monte Carlo ratios
MC_SEED = 20261125
IDENTITY = "the residual is already divided by the claim's rounding tolerance 8 K^K_hat eps sum|x|"
C1_SPACE = {"x": Box(-10, 10, shape=K_MAX), "w": Simplex(K_MAX, floor=1e-3),
            "n_clients": Integers(2, K_MAX), "n_participants": Integers(1, 3)}
C1_FIXED = [{"x": [0.3, -1.2, 0.8, 0.5, 0.0], "w": [0.1, 0.2, 0.3, 0.4, 0.0],
             "n_clients": 4, "n_participants": 2}]


def _c1_residual(x, w, n_clients, n_participants, merged):
    """max_j |moment_j - target_j| over 8 K^K_hat eps sum|x| (Lemma C.1, j = 0, 1, 2)."""
    x, w = x[:n_clients], w[:n_clients] / w[:n_clients].sum()
    got = _case1_moments(x, w, n_participants, merged=merged)
    tol = 8 * n_clients ** n_participants * EPS * float(np.abs(x).sum())
    return float(np.abs(got - _case1_targets(x, w, n_participants)).max()) / tol


@attack_surface("fedals.lemmaC1.per_instance", space=C1_SPACE, fixed=C1_FIXED,
                tolerance=0.0, tolerance_why=IDENTITY)
def lemma_c1(*, x, w, n_clients, n_participants):
    """Lemma C.1 per drawn instance (each draw weighted 1/K_hat)."""
    return _c1_residual(x, w, n_clients, n_participants, merged=False)


@attack_surface("fedals.lemmaC1.merged_duplicates", space=C1_SPACE, fixed=C1_FIXED,
                tolerance=0.0, tolerance_why=IDENTITY, shrink=True)
def lemma_c1_merged(*, x, w, n_clients, n_participants):
    """Lemma C.1 with a client drawn m times weighted m/K_hat (what averaging gives)."""
    return _c1_residual(x, w, n_clients, n_participants, merged=True)


def _participants_below(*, w, n_clients, n_participants, x_seed):
    return n_participants <= n_clients or "K_hat > K"


@attack_surface("fedals.lemmaC2.identities",
                space={"w": Simplex(8, floor=1e-3), "n_clients": Integers(2, 8),
                       "n_participants": Integers(1, 4), "x_seed": Integers(0, 10**6)},
                validator=_participants_below, tolerance=0.0,
                tolerance_why="the residual is already divided by the claim's tolerance",
                fixed=[{"w": [.1, .2, .3, .4, 0, 0, 0, 0], "n_clients": 4,
                        "n_participants": 2, "x_seed": 0}],
                note="the claim's own computation at weights w, x ~ N(0, I) from x_seed")
def lemma_c2(*, w, n_clients, n_participants, x_seed):
    """Lemma C.2's largest residual over its tolerance, from the claim function itself."""
    weights = (w[:n_clients] / w[:n_clients].sum()).tolist()
    ev = get("fedals.lemmaC2.identities").func(
        rng=np.random.default_rng(x_seed), n_clients=n_clients,
        n_participants=n_participants, weights=weights)
    residual = np.abs(np.asarray(ev.measured) - np.asarray(ev.theoretical)).max()
    return float(residual / ev.tolerance.value)


MC = ("none beyond the ratio itself: it uses the gap's lower 5-SE confidence limit, "
      "(gap - 5 SE)/bound")


@attack_surface("fedals.thm41.bound",
                space={"base": Box(-2, 2, shape=DIM), "u": Box(-2, 2, shape=(6, DIM)),
                       "zeta": Box(0, 3), "n_clients": Integers(1, 6),
                       "w": Simplex(6, floor=1e-2), "n_samples": Integers(DIM + 2, 60),
                       "lam": Box(0.01, 10, log=True)},
                tolerance=0.0, tolerance_why=MC, budget={"quick": 100, "full": 1000},
                fixed=[{"base": np.ones(DIM), "u": np.zeros((6, DIM)), "zeta": 0.0,
                        "n_clients": 4, "w": np.full(6, 1 / 6), "n_samples": 20,
                        "lam": 1.0}])
def thm41(*, base, u, zeta, n_clients, w, n_samples, lam):
    """Thm 4.1 on ridge: (gap - 5 SE) over the bound, 400 dataset draws per evaluation."""
    rng = np.random.default_rng(MC_SEED)
    model = RidgeModel(base + zeta * u[:n_clients], NOISE_SD, lam)
    weights = w[:n_clients] / w[:n_clients].sum()
    draws = one_round_draws(model, weights, n_samples, 400, rng)
    s = summarize_bound(draws, weights, model.mu, model.L, rng)
    return (s.gap - K_FAMILY * float(np.hypot(s.gap_se, s.bound_se))) / s.bound


@attack_surface("fedals.d1.sole_iid_term",
                space={"n_clients": Integers(2, 16), "n_samples": Integers(DIM + 2, 80),
                       "lam": Box(0.01, 10, log=True)},
                tolerance=0.0, tolerance_why=MC, budget={"quick": 40, "full": 200},
                shrink=True,
                fixed=[{"n_clients": k, "n_samples": 40, "lam": 1.0} for k in (2, 4, 8, 16)])
def sole_iid(*, n_clients, n_samples, lam):
    """The iid gap's lower 5-SE limit over the 'sole iid term' kappa G/K^2 (the claim's
    sweep, 200 draws)."""
    row = _iid_sweep(np.random.default_rng(MC_SEED), [n_clients], n_samples, lam, 200)[0]
    se = float(np.hypot(row["gap_se"], row["first_term_se"]))
    return (row["gap"] - K_FAMILY * se) / row["first_term"]
