"""Claims that repeat a run share it (verify.fedals.mlp_cells, released_code, thm4_3.eq56,
thm4_1.iid_discussion):
their rows are bit for bit the same whether the run is computed by the claim itself, read
from the run store after another claim computed it in another process, or computed with no
store at all; and a shared run is computed once."""

import json
import multiprocessing

import pytest

from flbounds.ledger import get
from flbounds.ledger.api.result import to_jsonable
from flbounds.ledger.engine.runs import RUN_STORE_ENV, RUNS_FILE
from verify.fedals import mlp_cells

SMALL = dict(n_seeds=3, n_steps=20, n_test=40)
#: (claim that computes first, claim that reads its runs, overrides of both)
PAIRS = [("fedals.table2.interior_optimum", "fedals.v9.gap_falls_with_alpha", SMALL),
         ("fedals.table1.scaffold_columns", "fedals.v9.accuracy_alpha10_beats_fedavg", SMALL),
         ("fedals.table3.intermediate_split", "fedals.remark51.train_risk_vs_tau", SMALL),
         ("fedals.authors_check.kappa_dropped", "fedals.authors_check.bound_with_kappa",
          dict(n_draws=20, pool_size=60)),
         ("fedals.thm43.eq56_follows_from_thmB1", "fedals.thm43.eq56_printed",
          dict(n_draws=20, local_steps=[1, 5])),
         ("fedals.thmB1.proof_steps", "fedals.thmB1.bound_vs_gap_in_tau", dict(n_draws=30)),
         ("fedals.def7.literal_is_degenerate", "fedals.thm43.gap_falls_with_tau",
          dict(n_draws=30, local_steps=[1, 2, 5])),
         ("fedals.thm43.literal_equals_round_gap", "fedals.thm43.per_round_bound",
          dict(n_draws=30, local_steps=[1, 5])),
         ("fedals.d1.inverse_square_slope", "fedals.d1.sole_iid_term",
          dict(n_draws=30, n_clients=[2, 4]))]


def _row(claim_id, overrides):
    row = get(claim_id).check(seed=0, profile="quick", **overrides)
    assert row.verdict != "error", row.traceback
    return json.dumps(to_jsonable([row.measured, row.theoretical, row.tolerance, row.details,
                                   row.verdict, row.reason]), sort_keys=True)


def _check_in_child(path, claim_id, overrides):
    import os
    os.environ[RUN_STORE_ENV] = path
    _row(claim_id, overrides)


@pytest.mark.parametrize(("first", "second", "overrides"), PAIRS)
def test_a_run_read_back_gives_the_claims_own_numbers(tmp_path, monkeypatch, first, second,
                                                      overrides):
    monkeypatch.delenv(RUN_STORE_ENV, raising=False)
    alone = _row(second, overrides)
    path = str(tmp_path / RUNS_FILE)
    child = multiprocessing.get_context("spawn").Process(target=_check_in_child,
                                                         args=(path, first, overrides))
    child.start()
    child.join(300)
    assert child.exitcode == 0
    monkeypatch.setenv(RUN_STORE_ENV, path)
    assert _row(second, overrides) == alone      # the other claim's process ran it first
    assert _row(second, overrides) == alone      # every run of it now read back


def test_a_shared_mlp_run_is_computed_once(tmp_path, monkeypatch):
    monkeypatch.setenv(RUN_STORE_ENV, str(tmp_path / RUNS_FILE))
    calls = []
    real = mlp_cells.alpha_sweep

    def counted(rng, **kw):
        calls.append((rng.bit_generator.state["state"]["state"], kw["alphas"][0],
                      kw["controls"][0], kw["local_steps"], kw["phi_layers"]))
        return real(rng, **kw)

    monkeypatch.setattr(mlp_cells, "alpha_sweep", counted)
    for claim_id in ("fedals.table2.interior_optimum", "fedals.v9.gap_falls_with_alpha",
                     "fedals.table1.scaffold_columns",
                     "fedals.v9.accuracy_alpha10_beats_fedavg",
                     "fedals.table3.intermediate_split", "fedals.remark51.train_risk_vs_tau"):
        _row(claim_id, SMALL)
    assert len(calls) == len(set(calls))
    # the non-iid stream: alpha 1, 5, 10, 25, 100, phi = 1 or 3 layers, tau 1, 25, 125; the
    # SCAFFOLD stream: FedAvg, FedALS and both with SCAFFOLD
    assert len(calls) == 5 + 2 + 3 + 4
