"""TODO."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, claim

from .appendix_d import (
    _has_middle,
    _paths,
    _terms_tolerance,
    lemma_d2_sides,
    smallest_counterexample,
)


@claim("kvib.lemmaD2.printed", ref="Lemma D.2, eq. (47) (App. D.2)", kind="statement",
       expected="violated",
       statement="If p_i^t < p_i^{t+1}: 0 <= 1/p_i^t - 1/p_i^{t+1} <= (1/min(z_t, z_{t+1})) "
                 "(c_t/sqrt(pi^2_{1:t-1}(i) + gamma) - c_{t+1}/sqrt(pi^2_{1:t}(i) + gamma)).",
       quick=dict(n_paths=12, n_rounds=40), full=dict(n_paths=300, n_rounds=400))
def lemma_d2_printed(*, rng, n_paths, n_rounds):
    """The smallest counterexample (details) and random FTRL paths (Assumption 5.1 feedback).
    The proof's case 2 divides by min(z_t, z_{t+1}) as if z never grew. Tolerance:
    rounding 1e-10 relative."""
    example_path, example = smallest_counterexample()
    lhs, rhs, scale = [], [], []
    for path in [example_path, *_paths(rng, n_paths, n_rounds)]:
        if _has_middle(path):
            for acc, part in zip((lhs, rhs, scale), lemma_d2_sides(path), strict=True):
                acc.append(part)
    lhs, rhs, scale = (np.concatenate(v) for v in (lhs, rhs, scale))
    return Evidence(measured=lhs, theoretical=rhs, relation="<=",
                    tolerance=_terms_tolerance(scale),
                    details={"smallest_counterexample": example,
                             "n_rising_pairs": int(lhs.size),
                             "n_violations": int(np.sum(lhs > rhs))},
                    hypotheses={"FTRL over Delta(p_min)": True,
                                "counterexample feedback positive and sorted in "
                                "every round (the proof's simplification)": True,
                                "random paths: Assumption 5.1 feedback": True})


@claim("kvib.lemmaD2.corrected", ref="Lemma D.2, corrected (water levels lambda_t = c_t/z_t)",
       kind="statement", expected="holds",
       statement="If p_i^t < p_i^{t+1}: 0 <= 1/p_i^t - 1/p_i^{t+1} <= (c_t/z_t)/sqrt(pi^2_{1:t-1}"
                 "(i) + gamma) - (c_{t+1}/z_{t+1})/sqrt(pi^2_{1:t}(i) + gamma).",
       quick=dict(n_paths=12, n_rounds=40), full=dict(n_paths=300, n_rounds=400))
def lemma_d2_corrected(*, rng, n_paths, n_rounds):
    """Same paths and counterexample as kvib.lemmaD2.printed; also checks the lower bound 0.
    Paths where some round has no middle client (z_t = 0, no water level) are skipped and
    counted. Tolerance: rounding 1e-10 relative."""
    example_path, _ = smallest_counterexample()
    lhs, rhs, scale, skipped = [], [], [], 0
    for path in [example_path, *_paths(rng, n_paths, n_rounds)]:
        if not _has_middle(path):
            skipped += 1
            continue
        for acc, part in zip((lhs, rhs, scale), lemma_d2_sides(path, corrected=True),
                             strict=True):
            acc.append(part)
    lhs, rhs, scale = (np.concatenate(v) for v in (lhs, rhs, scale))
    interval = np.stack([np.zeros_like(rhs), rhs], axis=-1)
    return Evidence(measured=lhs, theoretical=interval, relation="in",
                    tolerance=_terms_tolerance(scale),
                    details={"n_rising_pairs": int(lhs.size), "paths_skipped": skipped,
                             "max_ratio": float(np.max(lhs / np.maximum(rhs, 1e-300)))})
