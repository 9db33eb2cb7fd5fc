"""The evidence behind SAFARI's accusations and their corrected companions: each claim changes
verdict when its bug is planted (a wrong constant, a wrong transcription, a broken
hypothesis)."""

import numpy as np
import pytest

import paper_checks.safari as tables
from flbounds.ledger import get


def test_fmnist_check_uses_the_integer_print_and_still_fails():
    """80 vs 80.71 exceeds the 0.5 rounding of an integer print; a Table 7 entry of 80.5
    would be within it."""
    assert get("safari.tables.fmnist_fedavg_consistent").check(seed=0).verdict == "violated"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tables, "T7_FEDAVG", 80.5)
        assert get("safari.tables.fmnist_fedavg_consistent").check(seed=0).verdict == "holds"


def test_both_readings_of_the_m_sentence():
    """The literal reading fails and the other holds; swapping m = 1 and the largest m in
    Table 10 (a planted transcription error) flips the second."""
    assert get("safari.tables.m_negative_effect_text").check(seed=0).verdict == "violated"
    assert get("safari.tables.small_m_hurts_reading").check(seed=0).verdict == "holds"
    swapped = dict(tables.T10)
    swapped[1], swapped[6] = tables.T10[6], tables.T10[1]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tables, "T10", swapped)
        assert get("safari.tables.small_m_hurts_reading").check(seed=0).verdict == "violated"


def test_appendix_spread_check_catches_a_cell_outside_the_seeds():
    """Table 1's MNIST s = 4, p = 1 entry moved by 0.2 (the std there is 0.04) is no longer
    one of Table 8's runs."""
    assert get("safari.tables.appendix_grids_contain_main_runs").check(seed=0).verdict == "holds"
    moved = {k: dict(v) for k, v in tables.T1.items()}
    row = list(moved["mnist"][4])
    row[3] += 0.2
    moved["mnist"][4] = tuple(row)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tables, "T1", moved)
        out = get("safari.tables.appendix_grids_contain_main_runs").check(seed=0)
    assert out.verdict == "violated"


def test_shrunk_thm4_counterexample_needs_the_q_condition():
    """The shrunk counterexample is violated with every hypothesis true; started at x_0 = 1.5
    the printed q-condition fails on the seeds and the same run is not-applicable."""
    claim = get("safari.thm4.printed_bound_shrunk")
    out = claim.check(seed=0)
    assert out.verdict == "violated"
    assert out.details["ratio_measured_over_bound"] > 1.5
    moved = claim.check(seed=0, x0=1.5)
    assert moved.verdict == "not-applicable"
    assert any(k.startswith("q:") and v is False for k, v in moved.hypotheses.items())


def test_corrected_claims_name_their_printed_claims():
    pairs = {"safari.thm1.chernoff_step": "safari.thm1.binomial_parameter",
             "safari.assumption2.equality_inside": "safari.assumption2.example_fails_outside",
             "safari.assumption2.mixture_alpha": "safari.assumption2.endpoint_target",
             "safari.thm4.q_condition_min_reading": "safari.thm4.printed_bound",
             "safari.tables.small_m_hurts_reading": "safari.tables.m_negative_effect_text"}
    for fixed, printed in pairs.items():
        assert get(fixed).corrects == printed
        assert get(printed).expected == "violated"
    assert np.isfinite(get("safari.thm4.printed_bound_shrunk").check(seed=0).measured)


def _scaled(fn, factor):
    def wrapped(*args, **kwargs):
        return factor * fn(*args, **kwargs)
    return wrapped


def test_linear_reading_claim_accuses_that_reading():
    """safari.thm5.anisotropic_homogeneous_bound checks the part bound_linear (the q-condition
    read in the proof's linear form, a predicate evaluated per round and true): a bound
    planted 100 times too small is then a violation of that reading, not not-applicable."""
    import verify.safari.thm5.anisotropic as mod

    claim_id = "safari.thm5.anisotropic_homogeneous_bound"
    assert get(claim_id).check(seed=0).verdict == "holds"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mod, "_thm5_bound", _scaled(mod._thm5_bound, 0.01))
        assert get(claim_id).check(seed=0).verdict == "violated"


