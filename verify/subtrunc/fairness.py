r"""Sec. V of [004] on small label-skewed FedAvg problems (spec V15): directional claims
decided over seeds.

Setting (paper's): 100 clients with 3 classes each, k = 10 per round, stochastic greedy with
r = 10, b = 1.1, mu = 1, phi = ln(1 + x); model: multinomial logistic regression on
``synthetic`` Gaussian classes and scikit-learn's ``digits`` (stand-ins for LeNet on
MNIST/CIFAR10). Client dissimilarity [%]: std, MAD and max-min of per-client test accuracy.

All rules share each seed's data split and random plan, so differences are paired. Every
directional claim of the paper is checked with two decision rules, on both datasets and the
std and MAD statistics (max-min, the noisiest and least plausible reading of the paper's
metric, is reported in details), each from the 95% t-interval over seeds of the mean paired
difference (or of the mean per-seed slope):

- "not contradicted" (spec V15's weak pass): holds unless the whole interval lies on the
  wrong side of 0 (measured = the interval's lower end, must be <= 0);
- "detectable": holds only if the whole interval lies on the paper's side (measured = the
  interval's upper end, must be < 0).

Only verdicts that the data decide the same way at the quick (4 seeds x 40 rounds) and the
full (30 seeds x 100 rounds) sizes are claimed; the numbers quoted in the docstrings are the
full profile's (root seed 0).
"""

from __future__ import annotations

import hashlib

import numpy as np
from scipy import stats

from flbounds.fairfl import make_federated_data, run_fedavg
from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.selection import SelectionRule

DATASETS = ("synthetic", "digits")
METRICS = ("std", "mad", "max_min")
#: statistics that decide the verdicts: spec 004 s.1.6 finds std or MAD the plausible reading
#: of the paper's "client dissimilarity" (8-14 pp); max-min is reported in details only.
DECIDING = ("std", "mad")
WEAK = Tolerance(0.0, "none (interval in measured)",
                 "measured = lower end of the 95% t-interval over seeds; <= 0 means the data "
                 "do not contradict the paper's direction")
STRICT = Tolerance(0.0, "none (interval in measured)",
                   "measured = upper end of the 95% t-interval over seeds; the claim needs "
                   "it below 0 (a detectable effect in the paper's direction)")
QUICK = dict(n_seeds=4, n_rounds=40, lams=(0.01, 0.5, 0.95))
FULL = dict(n_seeds=30, n_rounds=100, lams=(0.01, 0.1, 0.25, 0.5, 0.75, 0.95))
RUNS_QUICK = dict(n_seeds=QUICK["n_seeds"], n_rounds=QUICK["n_rounds"])
RUNS_FULL = dict(n_seeds=FULL["n_seeds"], n_rounds=FULL["n_rounds"])
PAPER_LAM = 0.95  # Table I's MNIST setting (0.50 for CIFAR10, see paper_checks)
_CACHE: dict = {}


def _root_entropy(rng: np.random.Generator) -> int:
    seq = rng.bit_generator.seed_seq
    return int(seq.entropy) if isinstance(seq.entropy, int) else 0


def fl_runs(rng, source: str, rules, *, n_seeds: int, n_rounds: int):
    """Runs of each rule on each seed, shared by all claims of one root seed (cached).

    The randomness is keyed by (root seed, "subtrunc.fl", source, seed index), so every claim
    sees the same data splits and plans and pairs its comparisons.
    """
    words = tuple(int.from_bytes(hashlib.sha256(f"subtrunc.fl.{source}".encode()).digest()[i:i + 4],
                                 "little") for i in (0, 4))
    out = []
    for rule in rules:
        row = []
        for s in range(n_seeds):
            key = (source, rule, _root_entropy(rng), s, n_rounds)
            if key not in _CACHE:
                seq = np.random.SeedSequence(entropy=key[2], spawn_key=(*words, s))
                r = np.random.default_rng(seq)
                data = make_federated_data(source, r)
                plan = r.random((n_rounds, 11, 100))
                _CACHE[key] = run_fedavg(data, rule, plan=plan, k=10)
            row.append(_CACHE[key])
        out.append(row)
    return out


