r"""Shared machinery of the threshold claims of SAFARI (Theorems 1-3, Lemma 2, Figure 1, spec
V3-V4): the distributions, the sample-size sweeps of pooled ERM and the instances their
hypotheses read.

:math:`P = U[0,1]` (server data), participating distribution :math:`\mathcal D = U[0.2, 0.6]`
(client data). Target :math:`t^* = 0.4` has its decision boundary inside
:math:`\mathrm{supp}\,\mathcal D`; :math:`t^* = 0.8` outside it (the impossibility regime).
ERM is :func:`flbounds.theory.thresholds.erm_threshold` (leftmost minimising gap, midpoint).
Slopes are OLS on log-log means with a bootstrap over seeds (95% CI).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Tolerance
from flbounds.theory.thresholds import excess_error, pooled_erm_errors, uniform

CLIENT, SERVER = uniform(0.2, 0.6), uniform(0.0, 1.0)
CLIENT_DENSITY = 2.5   # density of D = U[0.2, 0.6] relative to P near an inner boundary
SLOPE_BAND = Tolerance(0.0, "spec V3 window", "rate exponent -1 +- 0.2 (log factors, finite n)")
#: how a fitted slope meets a theorem's rate gate: its bootstrap interval is compared
RATE_CI = Tolerance.exact("the lower end of the slope's 95% bootstrap interval is compared "
                          "with the theorem's gate: violated only if the whole interval lies "
                          "above it")


def theorem_rate_gate(n_min: float, beta: float = 1.0, dim: int = 1) -> float:
    r"""The least steep log-log slope Theorems 2-3's rate allows on sizes :math:`n \ge n_{min}`.

    The bound is :math:`c\,A(n,\delta)^{1/(2-eta)}` with Lemma 1's :math:`A(n, \delta) =
    (d/n)\log(n/d) + \log(1/\delta)/n` (standard form), whose local exponent
    :math:`d\ln A/d\ln n = -1 + d/(d\log(n/d) + \log(1/\delta))` lies in
    :math:`[-1, -1 + 1/\ln(n/d)]`; over a sweep starting at :math:`n_{min}` the slope of the
    bound is therefore at most :math:`(-1 + 1/\ln(n_{min}/d))/(2-eta)`. A measured error
    falling more slowly than this, over the same sizes, contradicts the rate with any
    constant c; falling faster does not (the theorem is an upper bound)."""
    if not n_min > dim * np.e:
        raise ValueError(f"n_min must exceed e * dim = {dim * np.e:.2f}, got {n_min}")
    return (-1.0 + 1.0 / np.log(n_min / dim)) / (2.0 - beta)
Q_SIZES = [10, 30, 100, 300, 1000]
F_SIZES = [10, 30, 100, 300, 1000, 3000, 10000]
#: thresholds on which Assumption 2's alpha is computed (with the ends of supp D)
ALPHA_GRID = np.unique(np.concatenate([np.linspace(0.0, 1.0, 2001), [0.2, 0.6]]))


def sample_sizes(n, *, client_ratio, fixed_client=None, fixed_server=None):
    """(n_client, n_server) at sweep value ``n`` (the convention of :func:`_errors`)."""
    n_server = n if fixed_server is None else fixed_server
    n_client = client_ratio * n if fixed_client is None else fixed_client
    if fixed_server is not None:
        n_client = n
    return int(n_client), int(n_server)


def _errors(rng, sizes, n_reps, *, client_ratio, target, fixed_client=None, fixed_server=None,
            flip=0.0, client_target=None, key="eps_p"):
    """(n_reps, len(sizes)) array of a per-run quantity along a sample-size sweep."""
    out = np.empty((n_reps, len(sizes)))
    for j, n in enumerate(sizes):
        n_client, n_server = sample_sizes(n, client_ratio=client_ratio,
                                          fixed_client=fixed_client, fixed_server=fixed_server)
        res = pooled_erm_errors(rng, n_client=n_client, n_server=n_server,
                                client_dist=CLIENT, server_dist=SERVER, target=target,
                                client_target=client_target, flip=flip, n_reps=n_reps)
        out[:, j] = res[key] if isinstance(key, str) else key(res)
    return out


def positive_relation_alpha(n_client, n_server, target, server=SERVER) -> float:
    r"""Assumption 2's :math:`\alpha` with :math:`\beta = 1` between P and the pooled
    :math:`Q = \lambda_1\mathcal D + \lambda_2 P'` (:math:`\lambda` the sample shares, the
    natural reading of the paper), same target: :math:`\sup_t |\epsilon_P - \epsilon_Q|/
    \epsilon_Q` over :data:`ALPHA_GRID`; ``inf`` if some threshold has :math:`\epsilon_Q = 0
    < \epsilon_P`. Massart flips scale both errors alike and leave it unchanged."""
    t = ALPHA_GRID[np.abs(ALPHA_GRID - target) > 1e-12]
    lam1 = n_client / (n_client + n_server)
    eps_p = excess_error(SERVER, t, target)
    eps_q = lam1 * excess_error(CLIENT, t, target) + (1 - lam1) * excess_error(server, t,
                                                                               target)
    if np.any((eps_q <= 0) & (eps_p > 0)):
        return float("inf")
    pos = eps_q > 0
    return float(np.max(np.abs(eps_p[pos] - eps_q[pos]) / eps_q[pos]))


def sweep_instances(sizes, *, target, flip=0.0, **sweep) -> list[dict]:
    """One instance per sweep point: the sample sizes, the label noise and Assumption 2's
    alpha there; every instance also carries the sweep's alphas (the premise 'alpha
    constant' compares them)."""
    points = [sample_sizes(n, **sweep) for n in sizes]
    alphas = np.array([positive_relation_alpha(nc, ns, target) for nc, ns in points])
    return [dict(n_S=nc, n_T=ns, flip=flip, alpha=float(a), alphas=alphas, target=target)
            for (nc, ns), a in zip(points, alphas, strict=True)]


def q90_slope_interval(err, sizes, rng, n_boot):
    """Slope of log q90 against log n_T, and its 95% bootstrap interval (runs resampled)."""
    x = np.log(np.asarray(sizes, dtype=float))

    def slope(e):
        return float(np.polyfit(x, np.log(np.quantile(e, 0.9, axis=0)), 1)[0])
    boots = [slope(err[rng.integers(0, len(err), len(err))]) for _ in range(n_boot)]
    return slope(err), tuple(float(v) for v in np.percentile(boots, [2.5, 97.5]))
