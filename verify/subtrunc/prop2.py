r"""Proposition 2 of [004] (linear combination) as its own claim, with a negative control.

Prop. 2: if :math:`g_1, \dots, g_m` are submodular on :math:`2^N` and
:math:`\alpha_1, \dots, \alpha_m \ge 0`, then :math:`f = \sum_j \alpha_j g_j` is submodular.
Checked exhaustively (all :math:`2^n` subsets, local diminishing returns, as in
:mod:`verify.subtrunc.props`) on combinations of the project's families, including
non-monotone submodular terms (truncations of non-monotone modular functions are not
submodular, so non-monotone terms are negated modular functions, which are modular).
"""

from __future__ import annotations

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.selection import FacilityLocation, LinearCombination, Modular
from flbounds.selection.properties import exhaustive_margins

from .instances import random_dissim
from .props import ROUNDING, _prop1_family, _scaled


def _terms(r, n):
    """2 to 4 submodular terms on n clients, with nonnegative weights."""
    terms = []
    for _ in range(int(r.integers(2, 5))):
        if r.random() < 0.25:
            terms.append((float(r.exponential()), Modular(r.normal(size=n))))
        else:
            terms.append((float(r.exponential()), _prop1_family(r, n)[1]))
    return terms


@claim("subtrunc.prop2.linear_combination", ref="Prop 2", kind="statement", expected="holds",
       statement="sum_j alpha_j g_j is submodular for submodular g_j and alpha_j >= 0.",
       quick=dict(n_instances=30, n_max=9), full=dict(n_instances=300, n_max=12))
def linear_combination(*, rng, n_instances, n_max):
    """Random n in 2..n_max, 2-4 terms from facility location, weighted coverage,
    concave-of-modular, partition-matroid rank and modular functions of any sign, weights
    Exp(1). Measured: the smallest scaled DR margin over all instances. Tolerance: rounding
    (module of the Prop. 1 claims)."""
    worst = 0.0
    for r in rng.spawn(n_instances):
        n = int(r.integers(2, n_max + 1))
        f = LinearCombination(_terms(r, n))
        worst = min(worst, _scaled(exhaustive_margins(f), f)[0])
    return Evidence(measured=worst, theoretical=0.0, relation=">=", tolerance=ROUNDING,
                    details={"min_dr_margin": worst, "n_instances": n_instances})


@claim("subtrunc.prop2.control_negative_weight", ref="Prop 2 (negative control)",
       kind="remark", expected="holds",
       statement="Prop 2 needs alpha >= 0: -G for a facility location G is supermodular and "
                 "not submodular.",
       quick=dict(n=5), full=dict(n=8))
def control_negative_weight(*, rng, n):
    """A strictly submodular facility location with weight -1: the exhaustive checker must
    find a diminishing-returns violation (measured: minus the smallest DR margin, which must
    be strictly positive). Tolerance: exact threshold 1e-9 x scale, above rounding."""
    g = FacilityLocation(random_dissim(rng, n))
    f = LinearCombination([(-1.0, g)])
    dr_min = _scaled(exhaustive_margins(f), g)[0]
    return Evidence(measured=-dr_min, theoretical=1e-9, relation=">=",
                    tolerance=Tolerance.exact("a strict violation is required"),
                    details={"dr_min_of_minus_G": dr_min,
                             "dr_min_of_G": _scaled(exhaustive_margins(g), g)[0]})
