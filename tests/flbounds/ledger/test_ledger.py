"""The ledger: derived verdicts, determinism across workers and backends, resume, errors."""

import json

import numpy as np
import pytest

from flbounds.ledger import Evidence, Tolerance, run_claims, select
from flbounds.ledger.api.registry import Claim, claim_seed_sequence

CHEAP = "focus.matrices"  # a fast, randomized selection (mass_preservation draws)


def _measured(results):
    return {r.id: json.dumps(r.measured) for r in results}


def test_verdict_is_derived_from_numbers():
    tol = Tolerance(0.1, "test", "fixed")
    assert Evidence(1.05, 1.0, "<=", tol).verdict() == "holds"
    assert Evidence(1.2, 1.0, "<=", tol).verdict() == "violated"
    assert Evidence(0.95, 1.0, ">=", tol).verdict() == "holds"
    assert Evidence([1.0, 2.0], [1.0, 2.3], "==", tol).verdict() == "violated"
    assert Evidence(0.5, (0.0, 0.4), "in", tol).verdict() == "holds"
    assert Evidence(float("nan"), 1.0, "<=", tol).verdict() == "violated"
    assert Evidence(5.0, 1.0, "<=", tol, applicable=False).verdict() == "not-applicable"
    with pytest.raises(ValueError, match="relation"):
        Evidence(1.0, 1.0, "<", tol)


def test_claim_that_raises_becomes_error():
    def broken(*, rng):
        """Always fails."""
        raise RuntimeError("boom")

    c = Claim(id="focus.test.broken", ref="-", kind="statement", statement="-",
              expected="holds", func=broken)
    r = c.check(seed=0)
    assert r.verdict == "error" and "boom" in r.reason and "RuntimeError" in r.traceback


@pytest.mark.parametrize("seed", [-1, "abc", 1.5, True, None])
def test_a_bad_seed_raises_before_the_claim_runs(seed):
    ran = []

    def func(*, rng):
        """Records that it ran."""
        ran.append(1)
        return Evidence(0.0, 1.0, "<=", Tolerance.exact())

    c = Claim(id="focus.test.seed", ref="-", kind="statement", statement="-",
              expected="holds", func=func)
    with pytest.raises(ValueError, match="seed"):
        c.check(seed=seed)
    assert ran == []


def test_rounding_tolerance_takes_arrays_and_refuses_bad_values():
    tol = Tolerance.rounding(np.array([1e-12, 2e-12]), "one bound per cell")
    assert Evidence([1.0, 2.0], [1.0, 2.0 - 1e-12], "==", tol).verdict() == "holds"
    assert Tolerance.rounding(np.float64(1e-9), "scalar").value == 1e-9
    for bad in (-1.0, float("nan"), np.array([1.0, -1.0])):
        with pytest.raises(ValueError, match="value"):
            Tolerance.rounding(bad, "bad")


def test_seed_sequence_depends_on_seed_and_id_only():
    a = np.random.default_rng(claim_seed_sequence(1, "x.y")).random(3)
    b = np.random.default_rng(claim_seed_sequence(1, "x.y")).random(3)
    c = np.random.default_rng(claim_seed_sequence(1, "x.z")).random(3)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    with pytest.raises(ValueError, match="seed"):
        claim_seed_sequence(-1, "x.y")


def test_pool_and_serial_give_identical_numbers(tmp_path):
    claims = select([CHEAP])
    serial = run_claims(claims, seed=3, workers=1)
    pooled = run_claims(claims, seed=3, workers=2)
    assert _measured(serial) == _measured(pooled)