@pytest.mark.parametrize("claim_id, module, name, factor", [
    # the bound is 2-3 orders of magnitude loose there: a 1e4 planted error is needed
    ("safari.thm5.anisotropic_heterogeneous_conclusion", "verify.safari.thm5.anisotropic",
     "_thm5_bound", 1e-3),
    ("safari.cor2.rate", "verify.safari.cor2", "_thm5_bound", 0.1),
    ("safari.cor2.rate_anisotropic", "verify.safari.cor2", "_thm5_bound", 0.05),
    ("safari.cor1.linear_speedup", "verify.safari.cor1", "thm4_rhs", 0.1),
    ("safari.cor1.rate_first_sentence", "verify.safari.cor1", "thm4_rhs", 0.1),
])
def test_bound_claims_fail_when_the_bound_is_planted_too_small(claim_id, module, name,
                                                               factor):
    """Each gate is the theorem's own bound: a bound planted too small crosses it. These
    claims read Theorem 4's or 5's q-condition in the proof's linear form (declared outside)
    or leave it unevaluated, so the crossing cannot accuse the paper: it turns the verdict
    from holds to not-applicable, naming the hypothesis."""
    import importlib
    mod = importlib.import_module(module)
    assert get(claim_id).check(seed=0).verdict == "holds"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mod, name, _scaled(getattr(mod, name), factor))
        out = get(claim_id).check(seed=0)
    assert out.verdict == "not-applicable"
    assert out.reason.startswith("cannot accuse the paper")


def test_heterogeneous_theorem5_is_not_applicable_by_its_q_condition():
    out = get("safari.thm5.anisotropic_heterogeneous").check(seed=0)
    assert out.verdict == "not-applicable"
    assert any(k.startswith("q:") and v is False for k, v in out.hypotheses.items())
    # at eta_s = 0.05 the homogeneous companion's linear q-condition fails too
    moved = get("safari.thm5.anisotropic_homogeneous_bound").check(seed=0, steps=[0.05])
    assert moved.verdict == "not-applicable"


def test_figure2_rerun_needs_the_server_rounds():
    """Reproduced at q = 0.4; with q planted at 1 (SAFARI = FedAvg, no server data used) the
    gain cannot grow with n_T and the re-run does not reproduce the figure."""
    import verify.safari.tables.figure2 as fig2
    claim = get("safari.figure2.accuracy_grows_with_server_size")
    assert claim.kind == "reproduction"
    assert claim.check(seed=0).verdict == "reproduced"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fig2, "Q_FIG2", 1.0)
        assert claim.check(seed=0).verdict == "not-reproduced"


def test_theorem5_exact_attack_matches_monte_carlo_and_finds_a_planted_bound():
    import verify.safari.thm5.attacks as thm5_attacks
    from flbounds.falsify.surfaces import get_surface
    from verify.safari.thm5.anisotropic import X0, anisotropic_problem
    from verify.safari.thm5.runs import _thm5_run
    prob = anisotropic_problem(False)
    errs = [_thm5_run(c, prob, q=0.5, step_server=0.05, n_rounds=100, x0=X0,
                      eligible=np.arange(6), n_sampled=3, local_steps=5, sigma_G2=0.0)[0]
            for c in np.random.default_rng(0).spawn(2000)]
    exact = thm5_attacks.exact_final_error(L=2.0, mu=0.5, q=0.5, eta_s=0.05, K=5, m=3, R=100,
                                           sigma2=0.01, sigma_s2=0.01,
                                           e0=np.asarray(X0) - prob.x_star)
    assert abs(np.mean(errs) - exact) <= 4 * np.std(errs, ddof=1) / np.sqrt(len(errs))
    surface = get_surface("safari.thm5.anisotropic_homogeneous_bound")
    point = surface.fixed_instances()[0]
    assert surface.effective_validator()(**point) is True
    assert surface.ratio(**point) < 1
    # a step beyond 2/(L + mu) is rejected
    assert isinstance(surface.effective_validator()(**dict(point, c=1.5)), str)
    with pytest.MonkeyPatch.context() as mp:   # the bound without delta_bar
        mp.setattr(thm5_attacks, "thm5", lambda **kw: (1 - 2 * kw["step"] * kw["L"] * kw["mu"]
                                                       / (kw["L"] + kw["mu"])) ** kw["R"]
                   * kw["dist0"] * 1e-3)
        assert surface.ratio(**point) > 1


