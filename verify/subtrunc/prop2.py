r"""Proposition 2 of SubTrunc (linear combination): the result, its hypotheses, its claim and a
negative control.

Prop. 2: if :math:`g_1, \dots, g_m` are submodular on :math:`2^N` and
:math:`\alpha_1, \dots, \alpha_m \ge 0`, then :math:`f = \sum_j \alpha_j g_j` is submodular.
Checked exhaustively (all :math:`2^n` subsets, local diminishing returns, as in
:mod:`verify.subtrunc.prop1`) on combinations of the project's families, including
non-monotone submodular terms (truncations of non-monotone modular functions are not
submodular, so non-monotone terms are negated modular functions, which are modular).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.selection import FacilityLocation, LinearCombination, Modular
from flbounds.selection.properties import exhaustive_margins

from ._common import ROUNDING, _prop1_family, _scaled
from ._predicates import submodular
from .instances import random_dissim


@hypothesis("g", "g_1, ..., g_n: 2^N -> R are submodular set functions")
def terms_submodular(*, terms):
    return all(submodular(g) for _, g in terms)


@hypothesis("alpha", "alpha_1, ..., alpha_n >= 0")
def weights_nonnegative(*, terms):
    return bool(np.all(np.array([a for a, _ in terms]) >= 0))


PROP2 = result(
    "subtrunc.prop2", ref="Proposition 2", title="nonnegative linear combinations preserve "
    "submodularity",
    parts={"combination": "eq. (7): f(S) = sum_i alpha_i g_i(S) is submodular"},
    hypotheses=(terms_submodular, weights_nonnegative))


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
       result=PROP2,
       statement="sum_j alpha_j g_j is submodular for submodular g_j and alpha_j >= 0.",
       quick=dict(n_instances=30, n_max=9), full=dict(n_instances=300, n_max=12))
def linear_combination(*, rng, n_instances, n_max):
    """Random n in 2..n_max, 2-4 terms from facility location, weighted coverage,
    concave-of-modular, partition-matroid rank and modular functions of any sign, weights
    Exp(1). Measured: the smallest scaled DR margin over all instances. Tolerance: rounding
    (module of the Prop. 1 claims)."""
    worst, instances = 0.0, []
    for r in rng.spawn(n_instances):
        n = int(r.integers(2, n_max + 1))
        terms = _terms(r, n)
        instances.append(dict(terms=terms))
        f = LinearCombination(terms)
        worst = min(worst, _scaled(exhaustive_margins(f), f)[0])
    return Evidence(measured=worst, theoretical=0.0, relation=">=", tolerance=ROUNDING,
                    instance=instances,
                    details={"min_dr_margin": worst, "n_instances": n_instances})


@claim("subtrunc.prop2.control_negative_weight", ref="Prop 2 (negative control)",
       kind="remark", expected="holds", result=PROP2,
       outside={"alpha": "negative control: weight -1, to show Prop 2 needs alpha >= 0"},
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
                    instance=dict(terms=[(-1.0, g)]),
                    tolerance=Tolerance.exact("a strict violation is required"),
                    details={"dr_min_of_minus_G": dr_min,
                             "dr_min_of_G": _scaled(exhaustive_margins(g), g)[0]})
