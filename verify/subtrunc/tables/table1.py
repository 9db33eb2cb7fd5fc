r"""Table I of SubTrunc, re-simulated: SubTrunc against DivFL and random selection.

Re-simulations on the label-skewed stand-in problems of :mod:`verify.subtrunc.fairness`,
with its margin rule, shared runs and profiles (quick: skipped as underpowered; full:
30 seeds x 100 rounds). The printed numbers' claims are in :mod:`paper_checks.subtrunc`.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import claim
from flbounds.selection import SelectionRule

from ..fairness import (
    DATASETS,
    DECIDING,
    LAMS,
    QUICK_SKIP,
    RUNS_FULL,
    SUBTRUNC,
    _margin_evidence,
    _paired_rows,
    _skipped,
    _trend_rows_of,
    decide_family,
    decide_row,
    trend_cell,
    trend_grid,
)
from . import TABLE1


@claim("subtrunc.fl.subtrunc_below_divfl", ref="Table I, Sec. V-A", kind="reproduction",
       expected="inconclusive", result=TABLE1, parts=("subtrunc_lowest",),
       statement="On label-skewed logistic regression (synthetic, digits), SubTrunc (lam = 0.95, "
                 "b = 1.1, ln(1+x)) lowers client dissimilarity (std, MAD) vs DivFL by at least "
                 "1% of DivFL's.", quick=QUICK_SKIP, full=RUNS_FULL)
def subtrunc_below_divfl(*, rng, n_seeds, n_rounds, decide):
    """SubTrunc - DivFL, margin rule of the module docstring. ``inconclusive`` at quick
    (runs skipped, underpowered). Full (30 seeds x 100 rounds, seed 0): ``inconclusive``
    too - std -0.19 [-0.41, +0.02] pp (synthetic, delta 0.039) and -0.06 [-0.23, +0.11] pp
    (digits, delta 0.020); MAD -0.19 [-0.39, +0.00] and -0.04 [-0.19, +0.12]: every
    interval contains -delta, so neither the paper's
    reduction nor its absence is resolved (the point estimates are in the paper's direction).
    Why small: H <= lam b = 1.05 while G's gains sum gradient distances over 100 clients, so
    H mostly breaks near-ties among the greedy picks; the paper's own gaps are mostly within
    one printed std as well."""
    if not decide:
        return _skipped(n_seeds, n_rounds)
    rows = _paired_rows(rng, SUBTRUNC, SelectionRule("divfl"), DECIDING, n_seeds, n_rounds)
    return _margin_evidence(rows, n_seeds, n_rounds)


@claim("subtrunc.fl.subtrunc_below_random", ref="Table I, Sec. V-A", kind="reproduction",
       expected="inconclusive", result=TABLE1, parts=("subtrunc_lowest",),
       expected_full="reproduced",
       statement="On label-skewed logistic regression (synthetic, digits), SubTrunc (lam = 0.95) "
                 "lowers client dissimilarity (std, MAD) vs random selection by at least 1% of "
                 "random's.", quick=QUICK_SKIP, full=RUNS_FULL)
def subtrunc_below_random(*, rng, n_seeds, n_rounds, decide):
    """SubTrunc - Random, margin rule. ``inconclusive`` at quick (skipped). Full (seed 0):
    ``reproduced`` - std -1.06 [-1.62, -0.50] pp (synthetic, delta 0.048), -0.60 [-1.03, -0.17]
    (digits, delta 0.026); MAD -1.03 [-1.54, -0.51] and -0.52 [-0.91, -0.12]: every upper
    end is below -delta, the paper's Table I ordering is reproduced at a practical size."""
    if not decide:
        return _skipped(n_seeds, n_rounds)
    rows = _paired_rows(rng, SUBTRUNC, SelectionRule("random"), DECIDING, n_seeds, n_rounds)
    return _margin_evidence(rows, n_seeds, n_rounds)


#: the rules of the max-min claim, one cell per (dataset, rule): the lam grid (SubTrunc at
#: lam = 0.95 among them), DivFL and Random
MAXMIN_RULES = [*(SelectionRule("subtrunc", lam=lam) for lam in LAMS), SelectionRule("divfl"),
                SelectionRule("random")]


def _maxmin_grid(*, rng, n_seeds, n_rounds, decide):
    return trend_grid(rng, MAXMIN_RULES, metrics=("max_min",), n_seeds=n_seeds,
                      n_rounds=n_rounds, decide=decide)


def _maxmin_rows(cells):
    """(vs DivFL, vs Random, lam trend) rows of max-min from the cells' outputs: the rows
    ``_paired_rows`` and ``_trend_rows`` give on the same runs."""
    n = len(MAXMIN_RULES)
    vs_divfl, vs_random, trend = [], [], []
    for i, source in enumerate(DATASETS):
        group = cells[i * n:(i + 1) * n]
        value = {rule: np.array(c["max_min"], dtype=float)
                 for rule, c in zip(MAXMIN_RULES, group, strict=True)}
        for rows, other in ((vs_divfl, SelectionRule("divfl")),
                            (vs_random, SelectionRule("random"))):
            a, b = value[SUBTRUNC], value[other]
            rows.append(dict(dataset=source, metric="max_min", mean_a=float(a.mean()),
                             mean_b=float(b.mean()), **decide_row(a - b, float(b.mean()))))
        trend += _trend_rows_of(source, {"max_min": np.array(
            [value[SelectionRule("subtrunc", lam=lam)] for lam in LAMS])}, LAMS)
    return vs_divfl, vs_random, trend


@claim("subtrunc.fl.maxmin_below_divfl", ref="Table I, Sec. V-A", kind="reproduction",
       expected="inconclusive", result=TABLE1, parts=("subtrunc_lowest",),
       statement="With client dissimilarity read as max-min of per-client accuracy, SubTrunc "
                 "(lam = 0.95) lowers it vs DivFL by at least 1% of DivFL's.",
       quick=QUICK_SKIP, full=RUNS_FULL, cells=dict(grid=_maxmin_grid, run=trend_cell))
def maxmin_below_divfl(*, rng, cells, n_seeds, n_rounds, decide):
    """Max-min is the noisiest reading of the paper's undefined metric (spec 004 s.1.6 finds
    std or MAD plausible), so it is its own claim rather than part of the std/MAD rows; the
    SubTrunc - Random and lam-trend max-min rows are in details. ``inconclusive`` at quick
    (skipped, underpowered). Note: at 4 seeds x 40 rounds (seed 0) the synthetic max-min
    difference was +0.65 [+0.35, +0.94] pp, an interval on the wrong side that this rule
    would call ``not-reproduced``; the 30-seed x 100-round run does not confirm it (below), so a
    4-seed t-interval of this heavy-tailed statistic is not used to decide. Full (seed 0):
    ``inconclusive`` - -0.53 [-1.24, +0.18] pp (synthetic, delta 0.13), -0.12 [-0.63,
    +0.38] (digits, delta 0.063). In details: vs Random the max-min reduction is resolved
    (-2.91 [-4.59, -1.23] and -1.76 [-2.98, -0.54]), the lam trend is not. Each (dataset,
    rule) of the eight rules is a cell (:func:`~verify.subtrunc.fairness.trend_cell`)."""
    if not decide:
        return _skipped(n_seeds, n_rounds)
    rows, vs_random, trend = _maxmin_rows(cells)
    return _margin_evidence(rows, n_seeds, n_rounds, vs_random=decide_family(vs_random),
                            lam_trend=decide_family(trend))
