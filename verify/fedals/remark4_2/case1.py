r"""Claims of Remark 4.2, Case I of FedALS (App. C, eq. (72)): K_hat clients drawn **with
replacement** from the weighting distribution K, the drawn local models averaged with equal
weights 1/K_hat per draw (so a client drawn m_k times weighs m_k/K_hat).

Monte Carlo over the datasets and the participant draws of the ridge-on-the-sphere model
(every hypothesis of Thm 4.1 met: mu = lambda, L = 1 + lambda per sample). The summands are
centred by the control variate used throughout the FedALS checks (the same risk difference at
the fixed population optima, mean 0), which leaves every expectation unchanged.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binom

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.theory.data_models import RidgeModel

from ..instances import DIM, NOISE_SD
from ..lemmaC1 import ENUM, EPS, _case1_moments, _case1_targets
from . import REMARK42, factors_72, weighted_terms


def _draws(rng, *, n_clients, n_participants, zeta, lam, n_samples, n_draws, chunk=1000):
    """Per-draw gaps and the per-client sums behind G_k and the three readings of D_k."""
    base = rng.standard_normal(DIM)
    model = RidgeModel(base + zeta * rng.standard_normal((n_clients, DIM)), NOISE_SD, lam)
    weights = np.full(n_clients, 1.0 / n_clients)
    ref = model.reference_theta
    total, oos, local_gap = [], [], []
    delta_sum = {"part": np.zeros(n_clients), "all": np.zeros(n_clients),
                 "w2": np.zeros(n_clients)}
    part_count, w2_sum = np.zeros(n_clients), np.zeros(n_clients)
    for start in range(0, n_draws, chunk):
        m = min(chunk, n_draws - start)
        counts = rng.multinomial(n_participants, weights, size=m)      # the participant plan
        w = counts / n_participants                                     # merged weights
        data = model.sample(rng, m, n_samples, keep_samples=False)      # statistics only
        local = model.erm(data)
        avg = np.broadcast_to(np.einsum("tk,tki->ti", w, local)[:, None, :], local.shape)
        star = np.broadcast_to(ref, local.shape)
        cv = model.population_risk(star) - model.empirical_risk(data, star)
        local_gap.append(model.population_risk(local) - model.empirical_risk(data, local) - cv)
        pop, emp = model.population_risk(avg), model.empirical_risk(data, avg)
        total.append(pop @ weights - np.sum(w * (emp + cv), axis=1))
        oos.append(np.sum(w * (pop - emp - cv), axis=1))
        delta = emp - model.empirical_risk(data, local)
        delta_sum["part"] += np.where(counts > 0, delta, 0.0).sum(axis=0)
        delta_sum["all"] += delta.sum(axis=0)
        delta_sum["w2"] += (w ** 2 * delta).sum(axis=0)
        part_count += (counts > 0).sum(axis=0)
        w2_sum += (w ** 2).sum(axis=0)
    D = {"conditional": delta_sum["part"] / part_count, "all_draws": delta_sum["all"] / n_draws,
         "w2_weighted": delta_sum["w2"] / w2_sum}
    return model, weights, np.concatenate(total), np.concatenate(oos), \
        np.concatenate(local_gap), D


def _weight_moment(p, n_participants, power):
    """E[(m/K_hat)^power] for m ~ Binomial(K_hat, p), exactly."""
    m = np.arange(n_participants + 1)
    return float(np.sum(binom.pmf(m, n_participants, p) * (m / n_participants) ** power))


def _bound(G, G_se, D, first, second, kappa):
    r"""sum_k [kappa first_k G_k + 2 sqrt(kappa) second_k sqrt(D_k G_k)]
    (:func:`~verify.fedals.remark4_2.weighted_terms`) and its delta-method SE from the SEs of
    G_k (D_k's sampling error is second order next to G's here)."""
    G_pos = np.maximum(G, 0.0)
    value = weighted_terms(kappa, G, D, first, second)
    slope = kappa * first + np.sqrt(kappa) * second * np.sqrt(np.maximum(D, 0.0)
                                                               / np.maximum(G_pos, 1e-300))
    return value, float(np.sqrt(np.sum((slope * G_se) ** 2)))


CASE1 = dict(n_clients=2, n_participants=16, zeta=0.0, lam=1.0, n_samples=40)


def _common(rng, params):
    model, weights, total, oos, local_gap, D = _draws(rng, **params)
    n = len(total)
    G = local_gap.mean(axis=0)
    G_se = local_gap.std(axis=0, ddof=1) / np.sqrt(n)
    return model, weights, total, oos, G, G_se, D


def _instance(model, weights, n_participants):
    """The values Remark 4.2's hypotheses read (Case I, local ERMs)."""
    return dict(case="I", model=model, local="erm", w=weights, n_participants=n_participants,
                n_clients=len(weights))


