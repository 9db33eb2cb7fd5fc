r"""Attack surfaces of SubTrunc's Monte Carlo claims. Lemma 3's (61) is attacked exactly on
quadratics (:func:`lemma3_exact_lhs`: second moments propagated through the noise). The
stochastic-greedy guarantee (eq. (17) with [33]) is a Monte Carlo mean attacked with common
random numbers: every evaluation draws its sampling plans from one fixed seed (the ratio is a
deterministic function of the point; a witness replays), and the bound is compared with the
*upper* 5-standard-error limit of the mean greedy/OPT ratio, so a ratio above 1 is a
shortfall significant at 5 SE. The space: W of eq. (13) on searched client points and
losses, n up to 10 (OPT by brute force), the budget 1 <= k <= n and the sample size
1 <= r <= n (the hypotheses reject the rest), lam and b.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from flbounds.falsify import Box, Integers, attack_surface
from flbounds.selection import brute_force_max, stochastic_greedy, stochastic_greedy_plan

from .assumptions import gaussian_noise
from .attacks import _w_instance
from .lemma3 import eq61_rhs
from .sec3c import E_BOUND

MC_SEED = 20261129
N_MAX, N_DRAWS = 10, 100
#: SubTrunc's family-wise multiple of standard errors (as FedALS's K_FAMILY)
K_SE = 5.0


def _stochastic_instance(*, points, n, k, r, losses, lam, b):
    """Sec. III-C's ``stochastic`` hypotheses at a point: W, 1 <= k <= n, 1 <= r <= n."""
    return dict(_w_instance(points=points, n=n, k=k, losses=losses, lam=lam, b=b), r=r)


def stochastic_ratio(f, k, r, n_draws=N_DRAWS, seed=MC_SEED):
    """(1 - 1/e - exp(-r k/n)) over the upper 5-SE limit of the mean of W(S)/OPT over
    ``n_draws`` sampling plans drawn from ``seed``."""
    opt, _ = brute_force_max(f, k)
    rng = np.random.default_rng(seed)
    ratios = np.array([f.value(stochastic_greedy(
        f, k, sample_size=r, keys=stochastic_greedy_plan(rng, f.n, k))) / opt
        for _ in range(n_draws)])
    upper = ratios.mean() + K_SE * ratios.std(ddof=1) / np.sqrt(n_draws)
    return stochastic_bound(r, k, f.n) / upper


def stochastic_bound(r, k, n):
    """[33]'s guarantee on E W(S)/OPT: 1 - 1/e - exp(-r k/n)."""
    return E_BOUND - np.exp(-r * k / n)


@attack_surface("subtrunc.greedy.stochastic",
                space={"points": Box(-3, 3, shape=(N_MAX, 3)), "n": Integers(2, N_MAX),
                       "k": Integers(1, N_MAX), "r": Integers(1, N_MAX),
                       "losses": Box(0, 5, shape=N_MAX), "lam": Box(0, 5),
                       "b": Box(0.05, 2)},
                instance=_stochastic_instance, tolerance=0.0,
                tolerance_why="none beyond the ratio itself: the mean's upper 5-SE limit",
                budget={"quick": 60, "full": 300},
                fixed=[{"points": np.eye(N_MAX, 3), "n": 6, "k": 3, "r": s,
                        "losses": np.ones(N_MAX), "lam": 1.0, "b": 1.1} for s in (1, 3, 6)],
                note=f"W of (13), n <= {N_MAX}, 1 <= k, r <= n, lam 0..5, b 0.05..2; "
                     f"{N_DRAWS} plans per point, mean at its upper 5-SE limit")
def stochastic(*, points, n, k, r, losses, lam, b):
    """The guarantee over the mean stochastic-greedy ratio's upper 5-SE limit."""
    f = _w_instance(points=points, n=n, k=k, losses=losses, lam=lam, b=b)["objective"]
    return stochastic_ratio(f, int(k), int(r))


# ---- Lemma 3, eq. (61), exact on quadratics ----

def lemma3_exact_lhs(eig, w0, step, local_steps, sigma2):
    """E||grad f(w_t)||^2, t = 0..E-1, for f(w) = w^T diag(eig) w / 2 (indefinite allowed) and
    local SGD w_{t+1} = w_t - step (grad f(w_t) + xi_t), xi_t ~ N(0, sigma2/d I): the mean
    (1 - step a_j)^t w0_j and the variance v_{t+1} = (1 - step a_j)^2 v_t + step^2 sigma2/d
    of each coordinate, exactly (isotropic noise, so a diagonal A loses no generality)."""
    eig, mean = np.asarray(eig, dtype=float), np.asarray(w0, dtype=float).copy()
    var, contraction = np.zeros_like(mean), 1 - step * eig
    out = []
    for _ in range(local_steps):
        out.append(float(np.sum(eig ** 2 * (mean ** 2 + var))))
        mean, var = contraction * mean, contraction ** 2 * var + step ** 2 * sigma2 / eig.size
    return np.array(out)


def _lemma3_eig(eig):
    eig = np.asarray(eig, dtype=float)
    top = np.max(np.abs(eig))
    return eig / top if top > 0 else np.eye(1, eig.size)[0]


def _lemma3_instance(*, eig, w0, local_steps, step_frac, sigma2):
    """Lemma 3's hypotheses at a point: f is 1-smooth (eigenvalues scaled to max |a_j| = 1),
    Gaussian noise, eta = step_frac/(3 L E) (step_frac > 1 is outside)."""
    return dict(problem=SimpleNamespace(L=1.0), L=1.0, step=step_frac / (3 * local_steps),
                local_steps=local_steps, **gaussian_noise(sigma2))


@attack_surface("subtrunc.lemma3.local_growth",
                # full budget: seeds 0 and 1 at 3000 evaluations reach 0.6194842435 / 0.6194562637,
                # within 1e-3 of it from evaluation 1350 / 938; 2700 >= twice that
                budget={"quick": 300, "full": 2700},
                space={"eig": Box(-1, 1, shape=5), "w0": Box(-3, 3, shape=5),
                       "local_steps": Integers(1, 20), "step_frac": Box(0.01, 1.5),
                       "sigma2": Box(1e-3, 10, log=True)},
                instance=_lemma3_instance, tolerance=1e-12,
                tolerance_why="rounding: sums of <= 20 positive float64 terms",
                fixed=[{"eig": [1.0, 0.5, 0.0, -0.5, -1.0], "w0": np.zeros(5),
                        "local_steps": e, "step_frac": 1.0, "sigma2": 1.0} for e in (1, 5, 10)],
                note="quadratics in d = 5 with eigenvalues in [-1, 1] (indefinite), any w_k, "
                     "E <= 20, eta up to 1/(3 L E) (1.5 x that rejected), sigma^2 over 4 "
                     "decades; exact second moments")
def lemma3_quadratic(*, eig, w0, local_steps, step_frac, sigma2):
    """max over tau <= E of sum_{t<tau} E||grad f(w_t)||^2 over (61)'s right side."""
    eig = _lemma3_eig(eig)
    step = step_frac / (3 * local_steps)
    cum = np.cumsum(lemma3_exact_lhs(eig, w0, step, local_steps, sigma2))
    g0 = float(np.sum((eig * np.asarray(w0)) ** 2))
    taus = np.arange(1, local_steps + 1)
    return float(np.max(cum / eq61_rhs(taus, g0, sigma2)))
