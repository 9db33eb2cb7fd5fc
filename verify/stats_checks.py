r"""The statistics behind the Monte Carlo and rate claims, against their definitions.

Shared by the per-paper guard claims (``verify/<paper>/stats_guards.py``): each paper's
decision rules use :mod:`flbounds.stats`, so each paper checks the properties its verdicts
rest on, with the same instances.

- Holm's step-down rule (Holm 1979): reject :math:`H_{(1)}, \dots, H_{(k)}` for the largest
  k with :math:`p_{(j)} \le \alpha/(m - j + 1)` for all :math:`j \le k`; the adjusted p-values
  are :math:`\max_{i \le j}\min(1, (m - i + 1)p_{(i)})`. Rewritten here as the loop of the
  definition and compared on random families (ties and m = 1 included).
- Least squares on exact laws: :func:`flbounds.stats.loglog_slope` on :math:`y = c x^a` and
  :func:`flbounds.stats.linear_rate_fit` on :math:`e_k = e_0 \rho^k` must return a and
  :math:`\log\rho` to rounding (a noiseless line has a unique least-squares fit).
- Clopper and Pearson's exact interval: for every p, :math:`P_p(\mathrm{high}(K) < p)` and
  :math:`P_p(\mathrm{low}(K) > p)` are at most :math:`\alpha/2`, K ~ Bin(n, p) (exact binomial
  sums at the points where these tails are largest, just beyond each interval end, and on a
  grid).
- The Monte Carlo standard error :math:`s/\sqrt n` of :func:`flbounds.stats.mc_mean`: for
  normal samples, :math:`|\bar x - \mu| \le c\,\mathrm{se}` has probability
  :math:`P(|T_{n-1}| \le c)` exactly (Student); the number of covering batches out of B is
  binomial, tested two-sided.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binom, binomtest
from scipy.stats import t as student_t

from flbounds.ledger import Evidence, Tolerance
from flbounds.stats import clopper_pearson, holm, linear_rate_fit, loglog_slope, mc_mean

FIT_ROUNDING = 1e-9  # noiseless fits of <= 40 points: float64 error ~1e-13 on slopes ~1
COVER_C = 2.0  # interval half-width in standard errors
COVER_ALPHA = 1e-6  # level of the exact binomial test of the coverage count


#: the metadata of the guard claims every paper registers (attached to its own result parts)
HOLM_CLAIM = dict(
    kind="algorithm", expected="holds",
    statement="The family-wise decision rule of the multi-cell Monte Carlo claims is Holm's "
              "step-down: reject H_(1..k) for the largest k with p_(j) <= alpha/(m-j+1) for "
              "every j <= k; adjusted p-values max_(i<=j) min(1, (m-i+1) p_(i)).",
    quick=dict(n_families=400, m_max=12), full=dict(n_families=4000, m_max=60))
FIT_CLAIM = dict(
    kind="algorithm", expected="holds",
    statement="The rate and exponent fits return the exponent of an exact power law c x^a "
              "(log-log slope, with and without replicates) and the log-rate of an exact "
              "geometric sequence e_0 rho^k.",
    quick=dict(n_laws=60), full=dict(n_laws=600))
COVERAGE_CLAIM = dict(
    kind="algorithm", expected="holds",
    statement="The Monte Carlo standard error is std/sqrt(n): for normal samples the interval "
              "mean +- 2 se covers the true mean with probability P(|T_(n-1)| <= 2) exactly.",
    quick=dict(n_batches=4000, n=50), full=dict(n_batches=40000, n=50))


def holm_by_definition(p: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Reject mask and adjusted p-values of Holm's step-down rule, written as its loop."""
    m = p.size
    order = sorted(range(m), key=lambda i: (p[i], i))
    reject = np.zeros(m, dtype=bool)
    for j, i in enumerate(order):
        if p[i] > alpha / (m - j):
            break
        reject[i] = True
    adjusted, running = np.empty(m), 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (m - j) * p[i]))
        adjusted[i] = running
    return reject, adjusted