@claim("fedals.remark42.case1_bound_printed", ref="Remark 4.2, App. C, eq. (72)",
       kind="statement", expected="violated", result=REMARK42, parts=("case1",),
       statement="Remark 4.2 as printed, Case I (K_hat clients drawn with replacement from K, "
                 "equal weights): E[R(A(S)) - R_S^{K_hat}(A(S))] <= E_{k~K}[(L/(mu K_hat^2)) "
                 "G_k + 2 sqrt(L/mu) (1/K_hat) sqrt(D_k G_k)].",
       quick=dict(CASE1, n_draws=3000), full=dict(CASE1, n_draws=40000))
def case1_printed(*, rng, n_clients, n_participants, zeta, lam, n_samples, n_draws):
    r"""(72) falls like 1/K_hat, but drawing a client twice adds no data: with K = 2 clients
    and K_hat = 16 draws the averaged model is a (random-weight) average of only two local
    ERMs, so the true gap stays near G/2 while (72) is about G (kappa/256 + sqrt(kappa)/16).
    The proof applies Thm A.2 to K_hat "instances" and Lemma C.1 per instance
    (``fedals.lemmaC1.per_instance``), but Thm A.2's replace-one-dataset step changes every
    copy of a duplicated client at once (``fedals.lemmaC1.merged_duplicates``).

    Instance: ridge on the sphere, d = 5, n = 40, lambda = 1 (kappa = 2), sigma = 1, iid
    (zeta = 0, so R_k = R and the participation gap (70) is exactly 0: the failure is due to
    the duplicates alone), uniform K over K = 2 clients, K_hat = 16. Every hypothesis holds.
    To be fair to the paper D_k takes the largest of three readings (conditional on
    participation, over all draws, w^2-weighted). measured: MC mean of the whole gap;
    theoretical: (72); tolerance 4 SE of (gap - bound) (bound SE by the delta method on G_k).
    Expected ``violated``. Quick (seed 0, 3000 draws): gap 0.01557 +- 0.00018 (= 0.53 G)
    vs (72) 0.00288; full (40000 draws): 0.01545 +- 0.00005 vs 0.00288. The failure needs
    duplicates to matter: in the same model (3000 draws, seed 0) (72) is not contradicted for
    K_hat <= K (K = 4, K_hat = 4: 0.0098 vs 0.0134; K = 10, K_hat = 5: 0.0062 vs 0.0110) and
    fails from K_hat > K on (K = 2, K_hat = 4: 0.0137 vs 0.0115; K_hat = 8: 0.0124 vs
    0.0048)."""
    params = dict(n_clients=n_clients, n_participants=n_participants, zeta=zeta, lam=lam,
                  n_samples=n_samples, n_draws=n_draws)
    model, weights, total, oos, G, G_se, D = _common(rng, params)
    kappa = model.L / model.mu
    first, second = factors_72(weights, n_participants)
    readings = {name: _bound(G, G_se, d, first, second, kappa) for name, d in D.items()}
    name = max(readings, key=lambda k: readings[k][0])
    bound, bound_se = readings[name]
    gap_se = float(total.std(ddof=1) / np.sqrt(n_draws))
    return Evidence(measured=float(total.mean()), theoretical=bound, relation="<=",
                    instance=_instance(model, weights, n_participants),
                    tolerance=Tolerance.mc(np.hypot(gap_se, bound_se), k=4,
                                           what="gap - bound (72)"),
                    details={"instance": dict(params, d=DIM, sigma=NOISE_SD, case="I",
                                              weights="uniform"),
                             "gap_se": gap_se, "kappa": kappa, "G": G.tolist(),
                             "D": {k: v.tolist() for k, v in D.items()},
                             "bound_by_D_reading": {k: v[0] for k, v in readings.items()},
                             "out_of_sample_gap": float(oos.mean()),
                             "gap_over_mean_G": float(total.mean() / G.mean())})


@claim("fedals.remark42.case1_bound", ref="Remark 4.2, App. C, eqs. (71)-(72) (corrected)",
       kind="statement", expected="holds",
       corrects="fedals.remark42.case1_bound_printed", result=REMARK42, parts=("case1",),
       statement="Corrected Case I: with merged weights w_k = m_k/K_hat (m_k ~ Bin(K_hat, K(k))), "
                 "the out-of-sample gap is at most sum_k [(L/mu) E(w_k^3) G_k + 2 sqrt(L/mu) "
                 "E(w_k^2) sqrt(D^w_k G_k)], D^w_k = E[w_k^2 delta_k] / E[w_k^2].",
       quick=dict(CASE1, n_draws=3000), full=dict(CASE1, n_draws=40000))
