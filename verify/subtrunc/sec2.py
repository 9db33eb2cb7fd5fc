r"""Section II of SubTrunc, before Proposition 1: concave transforms of submodular functions (the
result, its part, its hypotheses and its two claims).

"It is well known that if f(S) is a submodular function, g(f(S)) is also submodular for any
concave function g [16]." False as printed (a decreasing concave g breaks it); true for a
monotone submodular f and a nondecreasing concave g (spec 004 s.7 #5). Instances carry the
set function ``f`` and the scalar function ``psi`` (the paper's g).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.selection import Composed, TableFunction, all_subsets_values, exhaustive_margins

from ._common import ROUNDING, _prop1_family, _scaled
from ._predicates import concave_on, submodular


@hypothesis("f", "f(S) is a submodular function (Def. 2)")
def f_submodular(*, f):
    return submodular(f)


@hypothesis("g", "g is concave (on the values f takes)")
def psi_concave(*, f, psi):
    return concave_on(psi, all_subsets_values(f))


SEC2 = result(
    "subtrunc.sec2", ref="Section II", title="concave transforms of submodular functions "
    "(before Prop 1)",
    parts={"concave": "if f(S) is submodular, g(f(S)) is submodular for any concave g [16]"},
    hypotheses=(f_submodular, psi_concave))


@claim("subtrunc.intro.concave_of_submodular", ref="Sec. II, before Prop 1", kind="remark",
       expected="violated", result=SEC2, parts=("concave",),
       statement="If f is submodular then psi(f(S)) is submodular for any concave psi.")
def concave_of_submodular(*, rng):
    """False without psi nondecreasing: f(S) = (0, 1, 2, 2) on {}, {0}, {1}, {0,1} is monotone
    submodular, psi(x) = -x^2 is concave, and psi(f) has Delta(1|{}) = -4 < Delta(1|{0}) = -3.
    The measured smallest DR margin is -1 (exact), so ``violated`` is expected. The claim is
    true for nondecreasing concave psi (see ``subtrunc.intro.nondecreasing_concave``)."""
    base = TableFunction([0.0, 1.0, 2.0, 2.0])
    psi = lambda x: -np.asarray(x) ** 2  # noqa: E731 (the printed g)
    m = exhaustive_margins(Composed(psi, base))
    return Evidence(measured=m.dr_min, theoretical=0.0, relation=">=",
                    instance=dict(f=base, psi=psi),
                    tolerance=Tolerance.exact("exact small integers"),
                    details={"f": [0, 1, 2, 2], "psi": "-x^2", "witness": m.dr_witness,
                             "f_dr_min": exhaustive_margins(base).dr_min})


@claim("subtrunc.intro.nondecreasing_concave", ref="Sec. II (corrected)", kind="statement",
       expected="holds", result=SEC2, parts=("concave",),
       corrects="subtrunc.intro.concave_of_submodular",
       statement="psi(f(S)) is submodular for monotone submodular f and nondecreasing concave psi.",
       quick=dict(n_instances=30, n_max=9), full=dict(n_instances=300, n_max=12))
def nondecreasing_concave(*, rng, n_instances, n_max):
    """The corrected intro claim on facility location and coverage with psi in {sqrt, log1p,
    min(., c)}: exhaustive DR margins >= 0 (rounding tolerance). Expected ``holds``."""
    worst, instances = 0.0, []
    for r in rng.spawn(n_instances):
        n = int(r.integers(2, n_max + 1))
        _, g = _prop1_family(r, n)
        cap = 0.5 * g.value(range(n))
        psi = [np.sqrt, np.log1p, lambda x, c=cap: np.minimum(x, c)][int(r.integers(0, 3))]
        worst = min(worst, _scaled(exhaustive_margins(Composed(psi, g)), g)[0])
        instances.append(dict(f=g, psi=psi))
    return Evidence(measured=worst, theoretical=0.0, relation=">=", tolerance=ROUNDING,
                    instance=instances,
                    details={"min_dr_margin": worst})
