"""SAFARI Theorem 5 at its largest step: the shrunk witness breaks the printed bound exactly,
inside both readings of the printed q-condition; the attack's ratio is not rounding; the
corrected statement holds, and each claim changes verdict under a planted bug."""

from fractions import Fraction

import mpmath as mp
import pytest

import verify.safari.thm5.attacks as attacks
from flbounds.falsify.surfaces import get_surface
from flbounds.ledger import load_all
from verify.safari.thm5 import THM5
from verify.safari.thm5.large_step import (
    FOUND,
    _float64_ratio,
    _mp_recursion_ratio,
    witness_sides,
)

CLAIMS = load_all()


def _verdict(claim_id):
    return CLAIMS[claim_id].check(seed=0, profile="quick").verdict


def test_witness_breaks_the_printed_bound_exactly():
    exact, bound = witness_sides()
    assert isinstance(exact, Fraction) and isinstance(bound, Fraction)
    assert exact / bound > 2
    # eta_bar = 1 exactly: the bound is delta_bar alone, a client round flips x - x*
    inst = attacks._anisotropic_instance(**attacks.WITNESS)
    assert inst["eta_bar"] == 1.0 and inst["step_client"] * inst["mu"] == 2.0


def test_every_printed_hypothesis_holds_at_the_witness_and_the_proofs_do_not():
    inst = attacks._anisotropic_instance(**attacks.WITNESS)
    for part in ("bound", "bound_linear"):
        assert all(THM5.evaluate(inst, [part]).values())
    added = THM5.evaluate(inst, ["bound_corrected"])
    assert [k.split(":")[0] for k, v in added.items() if not v] == ["q_proof", "drift_step"]


def test_the_attack_ratio_is_not_rounding():
    f64 = _float64_ratio(FOUND)
    deep = _mp_recursion_ratio(FOUND)
    assert abs(f64 - deep) < 1e-13
    assert deep - 1 > 7e-5 > 1e-12


def test_the_quick_attack_starts_from_the_witness():
    surface = get_surface("safari.thm5.anisotropic_homogeneous_bound")
    assert surface.expected == "violated"
    ratio, ordered = surface.fixed_ratio()
    assert ratio > surface.threshold
    assert {k: ordered[0][k] for k in ("mu", "kappa", "q", "c", "K", "R")} == {
        k: attacks.WITNESS[k] for k in ("mu", "kappa", "q", "c", "K", "R")}
    assert surface.effective_validator()(**attacks.WITNESS) is True


def test_extended_evaluation_matches_float64_where_float64_is_accurate():
    point = dict(attacks.WITNESS, c=0.3, R=40, kappa=2.0, mu=1.5)
    assert abs(attacks.anisotropic_bound(**point) - _float64_ratio(point)) < 1e-13


def test_printed_claim_rests_on_the_starting_error(monkeypatch):
    """A planted SAFARI that starts at x* (x_0 ignored) stays under the bound: the verdict
    comes from the client round flipping x_0 - x*, not from the noise terms."""
    real = attacks.exact_final_error
    monkeypatch.setattr(attacks, "exact_final_error",
                        lambda **kw: real(**dict(kw, e0=[0 * e for e in kw["e0"]])))
    assert _verdict("safari.thm5.large_step_printed") == "holds"


def test_corrected_claim_fails_on_a_planted_unsquared_step(monkeypatch):
    """Server noise entering with eta_s instead of eta_s^2 (a step left unsquared): the
    corrected claim catches it."""
    real = attacks.exact_final_error
    monkeypatch.setattr(attacks, "exact_final_error",
                        lambda **kw: real(**dict(kw, sigma_s2=kw["sigma_s2"] / kw["eta_s"])))
    assert _verdict("safari.thm5.large_step_corrected") == "violated"


@pytest.mark.parametrize("claim_id", ["safari.thm5.large_step_printed",
                                      "safari.thm5.large_step_corrected"])
def test_claims_as_expected(claim_id):
    assert _verdict(claim_id) == CLAIMS[claim_id].expected


def test_float64_is_not_enough_where_one_minus_eta_bar_cancels(monkeypatch):
    """At R = 1 with eta_bar near 1 the float64 ratio is off by more than the 1e-12
    tolerance; the 50-digit one agrees with an 80-digit one to 1e-25."""
    point = {"mu": 1.9727885010149449, "kappa": 1.0001455844138976, "q": 0.05753724918372468,
             "c": 0.99999808711424, "K": 8, "m": 1, "R": 1, "sigma2": 1e-4, "sigma_s2": 1e-4,
             "e0": [-4.47597088921013, -4.768387602268495]}
    fifty = attacks.anisotropic_bound(**point)
    assert abs(_float64_ratio(point) - fifty) > 1e-11 * fifty
    monkeypatch.setattr(attacks, "DIGITS", 80)
    with mp.workdps(80):
        exact, bound = attacks.sides(**point)
        eighty = exact / bound
    assert abs(eighty - fifty) < 1e-15 * fifty  # fifty is rounded to float64 on return
