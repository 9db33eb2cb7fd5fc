r"""Lemma D.1 of K-Vib (be-the-leader, Kalai and Vempala 2005) and the remark after it: the
result, its parts, its hypothesis and its claims.

Statement: for a convex set :math:`\mathcal K`, a regularizer :math:`\mathcal R` and losses
:math:`\ell_t` on :math:`\mathcal K`, FTRL :math:`p^t=\arg\min\sum_{\tau<t}\ell_\tau+\mathcal R`
has :math:`\sum_t\ell_t(p^t)-\sum_t\ell_t(p)\le\sum_t(\ell_t(p^t)-\ell_t(p^{t+1}))+
\mathcal R(p)-\mathcal R(p^1)` for every :math:`p\in\mathcal K`. Here
:math:`\mathcal K=\Delta(p_{\min})`, :math:`\ell_t(p)=\sum_i\pi_t^2(i)/p_i`,
:math:`\mathcal R(p)=\sum_i\gamma/p_i`. Instances carry ``path``
(:class:`verify.kvib.appendix_d.FTRLPath`).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.sampling import optimal_isp_probabilities

from .appendix_d import ROUNDING, _paths
from .conditions import budget_in_range, nonnegative


@hypothesis("FTRL", "FTRL over the convex set Delta(p_min) = {p_min <= p_i <= 1, sum p = K}, "
                    "0 <= p_min <= K/N, K in [1, N], with losses sum_i pi_t^2(i)/p_i (pi_t >= "
                    "0) and the regularizer R(p) = sum_i gamma/p_i, gamma > 0")
def ftrl(*, path):
    n = path.p.shape[1]
    return bool(path.gamma > 0 and 0 <= path.p_min <= path.budget / n
                and budget_in_range(path.budget, n) and nonnegative(path.feedback))


LEMMA_D1 = result(
    "kvib.lemma_d1", ref="Lemma D.1", title="be-the-leader lemma for FTRL",
    parts={"bound": "sum_t l_t(p^t) - sum_t l_t(p) <= sum_t (l_t(p^t) - l_t(p^{t+1})) + R(p) - "
                    "R(p^1) for every p in K",
           "remark": "remark: the stability sum_t (l_t(p^t) - l_t(p^{t+1})) is restricted by "
                     "p_min: at most sum_t sum_i pi_t^2(i) (1/p_min - 1)"},
    hypotheses=(ftrl,))


@claim("kvib.lemmaD1.be_the_leader", ref="Lemma D.1 (App. D.2; Kalai and Vempala 2005)",
       kind="statement", expected="holds", result=LEMMA_D1, parts=("bound",),
       statement="FTRL p^t = argmin sum_{tau<t} l_tau + R ensures sum_t l_t(p^t) - sum_t l_t(p) "
                 "<= sum_t (l_t(p^t) - l_t(p^{t+1})) + R(p) - R(p^1) for every p in K.",
       quick=dict(n_paths=12, n_rounds=40, n_comparators=8),
       full=dict(n_paths=300, n_rounds=400, n_comparators=32))
def be_the_leader(*, rng, n_paths, n_rounds, n_comparators):
    """Random N in 3..11, K in 1..N-1, floors 0, K/(4N), K/(2N). Comparators in
    Delta(p_min): the best fixed p in hindsight (water-filling of pi^2_{1:T}), uniform K/N and
    random convex combinations of the iterates (Delta(p_min) is convex). Tolerance: rounding
    1e-10 of the largest cumulative loss."""
    lhs, rhs, scale, paths = [], [], 0.0, []
    for path in _paths(rng, n_paths, n_rounds):
        paths.append(dict(path=path))
        n = path.p.shape[1]
        played = path.losses(path.p[:-1])
        stability = float(np.sum(played - path.losses(path.p[1:])))
        comparators = [optimal_isp_probabilities(np.sqrt(np.sum(path.feedback**2, axis=0)),
                                                 path.budget, p_min=path.p_min),
                       np.full(n, path.budget / n)]
        comparators += [rng.dirichlet(np.ones(len(path.p))) @ path.p
                        for _ in range(n_comparators)]
        for p in comparators:
            lhs.append(float(played.sum() - path.losses(p).sum()))
            rhs.append(stability + path.regularizer(p) - path.regularizer(path.p[0]))
        scale = max(scale, float(played.sum()))
    return Evidence(measured=np.array(lhs), theoretical=np.array(rhs), relation="<=",
                    instance=paths,
                    tolerance=Tolerance.rounding(ROUNDING * scale, "1e-10 x largest cumulative "
                                                                   "loss"),
                    details={"n_comparisons": len(lhs),
                             "max_slack_used": float(np.max(np.array(lhs) - np.array(rhs)))})


@claim("kvib.lemmaD1.remark_stability_pmin", ref="Remark after Lemma D.1 (App. D.2)",
       kind="remark", expected="holds", result=LEMMA_D1, parts=("remark",),
       statement="sum_t (l_t(p^t) - l_t(p^{t+1})) <= sum_t sum_i pi_t^2(i) (1/p_min - 1): the "
                 "stability is restricted by p_min.",
       quick=dict(n_paths=12, n_rounds=40), full=dict(n_paths=300, n_rounds=400))
def remark_stability_pmin(*, rng, n_paths, n_rounds):
    """Paths with a positive floor (K/(4N) or K/(2N)); the remark's bound per path.
    Tolerance: rounding 1e-10 of the largest bound."""
    lhs, rhs, paths = [], [], []
    for path in _paths(rng, n_paths, n_rounds):
        if path.p_min == 0:
            continue
        paths.append(dict(path=path))
        lhs.append(float(np.sum(path.losses(path.p[:-1]) - path.losses(path.p[1:]))))
        rhs.append(float(np.sum(path.feedback**2) * (1 / path.p_min - 1)))
    lhs, rhs = np.array(lhs), np.array(rhs)
    return Evidence(measured=lhs, theoretical=rhs, relation="<=", instance=paths,
                    tolerance=Tolerance.rounding(ROUNDING * float(rhs.max()),
                                                 "1e-10 x largest bound"),
                    details={"max_ratio": float(np.max(lhs / rhs)), "n_paths": int(lhs.size)})
