r"""Lemma D.2 of K-Vib (monotonicity of 1/p between FTRL rounds, eq. (47)): the result, its
parts, its hypotheses and its claims.

Statement: for the FTRL iterates of Lemma D.1 over :math:`\Delta(p_{\min})`, if
:math:`p_i^t<p_i^{t+1}` then :math:`0\le1/p_i^t-1/p_i^{t+1}\le\frac1{\min(z_t,z_{t+1})}
(c_t/\sqrt{\pi^2_{1:t-1}(i)+\gamma}-c_{t+1}/\sqrt{\pi^2_{1:t}(i)+\gamma})`. The claims evaluate
it on the pairs (t, i) with :math:`p_i^t<p_i^{t+1}`, on paths where every round has middle
clients (:math:`z_t>0`, where :math:`c_t/z_t` is defined). Instances carry ``path``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, claim, hypothesis, result
from flbounds.ledger.api.seeds import claim_seed_sequence

from .appendix_d import (
    _has_middle,
    _paths,
    _terms_tolerance,
    lemma_d2_sides,
    smallest_counterexample,
)
from .lemma_d1 import ftrl


@hypothesis("z", "every round has middle clients: z_t > 0 (c_t/z_t is defined)")
def has_middle(*, path):
    return _has_middle(path)


#: the claim whose generator draws the random FTRL paths both claims read
PATHS_SOURCE = "kvib.lemmaD2.printed"
_PATHS: dict = {}


def _shared_paths(rng, n_paths, n_rounds) -> list:
    """The random FTRL paths of both claims, drawn from the printed claim's generator (root
    seed of ``rng``) and kept per process, so the claim that runs second reuses them."""
    root = getattr(getattr(rng.bit_generator, "seed_seq", None), "entropy", None)
    if not isinstance(root, int):
        raise ValueError("rng must come from a SeedSequence with integer entropy (the ledger's "
                         f"claim rng); got entropy {root!r}")
    key = (root, n_paths, n_rounds)
    if key not in _PATHS:
        source = np.random.default_rng(claim_seed_sequence(root, PATHS_SOURCE))
        _PATHS.clear()
        _PATHS[key] = list(_paths(source, n_paths, n_rounds))
    return _PATHS[key]


LEMMA_D2 = result(
    "kvib.lemma_d2", ref="Lemma D.2", title="monotonicity of 1/p between FTRL rounds",
    parts={"eq47": "eq. (47): if p_i^t < p_i^{t+1}, 0 <= 1/p_i^t - 1/p_i^{t+1} <= (1/min(z_t, "
                   "z_{t+1}))(c_t/sqrt(pi^2_{1:t-1}(i) + gamma) - c_{t+1}/sqrt(pi^2_{1:t}(i) + "
                   "gamma))"},
    hypotheses=(ftrl, has_middle))


@claim("kvib.lemmaD2.printed", ref="Lemma D.2, eq. (47) (App. D.2)", kind="statement",
       expected="violated", result=LEMMA_D2,
       statement="If p_i^t < p_i^{t+1}: 0 <= 1/p_i^t - 1/p_i^{t+1} <= (1/min(z_t, z_{t+1})) "
                 "(c_t/sqrt(pi^2_{1:t-1}(i) + gamma) - c_{t+1}/sqrt(pi^2_{1:t}(i) + gamma)).",
       quick=dict(n_paths=12, n_rounds=40), full=dict(n_paths=300, n_rounds=400))
def lemma_d2_printed(*, rng, n_paths, n_rounds):
    """The smallest counterexample (details) and random FTRL paths (Assumption 5.1 feedback).
    The proof's case 2 divides by min(z_t, z_{t+1}) as if z never grew. Tolerance:
    rounding 1e-10 relative."""
    example_path, example = smallest_counterexample()
    lhs, rhs, scale, paths = [], [], [], []
    for path in [example_path, *_shared_paths(rng, n_paths, n_rounds)]:
        if _has_middle(path):
            paths.append(dict(path=path))
            for acc, part in zip((lhs, rhs, scale), lemma_d2_sides(path), strict=True):
                acc.append(part)
    lhs, rhs, scale = (np.concatenate(v) for v in (lhs, rhs, scale))
    return Evidence(measured=lhs, theoretical=rhs, relation="<=",
                    tolerance=_terms_tolerance(scale),
                    details={"smallest_counterexample": example,
                             "n_rising_pairs": int(lhs.size),
                             "n_violations": int(np.sum(lhs > rhs))},
                    instance=paths)


@claim("kvib.lemmaD2.corrected", ref="Lemma D.2, corrected (water levels lambda_t = c_t/z_t)",
       corrects="kvib.lemmaD2.printed",
       kind="statement", expected="holds", result=LEMMA_D2,
       statement="If p_i^t < p_i^{t+1}: 0 <= 1/p_i^t - 1/p_i^{t+1} <= (c_t/z_t)/sqrt(pi^2_{1:t-1}"
                 "(i) + gamma) - (c_{t+1}/z_{t+1})/sqrt(pi^2_{1:t}(i) + gamma).",
       quick=dict(n_paths=12, n_rounds=40), full=dict(n_paths=300, n_rounds=400))
def lemma_d2_corrected(*, rng, n_paths, n_rounds):
    """Same paths (drawn once per process from kvib.lemmaD2.printed's generator,
    ``_shared_paths``) and counterexample as kvib.lemmaD2.printed; also checks the lower bound 0.
    Paths where some round has no middle client (z_t = 0, no water level) are skipped and
    counted. Tolerance: rounding 1e-10 relative."""
    example_path, _ = smallest_counterexample()
    lhs, rhs, scale, skipped, paths = [], [], [], 0, []
    for path in [example_path, *_shared_paths(rng, n_paths, n_rounds)]:
        if not _has_middle(path):
            skipped += 1
            continue
        paths.append(dict(path=path))
        for acc, part in zip((lhs, rhs, scale), lemma_d2_sides(path, corrected=True),
                             strict=True):
            acc.append(part)
    lhs, rhs, scale = (np.concatenate(v) for v in (lhs, rhs, scale))
    interval = np.stack([np.zeros_like(rhs), rhs], axis=-1)
    return Evidence(measured=lhs, theoretical=interval, relation="in", instance=paths,
                    tolerance=_terms_tolerance(scale),
                    details={"n_rising_pairs": int(lhs.size), "paths_skipped": skipped,
                             "max_ratio": float(np.max(lhs / np.maximum(rhs, 1e-300)))})
