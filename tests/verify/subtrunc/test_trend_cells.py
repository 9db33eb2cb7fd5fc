"""A trend claim split into (dataset, rule) cells gives the one-task rows, bit for bit."""

import json

import numpy as np

from verify.subtrunc import fairness as F
from verify.subtrunc.tables.table2 import LAMBDA_RULES


def _rows_in_one_task(rules, x):
    rng = np.random.default_rng(np.random.SeedSequence(12345))
    return F._trend_rows(rng, rules, x, F.DECIDING, 3, 8)


def test_cells_give_the_one_task_rows():
    rules, x = LAMBDA_RULES[:3], F.LAMS[:3]
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
