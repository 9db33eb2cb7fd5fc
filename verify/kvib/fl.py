r"""K-Vib FL-level claims: Theorem 4.1 and its sampling-utility reading, the enhanced rate of
Sec. 5, and stragglers (App. E.1) ([003], recipes V14-V16).

Problem: federated ridge regression (:func:`flbounds.problems.generators.random_ridge`),
:math:`\lambda_i=1/N`, full-batch local GD (so :math:`\sigma_l=0`), :math:`\eta_g=1` and
:math:`\eta=R\eta_l=1/(8L)`, the largest step Thm 4.1 allows. K-Vib uses the Sec. 6 practical
:math:`G` (mean first-round feedback) in :math:`\gamma=G^2N/(K\theta)`.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from flbounds.algorithms.batched_sampler import fedavg_sampler_batched, sampler_uniforms
from flbounds.algorithms.fedavg_sampler import fedavg_sampler, local_updates
from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.participation import Bernoulli
from flbounds.problems.generators import random_ridge
from flbounds.sampling import (
    KVib,
    Mabs,
    OracleISP,
    UniformISP,
    UniformRSP,
    Vrb,
    isp_draw,
    optimal_isp_probabilities,
)
from flbounds.stats import loglog_slope

from .printed_formulas import lemma22_split


def _setup(rng, n_clients, local_steps, *, dim=10, n_samples=20):
    problem = random_ridge(rng, n_clients, n_samples, dim, lam=1.0, heterogeneity=3.0)
    step = 1.0 / (8 * local_steps * problem.L)
    z0 = local_updates(problem, np.zeros(dim), local_steps=local_steps, step=step) / n_clients
    G = float(np.linalg.norm(z0, axis=1).mean())
    return problem, step, G


def _makers(n, k, t, G):
    return {"oracle": lambda: OracleISP(n, k), "kvib": lambda: KVib(n, k, t, G=G),
            "uniform_isp": lambda: UniformISP(n, k), "uniform_rsp": lambda: UniformRSP(n, k),
            "vrb": lambda: Vrb(n, k, t, G=G), "mabs": lambda: Mabs(n, k, t, G=G)}


def _beta1(trace) -> float:
    r"""beta_1 = mean over rounds of the exact excess variance V_t - delta_*^t (spec V12(vi)).

    For ISP samplers this equals ``q_gap`` = l_t(p^t) - l_t(p*^t); for RSP samplers (uniform
    subsets, multinomial Vrb / Mabs) ``q_gap`` evaluates the ISP cost at the inclusion weights
    and is *not* a variance gap, so every sampler uses the exact variance here.
    """
    return float(np.mean(trace.variance - trace.opt_variance))


def _beta1_seeds(problem, make, seeds, n_rounds, local_steps, step) -> np.ndarray:
    """``_beta1(_run(problem, make(), seed, ...))`` for every seed, bit for bit, as one
    :func:`~flbounds.algorithms.fedavg_sampler_batched` run (ISP samplers only)."""
    plan = sampler_uniforms(seeds, n_rounds=n_rounds, n_clients=problem.n_clients)
    tr = fedavg_sampler_batched(problem, [make() for _ in seeds], plan,
                                local_steps=local_steps, step=step, diagnostics="variance")
    return np.array([float(np.mean(tr.variance[b] - tr.opt_variance[b]))
                     for b in range(len(seeds))])


def _run(problem, sampler, rng, n_rounds, local_steps, step):
    return fedavg_sampler(problem, sampler, rng, n_rounds=n_rounds, local_steps=local_steps,
                          step=step, diagnostics="variance")  # loss, grad_sq unused


def lemma22_value(a: np.ndarray, k: float) -> float:
    r"""min over P_K of sum a_i^2/p_i by the printed rule of Lemma 2.2, independent of
    :mod:`flbounds.sampling`: :math:`(\sum_{i\le l}a_{(i)})^2/(K+l-N)+\sum_{i>l}a_{(i)}^2`."""
    s, l = lemma22_split(a, k)
    return float(s[:l].sum() ** 2 / (k + l - s.size) + np.sum(s[l:] ** 2))


@claim("kvib.thm4_1.oracle_beta1_zero", ref="Thm 4.1 (beta_1 = 0 with optimal sampling)",
       kind="statement", expected="holds",
       statement="Optimal ISP computed from all clients' updates each round has Q(S^t) = 0, "
                 "hence beta_1 = 0.",
       quick=dict(n_clients=50, k=5, n_rounds=40, local_steps=5),
       full=dict(n_clients=100, k=10, n_rounds=500, local_steps=5))
def oracle_beta1_zero(*, rng, n_clients, k, n_rounds, local_steps):
    """V14(a) with the operative Def. 4.1 (exact excess variance). The oracle's probabilities
    come from the library water-filling solver; the reference optimum is recomputed
    independently for every round's feedback by the sorted closed form of Lemma 2.2
    (:func:`lemma22_value`) from the iterates' recomputed updates. Measured: max over rounds of
    |l_t(p_oracle) - l_t(p*)| / l_t(p*), plus the same for V_t - delta_*^t from the trace
    (both ~1e-16); tolerance 1e-12 (rounding of sums of N terms; the oracle's floor
    1e-12 K/N never binds here)."""
    problem, step, _ = _setup(rng, n_clients, local_steps)
    tr = _run(problem, OracleISP(n_clients, k), rng, n_rounds, local_steps, step)
    gaps = []
    for x in tr.x[:-1]:
        pi = np.linalg.norm(local_updates(problem, x, local_steps=local_steps, step=step),
                            axis=1) / n_clients
        oracle = OracleISP(n_clients, k)
        oracle.reveal(pi)
        best = lemma22_value(pi, k)
        gaps.append(abs(float(np.sum(pi * pi / oracle.probabilities())) - best) / best)
    trace_gap = float(np.max(np.abs(tr.variance - tr.opt_variance) / (tr.opt_variance
                                                                       + tr.sum_sq)))
    return Evidence(measured=[max(gaps), trace_gap], theoretical=0.0, relation="==",
                    tolerance=Tolerance.rounding(1e-12, "sums of N terms"))


@claim("kvib.thm4_1.kvib_beats_uniform_isp", ref="Thm 4.1 (beta_1); Sec. 6.1, Fig. 2",
       kind="remark", expected="holds",
       statement="K-Vib has a smaller beta_1 than uniform ISP, and a lower exact per-round "
                 "variance than uniform ISP in at least 70% of rounds after T/5.",
       quick=dict(n_clients=100, k=10, n_rounds=150, local_steps=5, n_seeds=2),
       full=dict(n_clients=100, k=10, n_rounds=500, local_steps=5, n_seeds=5))
def kvib_beats_uniform_isp(*, rng, n_clients, k, n_rounds, local_steps, n_seeds):
    """V14(c). The per-round comparison is on K-Vib's own trajectory (same updates z), where the
    uniform-ISP variance is (N-K)/K sum pi^2. Measured: [beta_1 ratio K-Vib/uniform (< 1),
    fraction of rounds (>= 0.7)], seed means; exact counts, no tolerance."""
    problem, step, G = _setup(rng, n_clients, local_steps)
    b_kvib, b_unif, frac = [], [], []
    for child in rng.spawn(n_seeds):
        tr = _run(problem, KVib(n_clients, k, n_rounds, G=G), child, n_rounds, local_steps, step)
        tu = _run(problem, UniformISP(n_clients, k), child, n_rounds, local_steps, step)
        b_kvib.append(_beta1(tr))
        b_unif.append(_beta1(tu))
        late = slice(n_rounds // 5, None)
        unif_var = (n_clients - k) / k * tr.sum_sq[late]
        frac.append(float(np.mean(tr.variance[late] < unif_var)))
    ratio = float(np.mean(b_kvib) / np.mean(b_unif))
    return Evidence(measured=[ratio, float(np.mean(frac))], theoretical=[(0.0, 1.0), (0.7, 1.0)],
                    relation="in", tolerance=Tolerance.exact("seed means of exact quantities"),
                    details={"beta1_kvib": np.mean(b_kvib), "beta1_uniform": np.mean(b_unif)})


@claim("kvib.thm4_1.sampling_utility", ref="Thm 4.1 ('sampling utility'; beta_1 is the cost "
       "of sub-optimal sampling)", kind="remark", expected="holds",
       statement="Across samplers, a larger beta_1 goes with a larger deviation from the "
                 "full-participation trajectory (Spearman correlation >= 0.6).",
       quick=dict(n_clients=100, k=10, n_rounds=120, local_steps=5, n_seeds=6),
       full=dict(n_clients=100, k=10, n_rounds=500, local_steps=5, n_seeds=20))
def sampling_utility(*, rng, n_clients, k, n_rounds, local_steps, n_seeds):
    r"""V14(b), soft. Samplers: oracle, K-Vib, uniform ISP, uniform RSP, Vrb, Mabs. The FL
    metric is the sampling-induced error: the mean over rounds t >= T/5 and seeds of
    :math:`\|x^t-x^t_{\rm full}\|^2`, with the deterministic full-participation run (FedAvg
    with R > 1 has a biased fixed point, so f - f* would measure that bias, and loss
    differences are dominated by seed noise). Measured: Spearman rho (>= 0.6; an empirical
    reading of an O-bound, not a theorem). beta_1 is the mean exact excess variance
    V_t - delta_*^t for every sampler (spec V12(vi)); the ISP cost gap l(Kq) - l(p*) would be
    wrong for the RSP samplers (for Vrb it is ~20% below the true excess variance and reorders
    Vrb against uniform ISP)."""
    problem, step, G = _setup(rng, n_clients, local_steps)
    full = _run(problem, UniformISP(n_clients, n_clients), rng, n_rounds, local_steps, step)
    late = slice(n_rounds // 5, None)
    beta1, excess = {}, {}
    seeds = rng.spawn(n_seeds)
    for name, make in _makers(n_clients, k, n_rounds, G).items():
        runs = [_run(problem, make(), np.random.default_rng(s), n_rounds, local_steps, step)
                for s in [c.integers(2**63) for c in seeds]]
        beta1[name] = float(np.mean([_beta1(r) for r in runs]))
        dev = np.mean([np.sum((r.x - full.x) ** 2, axis=1) for r in runs], axis=0)
        excess[name] = float(np.mean(dev[late]))
    rho = float(spearmanr(list(beta1.values()), list(excess.values())).statistic)
    return Evidence(measured=rho, theoretical=0.6, relation=">=",
                    tolerance=Tolerance.exact("rank statistic"),
                    details={"beta1": beta1, "excess_loss": excess})


@claim("kvib.sec5.enhanced_rate", ref="Sec. 5 end ('Enhanced convergence of FedAvg with "
       "K-Vib')", kind="remark", expected="holds",
       statement="For K-Vib, beta_1(T) T^{1/3} stays within a factor 3 as T grows, and beta_1 "
                 "falls with K with log-log slope <= -1.",
       quick=dict(n_clients=100, rounds=(100, 200, 400), ks=(4, 8, 16), n_rounds_k=200,
                  local_steps=3, n_seeds=4),
       full=dict(n_clients=100, rounds=(200, 400, 800, 1600, 3200), ks=(2, 4, 8, 16),
                 n_rounds_k=800, local_steps=5, n_seeds=10))
def enhanced_rate(*, rng, n_clients, rounds, ks, n_rounds_k, local_steps, n_seeds):
    r"""V15: consistent with :math:`\beta_1\lesssim N^{1/3}T^{-1/3}K^{-4/3}`; beta_1 is the
    mean exact excess variance (K-Vib is ISP). Gates on seed-bootstrap bounds, not point
    estimates: the 97.5% bootstrap quantile (seeds resampled) of max/min of the seed-mean
    :math:`\beta_1T^{1/3}` must be <= 3, and the upper end of the 95% CI of the K-slope must be
    <= -1. Measured: [that quantile, slope CI upper end]. Expected **holds** (point values in
    details)."""
    problem, step, G = _setup(rng, n_clients, local_steps)
    seeds = rng.spawn(n_seeds)
    # all seeds of a setting in one batched run; each seed's generator still feeds its runs
    # in the order T = rounds..., then K = ks..., so the numbers are those of per-seed loops
    prod = np.array([_beta1_seeds(problem, lambda t=t: KVib(n_clients, 10, t, G=G), seeds, t,
                                  local_steps, step) * t ** (1 / 3) for t in rounds]).T
    b_k = np.array([_beta1_seeds(problem, lambda k=k: KVib(n_clients, k, n_rounds_k, G=G),
                                 seeds, n_rounds_k, local_steps, step) for k in ks]).T
    fit = loglog_slope(ks, b_k, rng=rng)
    rows = rng.integers(0, n_seeds, size=(2000, n_seeds))
    boot = prod[rows].mean(axis=1)
    spread = boot.max(axis=1) / boot.min(axis=1)
    point = prod.mean(0).max() / prod.mean(0).min()
    return Evidence(measured=[float(np.quantile(spread, 0.975)), fit.ci_high],
                    theoretical=[3.0, -1.0], relation="<=",
                    tolerance=Tolerance(0.0, "seed bootstrap",
                                        "gate on 97.5% bootstrap quantiles (seeds resampled)"),
                    details={"beta1_T13_mean": prod.mean(0), "spread_point": point,
                             "k_slope": fit.slope, "k_slope_ci95": [fit.ci_low, fit.ci_high],
                             "beta1_by_k_mean": b_k.mean(0), "n_seeds": n_seeds})


@claim("kvib.appE1.stragglers", ref="App. E.1 (stragglers)", kind="statement",
       expected="holds",
       statement="With availability A ~ Bernoulli(q) independent of ISP sampling, "
                 "sum_{i in S, i in A} z_i/(q_i p_i) is unbiased with variance "
                 "sum (1/(q_i p_i) - 1) ||z_i||^2.",
       quick=dict(n_clients=20, k=4, n_draws=40000), full=dict(n_clients=100, k=10,
                                                               n_draws=400000))
def stragglers(*, rng, n_clients, k, n_draws):
    """V16 by Monte Carlo through the same restriction code the FL loop uses. Measured:
    max_coord |mean - sum z| / (4 SE) and |MSE - formula| / (4 SE); both <= 1."""
    from flbounds.algorithms.fedavg_sampler import restrict_draw

    z = rng.standard_normal((n_clients, 3)) * rng.lognormal(0, 1, (n_clients, 1))
    a = np.linalg.norm(z, axis=1)
    p = optimal_isp_probabilities(a, k, p_min=0.05)
    q = rng.uniform(0.3, 1.0, n_clients)
    plan = Bernoulli(q).plan(rng, n_draws)
    uni = rng.random((n_draws, n_clients))
    est = np.empty((n_draws, 3))
    for m in range(n_draws):
        d = restrict_draw(isp_draw(p, uni[m]), plan[m], q)
        est[m] = d.weights @ z[d.clients]
    total = z.sum(axis=0)
    se = est.std(axis=0, ddof=1) / np.sqrt(n_draws)
    sq = np.sum((est - total) ** 2, axis=1)
    formula = float(np.sum((1 / (q * p) - 1) * a * a))
    bias = float(np.max(np.abs(est.mean(0) - total) / (4 * se)))
    var_dev = abs(sq.mean() - formula) / (4 * sq.std(ddof=1) / np.sqrt(n_draws))
    return Evidence(measured=[bias, var_dev], theoretical=[1.0, 1.0], relation="<=",
                    tolerance=Tolerance(0.0, "4 MC standard errors (pre-scaled)",
                                        "entries are |deviation| / (4 std/sqrt(M))"),
                    details={"mse": sq.mean(), "formula": formula})
