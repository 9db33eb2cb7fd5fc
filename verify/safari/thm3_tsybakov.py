r"""Theorem 3 of SAFARI at beta_P = 1/2: threshold classification with Tsybakov label
noise, under covariate shift (the result and its hypotheses are :data:`verify.safari.thm3.THM3`).

Labels :math:`y = 1[x \ge t^*]` flipped with probability :math:`\eta(x) = (1 - |x - t^*|/s)/2`,
:math:`s = 0.6` (so :math:`\eta \in [0, 1/2]` on [0, 1] and the Bayes classifier is
:math:`h_{t^*}`, t* = 0.4), the same for server (x ~ P = U[0, 1]) and clients (x ~ D =
U[0.2, 0.6]): covariate shift, h*_Q = h*_P, condition (ii) holds with eps_P(h*_Q) = 0. Then
:math:`\epsilon_P(h_t) = \int |1 - 2\eta| = (t - t^*)^2/(2s)` and
:math:`P(h_t \ne h^*) = |t - t^*| = \sqrt{2s}\,\epsilon_P(h_t)^{1/2}`: Assumption 1 with
beta_P = 1/2, alpha_P = sqrt(2s) (computed on a grid for the instance). Theorem 3's rate is
then O~((1/n_T)^{1/(2 - 1/2)}) = O~(n_T^{-2/3}).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.theory.thresholds import erm_threshold

from ._thresholds import q90_slope_interval, theorem_rate_gate
from .thm3 import THM3, instances

T_STAR, SCALE, BETA_P = 0.4, 0.6, 0.5
CLIENT_LOW, CLIENT_HIGH = 0.2, 0.6


def tsybakov_labels(rng, x):
    """Labels 1[x >= t*] flipped with probability (1 - |x - t*|/s)/2."""
    y = (x >= T_STAR).astype(np.int64)
    flip = rng.random(x.shape) < 0.5 * (1 - np.abs(x - T_STAR) / SCALE)
    return np.where(flip, 1 - y, y)


def excess(t):
    """eps_P(h_t) = (t - t*)^2/(2s) on [0, 1] (exact)."""
    return (np.asarray(t) - T_STAR) ** 2 / (2 * SCALE)


def bernstein_alpha(points: int = 2001):
    """The smallest alpha_P with P(h_t != h*) <= alpha_P eps_P(h_t)^beta_P on a threshold grid
    of [0, 1] (exactly sqrt(2 s) = 1.095: the ratio is constant)."""
    grid = np.linspace(0.0, 1.0, points)
    t = grid[grid != T_STAR]
    return float(np.max(np.abs(t - T_STAR) / excess(t) ** BETA_P))


def _runs(rng, n_server, n_client, n_reps):
    """Per run: eps_P of pooled ERM and of server-only ERM, and condition (i)."""
    pooled, server, cond = np.empty(n_reps), np.empty(n_reps), np.empty(n_reps, dtype=bool)
    for k, r in enumerate(rng.spawn(n_reps)):
        xt = r.random(n_server)
        xs = r.uniform(CLIENT_LOW, CLIENT_HIGH, n_client)
        yt, ys = tsybakov_labels(r, xt), tsybakov_labels(r, xs)
        t_pool = erm_threshold(np.concatenate([xt, xs]), np.concatenate([yt, ys]))
        t_srv = erm_threshold(xt, yt)
        pooled[k], server[k] = excess(t_pool), excess(t_srv)

        def risk(t, x=xt, y=yt):
            return int(np.sum(y != (x >= t)))
        cond[k] = risk(t_pool) <= risk(T_STAR)
    return pooled, server, cond


@claim("safari.thm3.tsybakov_no_worse_than_centralized", ref="Thm 3, Lemma 2",
       kind="statement", expected="holds", result=THM3, parts=("rate",),
       statement="At beta_P = 1/2 (Tsybakov label noise, covariate shift so eps_P(h*_Q) = 0), on "
                 "the runs meeting condition (i), the 90% quantile of eps_P(pooled ERM) is no "
                 "larger than server-only ERM's and falls at least as fast as Theorem 3's rate "
                 "n_T^{-1/(2 - beta_P)} = n_T^{-2/3} allows (log factor included).",
       quick=dict(sizes=[30, 100, 300, 1000], ratio=10, n_reps=200, n_boot=200),
       full=dict(sizes=[30, 100, 300, 1000, 3000], ratio=10, n_reps=1000, n_boot=500))
def tsybakov_no_worse_than_centralized(*, rng, sizes, ratio, n_reps, n_boot):
    """n_S = ratio n_T. Condition (i) R_hat_T(ERM_Q) <= R_hat_T(h*_Q) is a property of the
    sample: Theorem 3 concludes only under it, so the quantiles are taken over the runs that
    meet it (their share per n_T is reported and is each instance's condition_i_share = 1 for
    the retained runs; all runs' quantiles are in details). Measured: q90(pooled | (i)) -
    q90(server-only) per n_T, <= 0 with 4 bootstrap SEs of the difference; and the lower end
    of the q90 slope's 95% bootstrap interval against :func:`theorem_rate_gate` at beta_P =
    1/2 (the least steep slope the rate allows from n_T = 30)."""
    kept, server, shares, all_pooled = [], [], [], []
    for n in sizes:
        pooled, srv, cond = _runs(rng.spawn(1)[0], n, ratio * n, n_reps)
        shares.append(float(cond.mean()))
        kept.append(pooled[cond])
        all_pooled.append(pooled)
        server.append(srv)
    q_kept = np.array([np.quantile(k, 0.9) for k in kept])
    q_srv = np.array([np.quantile(s_, 0.9) for s_ in server])
    boots = np.array([[np.quantile(k[rng.integers(0, k.size, k.size)], 0.9)
                       - np.quantile(s_[rng.integers(0, s_.size, s_.size)], 0.9)
                       for k, s_ in zip(kept, server, strict=True)] for _ in range(n_boot)])
    diff_tol = 4 * boots.std(axis=0, ddof=1)
    # the slope over runs meeting (i): equal counts per size for the row bootstrap
    n_min = min(k.size for k in kept)
    err = np.column_stack([k[:n_min] for k in kept])
    slope, (lo, hi) = q90_slope_interval(err, sizes, rng, n_boot)
    gate = theorem_rate_gate(float(min(sizes)), beta=BETA_P)
    alpha = bernstein_alpha()
    tol = Tolerance(np.concatenate([diff_tol, [0.0]]),
                    "4 bootstrap SEs (quantile differences); slope interval vs the rate gate",
                    "bootstrap of the 90% quantiles over runs; the slope's lower 95% end is "
                    "compared with the least steep slope of Theorem 3's rate")
    return Evidence(measured=list(q_kept - q_srv) + [lo], theoretical=[0.0] * len(sizes)
                    + [gate], relation="<=", tolerance=tol,
                    details={"q90_pooled_given_i": q_kept, "q90_server": q_srv,
                             "q90_pooled_all_runs": [float(np.quantile(p, 0.9))
                                                     for p in all_pooled],
                             "condition_i_share_all_runs": shares, "slope_q90": slope,
                             "slope_ci95": [lo, hi], "rate_gate": gate,
                             "rate_exponent": -1 / (2 - BETA_P), "bernstein_alpha": alpha,
                             "n_T": sizes},
                    instance=instances(sizes, eps_P_hQ=0.0, condition_i_share=[1.0] * len(sizes),
                                       beta_P=BETA_P, bernstein_alpha=alpha))
