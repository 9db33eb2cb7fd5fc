"""FedALS printed statements and their corrected companions: each claim changes verdict when
the quantity it checks is planted with a wrong value."""

import numpy as np

import paper_checks.fedals as printed_numbers
from flbounds.ledger import load_all
from verify.fedals import alg3
from verify.fedals.remark4_2 import case2

CLAIMS = load_all()


def _verdict(claim_id):
    return CLAIMS[claim_id].check(seed=0, profile="quick").verdict


def test_alg3_corrected_fails_with_the_printed_control_arithmetic(monkeypatch):
    evidence = alg3._evidence
    monkeypatch.setattr(alg3, "_evidence", lambda control, params: evidence("printed", params))
    assert _verdict("fedals.alg3.corrected_scaffold_exact") == "violated"


def test_claim70_noniid_holds_if_the_participation_gap_were_zero(monkeypatch):
    real = case2._participation_gap

    def no_gap(*args):
        gap, risks, model = real(*args)
        return gap - gap.mean(), risks, model

    monkeypatch.setattr(case2, "_participation_gap", no_gap)
    assert _verdict("fedals.claim70.noniid") == "holds"


def test_table3_consistent_if_l16_matched_table1s_fedals(monkeypatch):
    table3 = dict(printed_numbers.TABLE3)
    table3[16] = printed_numbers.TABLE1_NONIID["fedals"]
    monkeypatch.setattr(printed_numbers, "TABLE3", table3)
    assert _verdict("fedals.table3.consistent_with_table1") == "holds"


def test_table3_reading_over_listed_rows_holds():
    """Reading (a): L = 16 is the best of the rows Table 3 lists, on every dataset."""
    rows = printed_numbers.TABLE3
    for j in range(3):
        assert max(rows, key=lambda L, j=j: rows[L][j][0]) == 16
    assert np.isclose(rows[16][2][0], 0.4782)