def test_theorem4_exact_attack_matches_monte_carlo_and_finds_a_planted_bound():
    import verify.safari.thm4.attacks as thm4_attacks
    from flbounds.falsify.surfaces import get_surface
    from verify.safari.cor1 import _avg_grad_norm, _problem
    prob = _problem()
    vals = [_avg_grad_norm(c, prob, m=2, K=3, R=64)[0]
            for c in np.random.default_rng(7).spawn(4000)]
    exact = thm4_attacks.exact_average_grad_norm(
        L=0.1, ratio=1.0, q=0.5, eta_s=np.sqrt(6 / 64), K=3, m=2, R=64, sigma2=1.0,
        sigma_s2=1 / 6, e0=np.array([-1.0, 0.5]))
    assert abs(np.mean(vals) - exact) <= 4 * np.std(vals, ddof=1) / np.sqrt(len(vals))
    surface = get_surface("safari.thm4.homogeneous_bound")
    point = surface.fixed_instances()[0]
    assert surface.ratio(**point) < 1
    assert isinstance(surface.effective_validator()(**dict(point, c=1.5)), str)
    with pytest.MonkeyPatch.context() as mp:   # the right side without its noise terms
        mp.setattr(thm4_attacks, "thm4_rhs",
                   lambda **kw: 2 * kw["delta_f"] / (kw["n_rounds"] * kw["step_server"]))
        assert surface.ratio(**dict(point, R=10_000)) > 1


def test_rate_gate_comes_from_lemma1s_complexity():
    from verify.safari._thresholds import theorem_rate_gate
    assert theorem_rate_gate(100.0) == pytest.approx(-1 + 1 / np.log(100))
    assert theorem_rate_gate(100.0, beta=0.5) == pytest.approx((-1 + 1 / np.log(100)) / 1.5)
    with pytest.raises(ValueError, match="n_min"):
        theorem_rate_gate(2.0)


@pytest.mark.parametrize("claim_id", ["safari.thm2.pooled_rate",
                                      "safari.thm2.gain_constant_ratio",
                                      "safari.thm2.rate_when_boundary_missed"])
def test_rate_claims_enforce_the_gate(claim_id):
    """A gate planted steeper than any slope the runs can show (-3) is violated."""
    import verify.safari.thm2 as thm2
    assert get(claim_id).check(seed=0).verdict == "holds"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(thm2, "theorem_rate_gate", lambda n_min, **kw: -3.0)
        assert get(claim_id).check(seed=0).verdict == "violated"


def test_remark2_negative_control_is_rejected_by_the_gate():
    out = get("safari.remark2.server_data_from_p_prime").check(seed=0)
    assert out.verdict == "holds" and out.details["control_rejected"] is True


def test_tsybakov_instance_meets_assumption1_at_beta_one_half():
    import verify.safari.thm3_tsybakov as tsy
    assert tsy.bernstein_alpha() == pytest.approx(np.sqrt(2 * tsy.SCALE), rel=1e-9)
    out = get("safari.thm3.tsybakov_no_worse_than_centralized").check(seed=0)
    assert out.verdict == "holds"
    assert all(v is True for v in out.hypotheses.values())
    assert out.details["rate_exponent"] == pytest.approx(-2 / 3)


