r"""Attack surface of SubTrunc's stochastic-greedy guarantee (eq. (17) with [33]), a Monte
Carlo mean attacked with common random numbers: every evaluation draws its sampling plans from
one fixed seed (the ratio is a deterministic function of the point; a witness replays), and
the bound is compared with the *upper* 5-standard-error limit of the mean greedy/OPT ratio, so
a ratio above 1 is a shortfall significant at 5 SE (``SE_RULE_FAMILY``). The space: W of
eq. (13) on searched client points and losses, n up to 10 (OPT by brute force), the budget
1 <= k <= n and the sample size 1 <= r <= n (the hypotheses reject the rest), lam and b.
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import Box, Integers, attack_surface
from flbounds.selection import brute_force_max, stochastic_greedy, stochastic_greedy_plan

from .attacks import _w_instance
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
