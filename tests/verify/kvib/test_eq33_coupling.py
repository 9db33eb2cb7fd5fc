"""The coupling LP behind K-Vib Thm 4.1's eq. (33) claims and attack: it solves at a point the
full-budget attack reached (an optimal p* with an entry of 4e-7, which made HiGHS report the
LP with both marginals infeasible), its law has both ISP marginals, and the factor-2 step
holds there while the printed step's gap is still found on the claim's instance."""

import itertools

import numpy as np

from verify.kvib.attacks_domain import eq33_factor_two
from verify.kvib.thm4_1.proof_gaps_descent import (
    _eq33_coupling,
    _eq33_instance,
    _isp_outcomes,
    _product_law,
)

Z = np.array([[-96.22272599276894, -99.92619986020973], [95.26444034549064, 97.95049263896411],
              [-7.13966296785884e-05, 5.422035465585395e-05]])
P = np.array([0.338059994668387, 0.3279543374165178, 0.6679724367303007])
P_STAR = np.array([0.6720464028541629, 0.6619399316441582, 4.343168844935993e-07])


def _marginal(law, bits_of, p):
    n = p.size
    out = _isp_outcomes(n)
    side = out[:, :n] if bits_of == "A" else out[:, n:]
    for bits in itertools.product([0, 1], repeat=n):
        mass = law[np.all(side == bits, axis=1)].sum()
        want = _product_law(np.array([bits], float), p)[0]
        assert abs(mass - want) <= 1e-7 * 8


def test_the_lp_solves_where_a_tiny_optimal_probability_broke_it():
    res = _eq33_coupling(Z, P, P_STAR, factor=2.0)
    _marginal(res["law"], "A", P)
    _marginal(res["law"], "B", P_STAR)
    gap = res["E_X_minus_Z_sq"] - 2 * (res["Q"] + res["E_Y_minus_Z_sq"])
    assert gap <= 3 * res["lp_error"]


def test_the_printed_step_still_fails_on_the_claims_instance():
    z, p, p_star = _eq33_instance()
    res = _eq33_coupling(z, p, p_star, factor=1.0)
    assert np.isclose(res["E_X_minus_Z_sq"], 5 / 6, atol=1e-6)
    assert res["E_X_minus_Z_sq"] > res["Q"] + res["E_Y_minus_Z_sq"] + 0.1


def test_the_attack_evaluates_the_point():
    point = dict(z=np.concatenate([Z.ravel()]), n=3, k_frac=0.1669933844076028,
                 w=np.array([1 / 3, 1 / 3, 1 / 3]))
    assert eq33_factor_two(**point) <= 1 + 1e-12
