"""The coverage table's entries for [004], derived from the declared results (no hand-written
list): each result's ``ref``, ``title`` and ``not_checked`` reason, in the paper's order.

The coverage module (``flbounds.ledger.coverage``) still maps claims to results by their
``ref`` field and, for refs that name no numbered result, by ``CLAIM_MAP``; this module goes
once coverage reads the declared results and the claims' parts directly.
"""

from flbounds.ledger import declare_results

from . import assumptions as _a
from .alg1 import ALG1
from .lemma1 import LEMMA1
from .lemma2 import LEMMA2
from .lemma3 import LEMMA3
from .prop1 import PROP1
from .prop2 import PROP2
from .prop3 import PROP3
from .prop4 import PROP4
from .sec2 import SEC2
from .sec3a import SEC3A
from .sec3b import SEC3B
from .sec3c import SEC3C
from .tables import TABLE1, TABLE2, TABLE3, TABLE4
from .thm1 import THM1

IN_PAPER_ORDER = (_a.DEF1, _a.DEF2, _a.DEF3, SEC2, PROP1, PROP2, _a.DEF4, SEC3A, PROP3, SEC3B,
                  PROP4, SEC3C, ALG1, TABLE1, _a.DEF5, _a.ASSUMPTION1, _a.ASSUMPTION2,
                  _a.ASSUMPTION3, THM1, TABLE2, TABLE3, TABLE4, LEMMA1, LEMMA2, LEMMA3)
CLAIM_MAP = {
    "subtrunc.eq9.triangle_bound": ("Section III-A",),
    "subtrunc.greedy.stochastic": ("Section III-C",),
    "subtrunc.eq17.sample_uniform_each_step": ("Section III-C",),
    "subtrunc.intro.nondecreasing_concave": ("Section II",),
    "subtrunc.intro.concave_of_submodular": ("Section II",),
    "subtrunc.limits.huge_lam_b_is_topk": ("Section III-A",),
    "subtrunc.limits.lam0_is_divfl": ("Section III-A",),
    "subtrunc.limits.tiny_b_is_divfl": ("Section III-A",),
    "subtrunc.limits.large_mu_avoids_window": ("Section III-B",),
    "subtrunc.limits.mu0_is_divfl": ("Section III-B",),
    "subtrunc.prop3.control_small_offset": ("Section III-A", "Proposition 3"),
    "subtrunc.unionfl.distorted_greedy": ("Section III-B", "Section III-C"),
    "subtrunc.greedy.ratio_w": ("Section III-C", "Proposition 3"),
    "subtrunc.sec3c.unionfl_greedy_guarantee": ("Section III-C", "Proposition 4"),
    "subtrunc.fl.participation_evens_with_window": ("Section III-B", "Table III"),
}

declare_results("subtrunc", [(r.ref, r.title, r.not_checked) if r.not_checked
                             else (r.ref, r.title) for r in IN_PAPER_ORDER],
                claim_map=CLAIM_MAP)
