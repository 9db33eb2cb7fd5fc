"""A trend claim split into (dataset, rule) cells gives the one-task rows, bit for bit."""

import json

import numpy as np
import pytest

from flbounds.ledger.api.result import to_jsonable
from verify.subtrunc import fairness as F
from verify.subtrunc.tables.table2 import LAMBDA_RULES
from verify.subtrunc.tables.table3 import WINDOW_RULES


def _rows_in_one_task(rules, x):
    rng = np.random.default_rng(np.random.SeedSequence(12345))
    return F._trend_rows(rng, rules, x, F.DECIDING, 3, 8)


@pytest.mark.parametrize("rules, x", [(LAMBDA_RULES[:3], F.LAMS[:3]),
                                      (WINDOW_RULES, F.WINDOWS)], ids=["lam", "window"])
def test_cells_give_the_one_task_rows(rules, x):
    want = _rows_in_one_task(rules, x)
    F._CACHE.clear()
    rng = np.random.default_rng(np.random.SeedSequence(12345))
    cells = json.loads(json.dumps(F.trend_grid(rng, rules, metrics=F.DECIDING, n_seeds=3,
                                               n_rounds=8, decide=True)))
    outs = [json.loads(json.dumps({k: np.asarray(v).tolist() for k, v in
                                   F.trend_cell(rng=None, **c).items()})) for c in cells]
    got = F.trend_rows_from_cells(outs, len(rules), x, F.DECIDING)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def test_an_undecided_profile_has_one_empty_cell():
    cells = F.trend_grid(np.random.default_rng(0), LAMBDA_RULES, metrics=F.DECIDING,
                         n_seeds=4, n_rounds=40, decide=False)
    assert cells == [dict(decide=False)]
    assert F.trend_cell(rng=None, **cells[0]) == {}


def test_maxmin_cells_give_the_one_task_evidence():
    """subtrunc.fl.maxmin_below_divfl split into (dataset, rule) cells: the same rows as the
    paired and trend rows computed in one task from the shared runs."""
    from flbounds.selection import SelectionRule
    from verify.subtrunc.tables import table1

    n_seeds, n_rounds = 3, 8
    rng = np.random.default_rng(np.random.SeedSequence(12345))
    pair = [F._paired_rows(rng, F.SUBTRUNC, SelectionRule(name), ("max_min",), n_seeds,
                           n_rounds) for name in ("divfl", "random")]
    trend = F._trend_rows(rng, [SelectionRule("subtrunc", lam=lam) for lam in F.LAMS],
                          F.LAMS, ("max_min",), n_seeds, n_rounds)
    want = F._margin_evidence(pair[0], n_seeds, n_rounds, vs_random=F.decide_family(pair[1]),
                              lam_trend=F.decide_family(trend))
    F._CACHE.clear()
    cells = json.loads(json.dumps(table1._maxmin_grid(rng=rng, n_seeds=n_seeds,
                                                      n_rounds=n_rounds, decide=True)))
    assert len(cells) == 2 * len(table1.MAXMIN_RULES)
    outs = [json.loads(json.dumps({k: np.asarray(v).tolist() for k, v in
                                   F.trend_cell(rng=None, **c).items()})) for c in cells]
    rows, vs_random, lam_trend = table1._maxmin_rows(outs)
    assert json.dumps(rows, sort_keys=True) == json.dumps(pair[0], sort_keys=True)
    assert json.dumps(vs_random, sort_keys=True) == json.dumps(pair[1], sort_keys=True)
    assert json.dumps(lam_trend, sort_keys=True) == json.dumps(trend, sort_keys=True)
    got = table1.maxmin_below_divfl(rng=rng, cells=outs, n_seeds=n_seeds, n_rounds=n_rounds,
                                    decide=True)
    assert json.dumps(to_jsonable(got.details), sort_keys=True) == json.dumps(
        to_jsonable(want.details), sort_keys=True)
    assert got.measured == want.measured