def _family(rng: np.random.Generator, m: int) -> np.ndarray:
    """p-values of a family: a few tiny ones (false nulls), uniform ones, and some ties."""
    p = rng.uniform(size=m)
    n_small = int(rng.integers(0, m + 1))
    p[:n_small] = rng.uniform(0.0, 0.05, size=n_small) ** 2
    if m > 2 and rng.random() < 0.3:
        p[1] = p[0]
    return rng.permutation(p)


def holm_evidence(rng: np.random.Generator, n_families: int, m_max: int) -> Evidence:
    """Holm's rule of :mod:`flbounds.stats` against the definition on random families of m in
    1..m_max p-values (some tiny, some tied), alpha in {1e-3, 0.01, 0.05}. Measured: decisions
    that differ plus the largest adjusted p-value error. Tolerance: rounding."""
    mismatched, adj_err, n_rejections = 0, 0.0, 0
    for r in rng.spawn(n_families):
        m = int(r.integers(1, m_max + 1))
        p = _family(r, m)
        alpha = float(r.choice([1e-3, 0.01, 0.05]))
        got = holm(p, alpha)
        reject, adjusted = holm_by_definition(p, alpha)
        mismatched += int(np.sum(got.reject != reject))
        adj_err = max(adj_err, float(np.max(np.abs(got.adjusted - adjusted))))
        n_rejections += int(reject.sum())
    return Evidence(measured=mismatched + adj_err, theoretical=0.0, relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "adjusted p-values: one product "
                                                 "m p of float64 values, error ~1e-16"),
                    details={"n_families": n_families, "m_max": m_max,
                             "decisions_differing": mismatched, "max_adjusted_error": adj_err,
                             "rejections_by_definition": n_rejections})


def fit_evidence(rng: np.random.Generator, n_laws: int) -> Evidence:
    """Relative errors of the log-log slope and the linear-rate fit on exact laws: a in
    [-3, 2], rho in [0.05, 0.999], 3..40 points. Tolerance: rounding."""
    worst = 0.0
    for r in rng.spawn(n_laws):
        a, c = float(r.uniform(-3.0, 2.0)), float(r.uniform(0.1, 10.0))
        x = np.sort(r.uniform(1.0, 1e3, size=int(r.integers(3, 30))))
        seeds = np.exp(r.normal(size=(4, 1)))  # replicates differing by a constant factor
        y2 = c * seeds * x[None, :] ** a
        fits = [loglog_slope(x, c * x ** a, n_boot=0, rng=None).slope,
                loglog_slope(x, y2, n_boot=0, rng=None).slope,
                loglog_slope(x, y2, n_boot=0, rng=None, mean="arithmetic").slope]
        worst = max(worst, *(abs(s - a) / max(1.0, abs(a)) for s in fits))
        rho = float(r.uniform(0.05, 0.999))
        e = float(r.uniform(0.5, 5.0)) * rho ** np.arange(int(r.integers(5, 40)))
        slope = linear_rate_fit(e, window=(1e-300, 1.0)).slope
        worst = max(worst, abs(slope - math.log(rho)) / max(1.0, abs(math.log(rho))))
    return Evidence(measured=worst, theoretical=0.0, relation="<=",
                    tolerance=Tolerance.rounding(FIT_ROUNDING, "least squares on <= 40 exact "
                                                 "points; float64 error ~1e-13"),
                    details={"n_laws": n_laws})


