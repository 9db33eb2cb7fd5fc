r"""Proposition 1 of SubTrunc (truncation): the result, its part, its hypotheses and claims.

"Let g(S) be a monotone submodular set function composed of a non-decreasing concave
function and let b in R^+. Then g remains monotone submodular under truncation, i.e.
f(S) := min{g(S), b} (6) is monotone submodular" [19]. Instances carry ``g``, its
``family`` (which construction built it) and ``b``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.selection import Modular, Truncated, exhaustive_margins

from ._common import ROUNDING, _prop1_family, _scaled
from ._predicates import monotone, submodular


@hypothesis("g", "g(S) is a monotone submodular set function")
def g_monotone_submodular(*, g):
    return monotone(g) and submodular(g)


@hypothesis("composed", "g is composed of a non-decreasing concave function (psi of a "
                        "nonnegative modular function)")
def composed(*, family):
    return str(family).startswith("concave_of_modular")


@hypothesis("b", "b in R^+")
def b_positive(*, b):
    return b > 0


PROP1 = result(
    "subtrunc.prop1", ref="Proposition 1", title="truncation preserves monotone submodularity",
    parts={"truncation": "eq. (6): min{g(S), b} is monotone submodular"},
    hypotheses=(g_monotone_submodular, composed, b_positive))

WIDER = ("the check covers every monotone submodular g (facility location, coverage, "
         "matroid rank as well), for which the statement is also true")


@claim("subtrunc.prop1.truncation", ref="Prop 1", kind="statement", expected="holds",
       result=PROP1, outside={"composed": WIDER},
       statement="min(g(S), b) is monotone submodular for monotone submodular g and b > 0.",
       quick=dict(n_instances=40, n_max=9), full=dict(n_instances=400, n_max=12))
def prop1_truncation(*, rng, n_instances, n_max):
    """Exhaustive DR and monotonicity of min(g, b) over facility location, weighted coverage,
    concave-of-modular (sqrt, log1p, min) and partition-matroid rank, b ~ U(0, 1.2 g(N)).

    The paper asks g to be "composed of a non-decreasing concave function"; the check covers
    the wider class (any monotone submodular g), for which the statement is also true, so
    ``holds`` is expected. Tolerance: rounding of the value sums.
    """
    worst, kinds, instances = np.zeros(2), {}, []
    for r in rng.spawn(n_instances):
        n = int(r.integers(2, n_max + 1))
        name, g = _prop1_family(r, n)
        b = float(r.uniform(0.0, 1.2) * g.value(range(n))) + 1e-12
        scaled = _scaled(exhaustive_margins(Truncated(g, b)), g)
        worst = np.minimum(worst, scaled)
        kinds[name] = kinds.get(name, 0) + 1
        instances.append(dict(g=g, family=name, b=b))
    return Evidence(measured=worst, theoretical=[0.0, 0.0], relation=">=", tolerance=ROUNDING,
                    instance=instances,
                    details={"min_dr_margin": worst[0], "min_monotone_margin": worst[1],
                             "families": kinds})


@claim("subtrunc.prop1.control_nonmonotone_g", ref="Prop 1 (negative control)", kind="remark",
       expected="holds", result=PROP1,
       outside={"g": "negative control: g = (2, -2) is not monotone, to show Prop 1 needs it",
                "composed": "a modular g of mixed signs, built to break monotonicity"},
       statement="Prop 1 needs g monotone: min(F, 1) with modular F = (2, -2) has "
                 "Delta(0|{}) = 1 < Delta(0|{1}) = 2.")
def prop1_control(*, rng):
    """Negative control of the checker and of Prop 1's hypothesis: the DR violation
    Delta(0|{1}) - Delta(0|{}) = 1 must be found (measured >= a strictly positive threshold).
    Deterministic and exact."""
    g = Modular([2.0, -2.0])
    f = Truncated(g, 1.0)
    violation = -exhaustive_margins(f).dr_min
    return Evidence(measured=violation, theoretical=1e-9, relation=">=",
                    instance=dict(g=g, family="modular", b=1.0),
                    tolerance=Tolerance.exact("exact small integers"),
                    details={"values": {"{}": f.value([]), "{0}": f.value([0]),
                                        "{1}": f.value([1]), "{0,1}": f.value([0, 1])}})
