r"""Sec. V of [004] on small label-skewed FedAvg problems (spec V15): directional claims
decided over seeds.

Setting (paper's): 100 clients with 3 classes each, k = 10 per round, stochastic greedy with
r = 10, b = 1.1, mu = 1, phi = ln(1 + x); model: multinomial logistic regression on
``synthetic`` Gaussian classes and scikit-learn's ``digits`` (stand-ins for LeNet on
MNIST/CIFAR10). Client dissimilarity [%]: std, MAD and max-min of per-client test accuracy.

Decision rule (the same for every claim): all rules share each seed's data split and random
plan, so differences are paired; a directional claim "A lowers X" holds when the upper end
of the 95% t-interval of the mean paired difference (or of the mean per-seed slope) is
below 0, on both datasets and all three dissimilarity statistics.
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
CI = Tolerance(0.0, "none (interval in measured)",
               "measured = upper end of the 95% t-interval over seeds of the paired mean "
               "difference / per-seed slope; the claim needs it below 0")
QUICK = dict(n_seeds=4, n_rounds=40, lams=(0.01, 0.5, 0.95))
FULL = dict(n_seeds=12, n_rounds=100, lams=(0.01, 0.1, 0.25, 0.5, 0.75, 0.95))
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
    """(mean, upper 95% t-bound, half-width) of per-seed values."""
    samples = np.asarray(samples, dtype=float)
    n = samples.size
    half = stats.t.ppf(0.975, n - 1) * samples.std(ddof=1) / np.sqrt(n)
    return float(samples.mean()), float(samples.mean() + half), float(half)


def _metric(runs, name):
    return np.array([[r.metrics[name] for r in row] for row in runs])


def _paired_lower(rng, rule_a, rule_b, n_seeds, n_rounds):
    upper, rows = [], []
    for source in DATASETS:
        runs = fl_runs(rng, source, [rule_a, rule_b], n_seeds=n_seeds, n_rounds=n_rounds)
        for m in METRICS:
            vals = _metric(runs, m)
            mean, up, half = upper_ci(vals[0] - vals[1])
            upper.append(up)
            rows.append(dict(dataset=source, metric=m, mean_a=vals[0].mean(),
                             mean_b=vals[1].mean(), diff=mean, ci=[mean - half, up]))
    return upper, rows


@claim("subtrunc.fl.subtrunc_below_divfl", ref="Table I, Sec. V-A", kind="remark",
       expected="violated",
       statement="On label-skewed logistic regression (synthetic, digits), SubTrunc (lam = 0.95, "
                 "b = 1.1, ln(1+x)) yields lower client dissimilarity than DivFL.",
       quick=dict(n_seeds=QUICK["n_seeds"], n_rounds=QUICK["n_rounds"]),
       full=dict(n_seeds=FULL["n_seeds"], n_rounds=FULL["n_rounds"]))
def subtrunc_below_divfl(*, rng, n_seeds, n_rounds):
    """Paired difference SubTrunc - DivFL per dataset and statistic; holds only if every 95%
    interval lies below 0. Expected ``violated``, from our runs (8 seeds x 100 rounds while
    building, confirmed by the quick and full profiles): on digits SubTrunc is slightly lower
    (std 2.16 vs 2.34, inside the interval) but on synthetic it is higher (3.66 vs 3.25).
    Why the effect is small: H <= lam b = 1.05 while G's gains sum gradient distances over
    100 clients, so H mostly breaks near-ties in the first greedy steps."""
    upper, rows = _paired_lower(rng, SelectionRule("subtrunc", lam=PAPER_LAM),
                                SelectionRule("divfl"), n_seeds, n_rounds)
    return Evidence(measured=upper, theoretical=[0.0] * len(upper), relation="<=",
                    tolerance=CI, details={"rows": rows, "n_seeds": n_seeds})


@claim("subtrunc.fl.subtrunc_below_random", ref="Table I, Sec. V-A", kind="remark",
       expected="violated",
       statement="On label-skewed logistic regression (synthetic, digits), SubTrunc (lam = 0.95) "
                 "yields lower client dissimilarity than random selection.",
       quick=dict(n_seeds=QUICK["n_seeds"], n_rounds=QUICK["n_rounds"]),
       full=dict(n_seeds=FULL["n_seeds"], n_rounds=FULL["n_rounds"]))
def subtrunc_below_random(*, rng, n_seeds, n_rounds):
    """Paired SubTrunc - Random, same rule as above. Expected ``violated``: digits shows the
    paper's direction (std 2.16 vs 2.60) but synthetic does not separate them (3.66 vs 3.72,
    interval straddles 0)."""
    upper, rows = _paired_lower(rng, SelectionRule("subtrunc", lam=PAPER_LAM),
                                SelectionRule("random"), n_seeds, n_rounds)
    return Evidence(measured=upper, theoretical=[0.0] * len(upper), relation="<=",
                    tolerance=CI, details={"rows": rows, "n_seeds": n_seeds})


def _slopes(values: np.ndarray, x) -> np.ndarray:
    """Per-seed least-squares slope of values (n_settings, n_seeds) against x."""
    x = np.asarray(x, dtype=float)
    xc = x - x.mean()
    return xc @ (values - values.mean(axis=0)) / (xc @ xc)


def _trend(rng, rules, x, metrics, n_seeds, n_rounds):
    upper, rows = [], []
    for source in DATASETS:
        runs = fl_runs(rng, source, rules, n_seeds=n_seeds, n_rounds=n_rounds)
        for m in metrics:
            vals = _metric(runs, m)
            mean, up, half = upper_ci(_slopes(vals, x))
            upper.append(up)
            rows.append(dict(dataset=source, metric=m, means=vals.mean(axis=1),
                             slope=mean, ci=[mean - half, up]))
    return upper, rows


@claim("subtrunc.fl.dissimilarity_falls_with_lambda", ref="Table II, Sec. V-B", kind="remark",
       expected="violated",
       statement="On label-skewed logistic regression, SubTrunc's client dissimilarity falls "
                 "as lam grows over the paper's grid.",
       quick=QUICK, full=FULL)
def falls_with_lambda(*, rng, n_seeds, n_rounds, lams):
    """Per-seed slope of dissimilarity vs lam; holds if every interval is below 0. Expected
    ``violated``: digits falls mildly (std 2.34 -> 2.16 from lam 0.01 to 0.95) but synthetic
    rises (3.26 -> 3.66)."""
    rules = [SelectionRule("subtrunc", lam=lam) for lam in lams]
    upper, rows = _trend(rng, rules, lams, METRICS, n_seeds, n_rounds)
    return Evidence(measured=upper, theoretical=[0.0] * len(upper), relation="<=",
                    tolerance=CI, details={"lambdas": list(lams), "rows": rows})


WINDOWS = (2, 5, 10)


@claim("subtrunc.fl.participation_evens_with_window", ref="Sec. III-B, Table III",
       kind="remark", expected="holds",
       statement="A larger UnionFL window (mu = 1) spreads participation more evenly (lower "
                 "Gini coefficient of per-client participation counts).",
       quick=dict(n_seeds=QUICK["n_seeds"], n_rounds=QUICK["n_rounds"]),
       full=dict(n_seeds=FULL["n_seeds"], n_rounds=FULL["n_rounds"]))
def participation_window(*, rng, n_seeds, n_rounds):
    """Per-seed slope of the participation Gini vs window (2, 5, 10); expected ``holds``:
    0.46 -> 0.35 -> 0.27 (synthetic) and 0.34 -> 0.27 -> 0.24 (digits), many standard
    errors apart. DivFL's Gini (about 0.4-0.57) and Random's (0.17) are in details."""
    rules = [SelectionRule("unionfl", window=w) for w in WINDOWS]
    upper, rows = _trend(rng, rules, WINDOWS, ("participation_gini",), n_seeds, n_rounds)
    ref = {s: {r.label(): float(_metric(fl_runs(rng, s, [r], n_seeds=n_seeds,
                                                n_rounds=n_rounds), "participation_gini").mean())
               for r in (SelectionRule("divfl"), SelectionRule("random"))} for s in DATASETS}
    return Evidence(measured=upper, theoretical=[0.0] * len(upper), relation="<=",
                    tolerance=CI, details={"windows": WINDOWS, "rows": rows, "reference": ref})


@claim("subtrunc.fl.dissimilarity_falls_with_window", ref="Table III, Sec. V-C", kind="remark",
       expected="violated",
       statement="On label-skewed logistic regression, a larger UnionFL window lowers client "
                 "dissimilarity.",
       quick=dict(n_seeds=QUICK["n_seeds"], n_rounds=QUICK["n_rounds"]),
       full=dict(n_seeds=FULL["n_seeds"], n_rounds=FULL["n_rounds"]))
def dissimilarity_window(*, rng, n_seeds, n_rounds):
    """Per-seed slope of dissimilarity vs window; expected ``violated``: not monotone in our
    runs (synthetic std 3.39, 3.25, 3.42; digits 2.24, 1.93, 2.00), matching the paper's own
    CIFAR10 column, which also rises."""
    rules = [SelectionRule("unionfl", window=w) for w in WINDOWS]
    upper, rows = _trend(rng, rules, WINDOWS, METRICS, n_seeds, n_rounds)
    return Evidence(measured=upper, theoretical=[0.0] * len(upper), relation="<=",
                    tolerance=CI, details={"windows": WINDOWS, "rows": rows})
