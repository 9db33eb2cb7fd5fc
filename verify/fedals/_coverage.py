"""The coverage table's entries for FedALS, generated from the declared results.

:mod:`flbounds.ledger.coverage` still reads a list of (name, what, reason) per paper and a map
for claims whose ``ref`` names no numbered result; both are derived here from the results
declared in this package (their ``ref``, ``title`` and ``not_checked``) and from the parts each
claim is attached to, so nothing is written twice. The list keeps the paper's order.
"""

from __future__ import annotations

from flbounds.ledger import cited_results, declare_results, load_all

from . import (
    alg1,
    alg2,
    alg3,
    alg4,
    closed_form,
    def7,
    example1,
    figure2,
    figure3,
    lemmaA1,
    lemmaC1,
    lemmaC2,
    released_code,
    remark4_2,
    remark5_1,
    table1,
    table2,
    table3,
    thm4_1,
    thm4_3,
    thmB1,
)
from .remark4_2 import case1, case2  # noqa: F401  (their claims must be registered)
from .thm4_1 import claims, iid_discussion, smoothness_step  # noqa: F401
from .thm4_3 import eq56, rounds  # noqa: F401

#: every numbered result of the paper, in the paper's order (then the two that are not in it)
RESULTS = (example1.EXAMPLE1, example1.FIGURE1, def7.DEF7, thm4_1.THM41, remark4_2.REMARK42,
           thm4_3.THM43, remark5_1.REMARK51, alg1.ALG1, figure2.FIGURE2, figure3.FIGURE3,
           table1.TABLE1, table2.TABLE2, table3.TABLE3, lemmaA1.LEMMA_A1, thm4_1.THMA2,
           thmB1.THMB1, thm4_3.THMB2, lemmaC1.LEMMA_C1, lemmaC2.LEMMA_C2, alg2.ALG2, alg3.ALG3,
           alg4.ALG4, released_code.RELEASED_CODE, closed_form.CLOSED_FORM)


def _claim_map() -> dict[str, tuple[str, ...]]:
    """claim id -> the refs of the results it is attached to, for the claims whose ``ref``
    cites no numbered result (the coverage table reads the others from their ``ref``)."""
    names = {r.id: r.ref for r in RESULTS}
    out = {}
    for cid, c in load_all().items():  # during plugin loading: the claims registered so far
        if c.paper_key == "fedals" and not cited_results(c.ref):
            out[cid] = tuple(dict.fromkeys(names[q.split(":", 1)[0]] for q in c.parts))
    return out


declare_results("fedals",
                [(r.ref, r.title, r.not_checked) if r.not_checked else (r.ref, r.title)
                 for r in RESULTS],
                claim_map=_claim_map())