def upper_ci(samples: np.ndarray) -> tuple[float, float, float]:
    """(mean, upper 95% t-bound, half-width) of per-seed values (two-sided interval)."""
    samples = np.asarray(samples, dtype=float)
    n = samples.size
    half = stats.t.ppf(0.975, n - 1) * samples.std(ddof=1) / np.sqrt(n)
    return float(samples.mean()), float(samples.mean() + half), float(half)


def _metric(runs, name):
    return np.array([[r.metrics[name] for r in row] for row in runs])


def _paired(rng, rule_a, rule_b, n_seeds, n_rounds):
    """Rows (dataset, metric, means, diff, 95% interval) of the paired difference a - b."""
    rows = []
    for source in DATASETS:
        runs = fl_runs(rng, source, [rule_a, rule_b], n_seeds=n_seeds, n_rounds=n_rounds)
        for m in METRICS:
            vals = _metric(runs, m)
            mean, up, half = upper_ci(vals[0] - vals[1])
            rows.append(dict(dataset=source, metric=m, mean_a=vals[0].mean(),
                             mean_b=vals[1].mean(), diff=mean, ci=[mean - half, up]))
    return rows


def _evidence(rows, rule: str, n_seeds: int, **extra) -> Evidence:
    end = 0 if rule == "weak" else 1
    measured = [row["ci"][end] for row in rows if row["metric"] in DECIDING + (
        "participation_gini",)]
    tol = WEAK if rule == "weak" else STRICT
    return Evidence(measured=measured, theoretical=[0.0] * len(measured),
                    relation="<=", tolerance=tol,
                    details={"rows": rows, "n_seeds": n_seeds, "decision": rule, **extra})


SUBTRUNC = SelectionRule("subtrunc", lam=PAPER_LAM)


@claim("subtrunc.fl.subtrunc_not_above_divfl", ref="Table I, Sec. V-A", kind="remark",
       expected="holds",
       statement="On label-skewed logistic regression (synthetic, digits), SubTrunc (lam = 0.95, "
                 "b = 1.1, ln(1+x)) has client dissimilarity <= DivFL's (not contradicted at "
                 "95%).", quick=RUNS_QUICK, full=RUNS_FULL)
def subtrunc_not_above_divfl(*, rng, n_seeds, n_rounds):
    """Weak rule on SubTrunc - DivFL. Expected ``holds``: the point estimates are in the
    paper's direction (std -0.19 pp synthetic, -0.06 pp digits over 30 seeds) and no interval
    lies above 0. See ``subtrunc_detectably_below_divfl`` for the strict reading."""
    rows = _paired(rng, SUBTRUNC, SelectionRule("divfl"), n_seeds, n_rounds)
    return _evidence(rows, "weak", n_seeds)


@claim("subtrunc.fl.subtrunc_detectably_below_divfl", ref="Table I, Sec. V-A", kind="remark",
       expected="violated",
       statement="On label-skewed logistic regression (synthetic, digits), SubTrunc (lam = 0.95) "
                 "has detectably lower client dissimilarity than DivFL.",
       quick=RUNS_QUICK, full=RUNS_FULL)
def subtrunc_detectably_below_divfl(*, rng, n_seeds, n_rounds):
    """Strict rule on SubTrunc - DivFL. Expected ``violated``: over 30 seeds the std
    difference is -0.19 +- 0.21 pp (synthetic) and -0.06 +- 0.17 pp (digits); every interval
    contains 0, at 4 seeds too. Why the effect is small: H <= lam b = 1.05 while G's gains
    sum gradient distances over 100 clients, so H mostly breaks near-ties among the greedy
    picks. (The paper's own gaps are mostly within one printed std as well.)"""
    rows = _paired(rng, SUBTRUNC, SelectionRule("divfl"), n_seeds, n_rounds)
    return _evidence(rows, "strict", n_seeds)


@claim("subtrunc.fl.subtrunc_not_above_random", ref="Table I, Sec. V-A", kind="remark",
       expected="holds",
       statement="On label-skewed logistic regression (synthetic, digits), SubTrunc (lam = 0.95) "
                 "has client dissimilarity <= random selection's (not contradicted at 95%).",
       quick=RUNS_QUICK, full=RUNS_FULL)
def subtrunc_not_above_random(*, rng, n_seeds, n_rounds):
    """Weak rule on SubTrunc - Random. Expected ``holds``. At 30 seeds the reduction is even
    detectable on every dataset and statistic (upper ends of the std intervals -0.50
    synthetic, -0.17 digits; ``details.detectable``), but not at the quick size, so only the
    weak reading is claimed."""
    rows = _paired(rng, SUBTRUNC, SelectionRule("random"), n_seeds, n_rounds)
    return _evidence(rows, "weak", n_seeds,
                     detectable=all(row["ci"][1] < 0 for row in rows))


