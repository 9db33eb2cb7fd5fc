"""The evidence behind SubTrunc's accusations and their corrected companions: each changes
verdict (or refuses to judge) when its bug is planted."""

import pytest

import verify.subtrunc.lemma1 as lemma1
from flbounds.ledger import get


def test_eq31_is_judged_on_the_exact_closed_form():
    out = get("subtrunc.eq31.noise_bound").check(seed=0)
    assert out.verdict == "violated"
    assert out.details["ratio_lhs_over_rhs"] == pytest.approx(1.147, abs=1e-3)


def test_eq31_refuses_to_judge_when_its_closed_form_disagrees_with_simulation():
    """A planted closed form 10% too large is caught by the Monte Carlo guard: the claim
    errors instead of accusing."""
    real = lemma1.eq31_closed_form

    def inflated(step, n_clients=1):
        lhs, rhs, fixed = real(step, n_clients)
        return 1.1 * lhs, rhs, fixed

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lemma1, "eq31_closed_form", inflated)
        assert get("subtrunc.eq31.noise_bound").check(seed=0).verdict == "error"


def test_corrected_zeta_step_starts_at_twelve():
    claim = get("subtrunc.thm1.one_minus_zeta_k_corrected")
    assert claim.corrects == "subtrunc.thm1.one_minus_zeta_k"
    assert claim.check(seed=0).verdict == "holds"
    assert claim.check(seed=0, first_k=11).verdict == "violated"
    assert claim.check(seed=0, first_k=13).verdict == "violated"  # 12 is the first, not 13


def test_corrected_claims_name_their_printed_claims():
    pairs = {"subtrunc.eq31.corrected": "subtrunc.eq31.noise_bound",
             "subtrunc.intro.nondecreasing_concave": "subtrunc.intro.concave_of_submodular",
             "subtrunc.prop3.exhaustive": "subtrunc.prop3.printed_phi_hypothesis",
             "subtrunc.prop4.statement": "subtrunc.prop4.proof",
             "subtrunc.thm1.statement_from_eq24": "subtrunc.thm1.recursion_factor",
             "subtrunc.unionfl.distorted_greedy": "subtrunc.sec3c.unionfl_greedy_guarantee"}
    gaps = {"subtrunc.prop4.proof"}  # an argument's gap outside the hypotheses: not-applicable
    for fixed, printed in pairs.items():
        assert get(fixed).corrects == printed
        assert get(printed).expected == ("not-applicable" if printed in gaps else "violated")


def test_prop4_gap_accuses_only_a_window_penalty(monkeypatch):
    """Eq. (15)'s non sequitur rests on a function that is no g_t: not-applicable, naming
    U_t; planted as if it were a window penalty (U_t's values given), it would be violated."""
    from verify.subtrunc import prop4

    res = get("subtrunc.prop4.proof").check(seed=0)
    assert res.verdict == "not-applicable" and "U_t" in res.reason
    real = prop4.Evidence
    monkeypatch.setattr(prop4, "Evidence", lambda **kw: real(**dict(
        kw, instance=dict(kw["instance"], recent=[False, False], window=1, k=1))))
    assert get("subtrunc.prop4.proof").check(seed=0).verdict == "violated"


def test_table_reruns_are_reproductions_and_undecided_rows_are_inconclusive():
    """The Sec. V re-runs never accuse the paper: resolved reductions reproduce, a resolved
    absence does not reproduce, anything else is inconclusive with the detectable effect."""
    import numpy as np

    from flbounds.ledger.api.result import reproduction_verdict
    from verify.subtrunc import fairness

    for cid in ("subtrunc.fl.subtrunc_below_divfl", "subtrunc.fl.dissimilarity_falls_with_window"):
        claim = get(cid)
        assert claim.kind == "reproduction"
        assert claim.check(seed=0).verdict == "inconclusive"
    rng = np.random.default_rng(0)

    def rows(shift):
        return [dict(dataset=d, metric=m, **fairness.decide_row(rng.normal(shift, 0.1, 30), 10.0))
                for d in fairness.DATASETS for m in fairness.DECIDING]

    clear = fairness._margin_evidence(rows(-1.0), 30, 100)
    absent = fairness._margin_evidence(rows(+1.0), 30, 100)
    noisy = fairness._margin_evidence(rows(-0.1), 30, 100)
    assert reproduction_verdict(clear.verdict()) == "reproduced"
    assert reproduction_verdict(absent.verdict()) == "not-reproduced"
    assert noisy.verdict() == "inconclusive" and "detectable" in noisy.undecided