@pytest.mark.parametrize("claim_id", ["safari.thm3.no_worse_than_centralized",
                                      "safari.thm3.tsybakov_no_worse_than_centralized"])
def test_theorem3_claims_enforce_the_rate_gate(claim_id):
    import verify.safari.thm3 as thm3
    import verify.safari.thm3_tsybakov as tsy
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(thm3, "theorem_rate_gate", lambda n_min, **kw: -3.0)
        mp.setattr(tsy, "theorem_rate_gate", lambda n_min, **kw: -3.0)
        assert get(claim_id).check(seed=0).verdict == "violated"


def test_a_beta_outside_assumption1_is_not_applicable():
    """beta_P = 0 is outside Assumption 1's (0, 1]: the claim's numbers stop counting."""
    import verify.safari.thm3_tsybakov as tsy
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tsy, "BETA_P", 0.0)
        assert get("safari.thm3.tsybakov_no_worse_than_centralized").check(
            seed=0).verdict == "not-applicable"


def test_digits_reruns_decide_on_the_interval_or_stay_inconclusive():
    """Detected gain -> reproduced; a gain excluded above 2 points -> not-reproduced;
    an interval that does neither -> inconclusive (never a paper error)."""
    from verify.safari.tables.digits import undecided_gain
    assert undecided_gain(0.1, 5.0) == ""          # reproduced
    assert undecided_gain(-0.3, 0.2) == ""         # not-reproduced: excludes 2 points
    assert "too few seeds" in undecided_gain(-0.3, 4.0)
    for cid in ("safari.digits.gain_grows_as_p_falls", "safari.digits.no_gain_iid",
                "safari.table5.every_q_beats_fedavg"):
        assert get(cid).kind == "reproduction"
    out = get("safari.digits.literal_single_server_step").check(seed=0)
    assert out.verdict == "not-reproduced" and out.details["gain_ci95"][1] < 2.0
    # two seeds leave the interval wide open: inconclusive, not a paper error
    short = get("safari.digits.gain_grows_with_server_size").check(seed=0, n_seeds=2,
                                                                   n_rounds=20)
    assert short.verdict in ("inconclusive", "reproduced")


def test_safl_slope_is_judged_against_the_exact_rate():
    import verify.safari.thm1.monte_carlo as mc
    claim = get("safari.thm1.safl_geometric_fall")
    assert claim.check(seed=0).verdict == "holds"
    real = mc.two_point_distribution
    with pytest.MonkeyPatch.context() as mp:   # a planted x_2 mass half the true one
        mp.setattr(mc, "two_point_distribution",
                   lambda M, m: (real(M, m)[0] / 2, *real(M, m)[1:]))
        assert claim.check(seed=0).verdict == "violated"


def test_exact_stationary_gradient_norm():
    """q = 0 is server SGD on F = ||x||^2/2 + const: E||x||^2 = eta sigma_s^2/(2 - eta); the
    claim fails when its exact value is planted 10% high."""
    import verify.safari.alg1 as alg1
    from verify.safari.instances import two_group_problem
    prob = two_group_problem()
    got = alg1.stationary_grad_norm2(prob, q=0.0, step_client=0.004, step_server=0.01,
                                     local_steps=5, n_sampled=5, sigma2=0.01, sigma_s2=0.01)
    assert got == pytest.approx(0.01 * 0.01 / (2 - 0.01), rel=1e-12)
    with pytest.raises(ValueError, match="reference instance"):
        alg1.stationary_grad_norm2(prob.__class__.isotropic(np.eye(3)), q=0.5,
                                   step_client=0.004, step_server=0.01, local_steps=5,
                                   n_sampled=1, sigma2=0.01, sigma_s2=0.01)
    claim = get("safari.alg1.floor_vs_closed_form")
    assert claim.check(seed=0).verdict == "holds"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(alg1, "stationary_grad_norm2",
                   _scaled(alg1.stationary_grad_norm2, 1.1))
        assert claim.check(seed=0).verdict == "violated"