def case1_corrected(*, rng, n_clients, n_participants, zeta, lam, n_samples, n_draws):
    r"""Given the draw, the averaged model is one-round FedAvg over the distinct participants
    with weights w_k = m_k/K_hat, so Thm A.2 applies with K(k) replaced by w_k; averaging over
    the draw gives E(w_k^3) and E(w_k^2) (exact binomial moments) in place of the printed
    K(k)/K_hat^2 and K(k)/K_hat, and Jensen moves the square root outside the w^2-weighted
    average of the conditional non-iidness. E(w^3) = p/K_hat^2 + 3(K_hat - 1)p^2/K_hat^2 + ...
    exceeds the printed p/K_hat^2 whenever duplicates are possible. Same instance as the
    printed claim (iid, so the out-of-sample gap is the whole gap); every hypothesis holds, so
    ``holds``; tolerance 4 SE of (gap - bound). Quick (seed 0): 0.01527 vs 0.0368; full
    (40000 draws): 0.01545 vs 0.0372 (ratio 2.4)."""
    params = dict(n_clients=n_clients, n_participants=n_participants, zeta=zeta, lam=lam,
                  n_samples=n_samples, n_draws=n_draws)
    model, weights, total, oos, G, G_se, D = _common(rng, params)
    kappa = model.L / model.mu
    first = np.array([_weight_moment(p, n_participants, 3) for p in weights])
    second = np.array([_weight_moment(p, n_participants, 2) for p in weights])
    bound, bound_se = _bound(G, G_se, D["w2_weighted"], first, second, kappa)
    gap_se = float(oos.std(ddof=1) / np.sqrt(n_draws))
    return Evidence(measured=float(oos.mean()), theoretical=bound, relation="<=",
                    instance=_instance(model, weights, n_participants),
                    tolerance=Tolerance.mc(np.hypot(gap_se, bound_se), k=4,
                                           what="out-of-sample gap - corrected bound"),
                    details={"instance": dict(params, d=DIM, sigma=NOISE_SD, case="I"),
                             "gap_se": gap_se, "bound_se": bound_se, "kappa": kappa,
                             "E_w3": first.tolist(), "E_w2": second.tolist(),
                             "printed_factors": [(weights / n_participants ** 2).tolist(),
                                                 (weights / n_participants).tolist()],
                             "G": G.tolist(), "D_w2": D["w2_weighted"].tolist(),
                             "ratio_bound_over_gap": bound / float(oos.mean())})


@claim("fedals.lemmaC1.merged_duplicates", ref="Lemma C.1 as used in Remark 4.2 / (72)",
       kind="proof-step", expected="violated", result=REMARK42, parts=("proof_72",),
       statement="The identities of Lemma C.1 hold with K_hat(k) = the aggregation weight of "
                 "client k in the averaged model (a client drawn m_k times weighs m_k/K_hat), "
                 "as the Case I bound (72) requires.",
       quick=ENUM, full=dict(n_clients=5, n_participants=3, weights=[.05, .1, .2, .25, .4]))
def lemmaC1_merged(*, rng, n_clients, n_participants, weights):
    r"""Averaging the drawn models gives client k the weight m_k/K_hat; Thm A.2 applied to that
    average needs K_hat(k) = m_k/K_hat. The 0th identity still holds, the 1st and 2nd fail
    (E[m_k^2] > E[m_k] when duplicates are possible): spec 7.15, pilot -0.183 vs -0.112.
    Expected ``violated``; tolerance as in the per-instance check. The x_k are the
    population risks R_k(theta) of a ridge model meeting Remark 4.2's hypotheses (d = 5,
    lambda = 1, sigma = 1, client optima drawn once, local ERMs) at a random theta: the
    identities are algebraic in x, so any generic risks expose the slip. Smallest instance:
    K_hat = 2 draws with replacement (one draw has no duplicates) over K = 2 clients; the
    quick instance (K = 4, K_hat = 2) enumerates all K^K_hat draws."""
    model = RidgeModel(rng.standard_normal((n_clients, 5)), 1.0, 1.0)
    x = model.population_risk(np.tile(rng.standard_normal(5), (1, n_clients, 1)))[0]
    w = np.asarray(weights, dtype=float)
    got = _case1_moments(x, w, n_participants, merged=True)
    tol = 8 * n_clients ** n_participants * EPS * float(np.abs(x).sum())
    return Evidence(measured=got, theoretical=_case1_targets(x, w, n_participants),
                    relation="==",
                    instance=_instance(model, w, n_participants),
                    tolerance=Tolerance.rounding(tol, "8 K^K_hat eps sum|x|"),
                    details={"x": x, "weights": w,
                             "smallest_instance": dict(K=2, K_hat=2, weights=[0.5, 0.5])})