def coverage_evidence(rng: np.random.Generator, n_batches: int, n: int) -> Evidence:
    """Coverage count of mean +- 2 se over normal batches (random mean and scale) against its
    exact binomial law. Measured: the two-sided exact binomial p-value; it must stay above
    1e-6 (the chance of a false alarm)."""
    mu = rng.normal(size=n_batches)
    sd = np.exp(rng.normal(size=n_batches))
    samples = mu[:, None] + sd[:, None] * rng.standard_normal((n_batches, n))
    est = mc_mean(samples, axis=1)
    covered = int(np.sum(np.abs(est.mean - mu) <= COVER_C * est.se))
    p0 = float(1.0 - 2.0 * student_t.sf(COVER_C, n - 1))
    pvalue = float(binomtest(covered, n_batches, p0).pvalue)
    return Evidence(measured=pvalue, theoretical=COVER_ALPHA, relation=">=",
                    tolerance=Tolerance.exact("an exact binomial test at a fixed level"),
                    details={"n_batches": n_batches, "n_per_batch": n, "covered": covered,
                             "expected_fraction": p0, "level": COVER_ALPHA,
                             "half_width_in_se": COVER_C})


def _cp_tails(n: int, confidence: float) -> float:
    """Largest one-sided miss probability minus alpha/2 of the Clopper-Pearson interval for n
    trials: tails evaluated just beyond every interval end and on a grid of p."""
    alpha = 1.0 - confidence
    ends = np.array([clopper_pearson(k, n, confidence=confidence) for k in range(n + 1)])
    points = np.concatenate([ends[:, 1] * (1 + 1e-9), ends[:, 0] * (1 - 1e-9),
                             np.linspace(0.001, 0.999, 199)])
    points = points[(points > 0) & (points < 1)]
    ks = np.arange(n + 1)
    worst = -np.inf
    for p in points:
        pmf = binom.pmf(ks, n, p)
        worst = max(worst, float(pmf[ends[:, 1] < p].sum()), float(pmf[ends[:, 0] > p].sum()))
    return worst - alpha / 2


def clopper_pearson_evidence(sizes, levels) -> Evidence:
    """Exact one-sided miss probabilities of the Clopper-Pearson interval against alpha/2."""
    excess = {f"n={n}, confidence={c}": _cp_tails(n, c) for n in sizes for c in levels}
    return Evidence(measured=max(excess.values()), theoretical=0.0, relation="<=",
                    tolerance=Tolerance.rounding(1e-9, "binomial sums of <= 201 terms and "
                                                 "beta quantiles, float64; the points sit a "
                                                 "relative 1e-9 beyond the interval ends"),
                    details={"max_tail_minus_half_alpha": excess})


def holm_step_down(*, rng, n_families, m_max):
    """Holm against its definition (:func:`holm_evidence`)."""
    return holm_evidence(rng, n_families, m_max)


def exact_law_fits(*, rng, n_laws):
    """Fits of exact laws (:func:`fit_evidence`)."""
    return fit_evidence(rng, n_laws)


def mc_se_coverage(*, rng, n_batches, n):
    """Exact coverage law of mean +- 2 se (:func:`coverage_evidence`)."""
    return coverage_evidence(rng, n_batches, n)


def law_evidence(families: dict, key: str, details: dict) -> Evidence:
    """Evidence of one or more draw-law tests (:class:`flbounds.draw_laws.LawTest`, one per
    sampler or process, each Holm over its own cells at the level fixed before the draws):
    ``families`` maps a name to ``(test, extra details)``. The families combine by Bonferroni,
    so the claim keeps that level: measured is the smallest Holm-adjusted p-value times the
    number of families (capped at 1), against the level (a rejection is ``violated``); the
    details list every family (under ``key``) with its summary and its combined p-value."""
    k = len(families)
    alpha = next(iter(families.values()))[0].alpha
    rows = {name: {**test.summary(), **extra,
                   "combined_pvalue": min(1.0, k * test.min_adjusted)}
            for name, (test, extra) in families.items()}
    worst = min(rows, key=lambda name: rows[name]["combined_pvalue"])
    return Evidence(measured=rows[worst]["combined_pvalue"], theoretical=alpha, relation=">=",
                    tolerance=Tolerance.exact("a p-value against the level fixed before the "
                                              "draws"),
                    details={**details, key: rows, "families": k, "most_extreme": worst})
