r"""The decision rule of the K-Vib-against-baselines comparisons, fixed before the data.

For every cell (a baseline, at a budget) the per-seed differences
:math:`d = \text{baseline} - \text{K-Vib}` (smaller is better, same seeds for both) get two
one-sided paired t-tests: :math:`H_0: E d \le 0` (rejected: K-Vib is better) and
:math:`H_0: E d \ge 0` (rejected: K-Vib is worse). All :math:`2m` p-values go through Holm's
rule at the claim's level. The paper's effect is shown when every "better" hypothesis is
rejected; it is contradicted when some "worse" one is (a baseline significantly better);
otherwise the test cannot decide, and the smallest mean difference each undecided cell could
have detected is reported.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import t as student_t
from scipy.stats import ttest_1samp

from flbounds.ledger import Evidence, Tolerance
from flbounds.stats import holm


def detectable(diff: np.ndarray, alpha_cell: float, power: float) -> float:
    """Smallest mean difference a one-sided paired t-test at level ``alpha_cell`` detects
    with probability ``power``, at the observed spread."""
    df = diff.size - 1
    spread = float(np.std(diff, ddof=1)) / np.sqrt(diff.size)
    return float((student_t.isf(alpha_cell, df) + student_t.ppf(power, df)) * spread)


def compare(cells: list[dict], diffs: list[np.ndarray], *, alpha: float, power: float,
            instance: dict, details: dict) -> Evidence:
    """Evidence of the rule (module docstring) for ``cells`` (dicts naming each cell, updated
    in place) with per-seed differences ``diffs``: measured the number of "K-Vib better"
    rejections against the number of cells; ``undecided`` when nothing is contradicted and
    not everything is shown."""
    pvalues = []
    for cell, diff in zip(cells, diffs, strict=True):
        better = float(ttest_1samp(diff, 0.0, alternative="greater").pvalue)
        worse = float(ttest_1samp(diff, 0.0, alternative="less").pvalue)
        pvalues += [better, worse]
        cell.update(p_kvib_better=better, p_kvib_worse=worse,
                    mean_difference=float(diff.mean()),
                    detectable_difference=detectable(diff, alpha / (2 * len(cells)), power))
    decision = holm(pvalues, alpha)
    for i, cell in enumerate(cells):
        cell.update(kvib_better=bool(decision.reject[2 * i]),
                    kvib_worse=bool(decision.reject[2 * i + 1]))
    n_better = sum(c["kvib_better"] for c in cells)
    worse = [c["label"] for c in cells if c["kvib_worse"]]
    undecided = "" if worse or n_better == len(cells) else (
        f"no baseline is significantly better, and {len(cells) - n_better} of {len(cells)} "
        f"cells do not show K-Vib better at alpha = {alpha} (Holm); smallest detectable mean "
        f"differences (power {power}): "
        + ", ".join(f"{c['label']}: {c['detectable_difference']:.3g}"
                    for c in cells if not c["kvib_better"]))
    return Evidence(instance=instance, measured=n_better, theoretical=len(cells),
                    relation=">=", undecided=undecided,
                    tolerance=Tolerance.exact("a count of Holm rejections"),
                    details={**details, "cells": cells, "family_size": decision.m,
                             "alpha": alpha, "baselines_significantly_better": worse,
                             "rule": "two one-sided paired t-tests per cell, Holm"})