def test_dask_local_cluster_gives_identical_numbers():
    distributed = pytest.importorskip("distributed")
    claims = select([CHEAP])
    serial = run_claims(claims, seed=5, workers=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = run_claims(claims, seed=5, scheduler=client)
    assert _measured(serial) == _measured(remote)


def test_resume_computes_only_unfinished(store):
    claims = select([CHEAP])
    seen = []

    def interrupt_after_two(done, total, result, elapsed):
        seen.append(result.id)
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_claims(claims, store=store, progress=interrupt_after_two)
    with store.transaction() as conn:   # a row damaged after the interruption
        conn.execute("INSERT INTO results (task_key, verdict, row) VALUES ('x', 'holds', ?)",
                     (b'{"id": "focus.matr',))
    assert len(store.load()) == 2

    computed = []
    results = run_claims(claims, store=store, resume=True,
                         progress=lambda d, t, r, e: computed.append(r.id))
    assert sorted(computed) == sorted(c.id for c in claims if c.id not in seen[:2])
    assert [r.id for r in results] == [c.id for c in claims]
    again = []
    run_claims(claims, store=store, resume=True,
               progress=lambda d, t, r, e: again.append(r.id))
    assert again == []


def test_select_rejects_unknown_pattern():
    with pytest.raises(ValueError, match="no.such.claim"):
        select(["no.such.claim"])


def test_expected_verdict_per_profile():
    def underpowered(*, rng, decide):
        """Decides only at full size."""
        if not decide:
            return Evidence(0.0, 0.0, "==", Tolerance.exact(), applicable=False,
                            reason="underpowered")
        return Evidence(1.0, 0.0, "<=", Tolerance.exact())

    c = Claim(id="focus.test.underpowered", ref="-", kind="remark", statement="-",
              expected="not-applicable", expected_full="violated", func=underpowered,
              quick=dict(decide=False), full=dict(decide=True))
    quick, full = c.check(profile="quick"), c.check(profile="full")
    assert (quick.verdict, quick.expected) == ("not-applicable", "not-applicable")
    assert (full.verdict, full.expected) == ("violated", "violated") and full.as_expected


def test_a_failed_rejection_is_inconclusive_never_violated():
    tol = Tolerance.exact()
    undecided = "no rejection at alpha = 0.01; smallest detectable difference 0.2"
    assert Evidence(0.3, 0.01, "<=", tol, undecided=undecided).verdict() == "inconclusive"
    assert Evidence(0.001, 0.01, "<=", tol, undecided=undecided).verdict() == "holds"
    assert Evidence(0.3, 0.01, "<=", tol).verdict() == "violated"


def _kind_claim(kind, expected, evidence):
    return Claim(id=f"focus.test.{kind}", ref="-", kind=kind, statement="-",
                 expected=expected, func=lambda *, rng: evidence)


def test_a_synthetic_rerun_is_reproduced_or_not_never_a_paper_error():
    tol = Tolerance.exact()
    shown = _kind_claim("reproduction", "reproduced", Evidence(1.0, 2.0, "<=", tol)).check()
    assert shown.verdict == "reproduced" and shown.as_expected
    missed = _kind_claim("reproduction", "reproduced", Evidence(3.0, 2.0, "<=", tol)).check()
    assert missed.verdict == "not-reproduced" and not missed.as_expected
    undecided = _kind_claim("statement", "holds",
                            Evidence(3.0, 2.0, "<=", tol, undecided="n = 10: power 0.2"))
    row = undecided.check()
    assert row.verdict == "inconclusive" and "power 0.2" in row.reason


def test_expected_verdicts_follow_the_claim_kind():
    from flbounds.ledger import claim

    for kind, expected in (("reproduction", "violated"), ("statement", "reproduced")):
        with pytest.raises(ValueError, match="expected must be one of"):
            claim(f"focus.test.bad_{kind}", ref="-", kind=kind, statement="-",
                  expected=expected)


def test_summaries_count_every_verdict_kind_apart():
    from flbounds.cli._progress import summary_table
    from flbounds.ledger.api.result import shown_verdicts

    tol = Tolerance.exact()
    rows = [_kind_claim("reproduction", "reproduced", Evidence(1.0, 2.0, "<=", tol)).check(),
            _kind_claim("statement", "holds", Evidence(1.0, 2.0, "<=", tol)).check()]
    assert shown_verdicts(rows) == ("holds", "violated", "not-applicable", "reproduced",
                                    "error")
    head = summary_table(rows, 1.0).splitlines()[0].split()
    assert head[:4] == ["paper", "claims", "holds", "violated"] and "reproduced" in head
    assert "inconclusive" not in head
