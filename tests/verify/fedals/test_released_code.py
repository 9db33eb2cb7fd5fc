"""The authors' check runs one cell per K: a K's row depends on its own draws only (the pool
is shared), and the three claims combine the same cells."""

import numpy as np

from flbounds.ledger import get
from flbounds.ledger.engine.runs import RUN_STORE_ENV
from verify.fedals import released_code

SMALL = dict(n_classes=3, total_samples=60, lam=0.05, pool_size=60, n_draws=12)


def _rows(n_clients):
    rng = np.random.default_rng(np.random.SeedSequence(0))
    cells = released_code._authors_grid(rng=rng, n_clients=n_clients, **SMALL)
    return {c["K"]: released_code._authors_cell(**c) for c in cells}, cells


def test_a_cell_keeps_its_numbers_when_another_k_is_dropped(monkeypatch):
    monkeypatch.delenv(RUN_STORE_ENV, raising=False)
    both, cells = _rows([2, 5])
    alone, _ = _rows([2])
    assert alone[2] == both[2]
    assert cells[0]["state"] == cells[1]["state"] and cells[0]["seed"] != cells[1]["seed"]


def test_the_three_claims_read_the_same_cells(monkeypatch):
    monkeypatch.delenv(RUN_STORE_ENV, raising=False)
    rows = [get(i).check(seed=0, profile="quick", n_clients=[2, 5], **SMALL)
            for i in ("fedals.authors_check.bound_with_kappa",
                      "fedals.authors_check.kappa_dropped",
                      "fedals.authors_check.plotted_curve_is_bound")]
    assert [r.verdict for r in rows] == ["holds", "holds", "violated"]
    assert rows[0].measured == rows[1].measured                 # the gaps
    assert rows[0].theoretical == rows[2].theoretical           # the bounds
    assert rows[1].theoretical == rows[2].measured              # the plotted curves