def _slopes(values: np.ndarray, x) -> np.ndarray:
    """Per-seed least-squares slope of values (n_settings, n_seeds) against x."""
    x = np.asarray(x, dtype=float)
    xc = x - x.mean()
    return xc @ (values - values.mean(axis=0)) / (xc @ xc)


def _trend(rng, rules, x, metrics, n_seeds, n_rounds):
    rows = []
    for source in DATASETS:
        runs = fl_runs(rng, source, rules, n_seeds=n_seeds, n_rounds=n_rounds)
        for m in metrics:
            vals = _metric(runs, m)
            mean, up, half = upper_ci(_slopes(vals, x))
            rows.append(dict(dataset=source, metric=m, means=vals.mean(axis=1),
                             slope=mean, ci=[mean - half, up]))
    return rows


@claim("subtrunc.fl.dissimilarity_not_rising_with_lambda", ref="Table II, Sec. V-B",
       kind="remark", expected="holds",
       statement="On label-skewed logistic regression, SubTrunc's client dissimilarity does not "
                 "rise with lam over the paper's grid (a falling trend not contradicted at 95%).",
       quick=QUICK, full=FULL)
def not_rising_with_lambda(*, rng, n_seeds, n_rounds, lams):
    """Weak rule on the per-seed slope of dissimilarity vs lam. Expected ``holds``: slopes
    -0.19 +- 0.20 (synthetic std) and -0.03 +- 0.18 (digits std) per unit lam over 30 seeds."""
    rules = [SelectionRule("subtrunc", lam=lam) for lam in lams]
    return _evidence(_trend(rng, rules, lams, METRICS, n_seeds, n_rounds), "weak", n_seeds,
                     lambdas=list(lams))


@claim("subtrunc.fl.dissimilarity_detectably_falls_with_lambda", ref="Table II, Sec. V-B",
       kind="remark", expected="violated",
       statement="On label-skewed logistic regression, SubTrunc's client dissimilarity "
                 "detectably falls as lam grows over the paper's grid.",
       quick=QUICK, full=FULL)
def detectably_falls_with_lambda(*, rng, n_seeds, n_rounds, lams):
    """Strict rule on the same slopes. Expected ``violated``: every interval contains 0 (see
    the weak claim's numbers); the paper's Table II trend (8.90 -> 7.96 on MNIST) is not
    reproduced at a detectable level here."""
    rules = [SelectionRule("subtrunc", lam=lam) for lam in lams]
    return _evidence(_trend(rng, rules, lams, METRICS, n_seeds, n_rounds), "strict", n_seeds,
                     lambdas=list(lams))


WINDOWS = (2, 5, 10)


@claim("subtrunc.fl.participation_evens_with_window", ref="Sec. III-B, Table III",
       kind="remark", expected="holds",
       statement="A larger UnionFL window (mu = 1) detectably spreads participation more evenly "
                 "(lower Gini coefficient of per-client participation counts).",
       quick=RUNS_QUICK, full=RUNS_FULL)
def participation_window(*, rng, n_seeds, n_rounds):
    """Strict rule on the per-seed slope of the participation Gini vs window (2, 5, 10).
    Expected ``holds``: slopes -0.022 +- 0.001 (synthetic) and -0.013 +- 0.001 (digits) per
    window unit over 30 seeds (Gini about 0.46 -> 0.27 and 0.34 -> 0.24). Details also give
    the dissimilarity-vs-window slopes: the paper's "larger window, lower dissimilarity" is
    not seen (synthetic std rises, +0.07 +- 0.05 per unit at 30 seeds; digits flat), like the
    paper's own CIFAR10 column; it is not claimed because 4 seeds cannot decide it."""
    rules = [SelectionRule("unionfl", window=w) for w in WINDOWS]
    rows = _trend(rng, rules, WINDOWS, ("participation_gini",), n_seeds, n_rounds)
    dis = _trend(rng, rules, WINDOWS, ("std",), n_seeds, n_rounds)
    return _evidence(rows, "strict", n_seeds, windows=WINDOWS,
                     dissimilarity_vs_window=dis)
