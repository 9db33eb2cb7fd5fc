r"""Partial participation, Appendix C of FedALS ([001], Remark 4.2, Lemmas C.1-C.2, claim (70)).

Lemmas C.1 and C.2 are identities over the participant draw; they are checked by exact
enumeration of every draw (K^K_hat ordered draws with replacement, C(K, K_hat) subsets).
"""

from __future__ import annotations

import itertools

import numpy as np

from flbounds.gen_models import RidgeModel
from flbounds.ledger import Evidence, Tolerance, claim

from ._cells import DIM, NOISE_SD

EPS = np.finfo(float).eps
ENUM = dict(n_clients=4, n_participants=2, weights=[0.1, 0.2, 0.3, 0.4])


def _case1_moments(x, weights, n_participants, merged: bool):
    r"""E_P E_{k~K_hat}[K_hat(k)^j x_k], j = 0, 1, 2, over ordered draws with replacement.

    Per instance: each of the K_hat draws has weight 1/K_hat. Merged: client k drawn m_k times
    has the aggregation weight m_k/K_hat (what averaging the drawn models actually gives).
    """
    K, n = len(x), n_participants
    out = np.zeros(3)
    for draw in itertools.product(range(K), repeat=n):
        prob = np.prod([weights[k] for k in draw])
        if merged:
            m = np.bincount(draw, minlength=K) / n
            vals = [np.sum(m ** (j + 1) * x) for j in range(3)]
        else:
            vals = [sum(x[k] / n ** (j + 1) for k in draw) for j in range(3)]
        out += prob * np.array(vals)
    return out


def _case1_targets(x, weights, n_participants):
    base = float(np.dot(weights, x))
    return np.array([base, base / n_participants, base / n_participants ** 2])


@claim("fedals.lemmaC1.per_instance", ref="Lemma C.1, eqs. (62)-(65)", kind="statement",
       expected="holds",
       statement="Sampling K_hat clients i.i.d. from K, each draw weighted 1/K_hat: "
                 "E_P E_{k~K_hat} K_hat(k)^j x_k = K_hat^-j E_{k~K} x_k for j = 0, 1, 2.",
       quick=ENUM, full=dict(n_clients=5, n_participants=3, weights=[.05, .1, .2, .25, .4]))
def lemmaC1_per_instance(*, rng, n_clients, n_participants, weights):
    r"""Exact enumeration of all K^K_hat ordered draws, each drawn instance kept separate (the
    proof's reading, by linearity). Identity up to rounding: tolerance 8 K^K_hat eps times
    the scale of |x| (one rounding per product and per accumulated term)."""
    x = rng.standard_normal(n_clients)
    w = np.asarray(weights, dtype=float)
    got = _case1_moments(x, w, n_participants, merged=False)
    tol = 8 * n_clients ** n_participants * EPS * float(np.abs(x).sum())
    return Evidence(measured=got, theoretical=_case1_targets(x, w, n_participants),
                    relation="==", tolerance=Tolerance.rounding(tol, "8 K^K_hat eps sum|x|"),
                    details={"x": x})


@claim("fedals.lemmaC1.merged_duplicates", ref="Lemma C.1 as used in Remark 4.2 / (72)",
       kind="proof-step", expected="violated",
       statement="The identities of Lemma C.1 hold with K_hat(k) = the aggregation weight of "
                 "client k in the averaged model (a client drawn m_k times weighs m_k/K_hat), "
                 "as the Case I bound (72) requires.",
       quick=ENUM, full=dict(n_clients=5, n_participants=3, weights=[.05, .1, .2, .25, .4]))
def lemmaC1_merged(*, rng, n_clients, n_participants, weights):
    r"""Averaging the drawn models gives client k the weight m_k/K_hat; Thm A.2 applied to that
    average needs K_hat(k) = m_k/K_hat. The 0th identity still holds, the 1st and 2nd fail
    (E[m_k^2] > E[m_k] when duplicates are possible): spec 7.15, pilot -0.183 vs -0.112.
    Expected ``violated``; tolerance as in the per-instance check."""
    x = rng.standard_normal(n_clients)
    w = np.asarray(weights, dtype=float)
    got = _case1_moments(x, w, n_participants, merged=True)
    tol = 8 * n_clients ** n_participants * EPS * float(np.abs(x).sum())
    return Evidence(measured=got, theoretical=_case1_targets(x, w, n_participants),
                    relation="==", tolerance=Tolerance.rounding(tol, "8 K^K_hat eps sum|x|"),
                    details={"x": x, "weights": w})


@claim("fedals.lemmaC2.identities", ref="Lemma C.2, eqs. (66)-(69)", kind="statement",
       expected="holds",
       statement="Uniform K_hat-subsets without replacement, K_hat(k) = K(k) K / K_hat: "
                 "E_P E_{k~K_hat} K_hat(k)^j x_k = (K/K_hat)^j E_{k~K} K(k)^j x_k, j = 0, 1, 2.",
       quick=ENUM, full=dict(n_clients=8, n_participants=3,
                             weights=[.02, .05, .08, .1, .12, .15, .18, .3]))
def lemmaC2(*, rng, n_clients, n_participants, weights):
    r"""Exact enumeration over all C(K, K_hat) subsets; holds to rounding (tolerance 8 C(K,K_hat)
    eps sum|x|). Details log the per-subset weight sums, which differ from 1 for non-uniform K
    (spec 7.16: K_hat is then not a distribution)."""
    x = rng.standard_normal(n_clients)
    w = np.asarray(weights, dtype=float)
    subsets = list(itertools.combinations(range(n_clients), n_participants))
    got, sums = np.zeros(3), []
    for sub in subsets:
        kh = w[list(sub)] * n_clients / n_participants
        sums.append(float(kh.sum()))
        got += np.array([np.sum(kh ** (j + 1) * x[list(sub)]) for j in range(3)]) / len(subsets)
    ratio = n_clients / n_participants
    target = np.array([np.sum(w * x), ratio * np.sum(w ** 2 * x), ratio ** 2 * np.sum(w ** 3 * x)])
    tol = 8 * len(subsets) * EPS * float(np.abs(x).sum()) * ratio ** 2
    return Evidence(measured=got, theoretical=target, relation="==",
                    tolerance=Tolerance.rounding(tol, "8 C(K,K_hat) eps sum|x| (K/K_hat)^2"),
                    details={"x": x, "weight_sums_per_subset": sums})


def _participation_gap(rng, n_clients, n_participants, zeta, lam, n_samples, n_draws):
    """Case II: uniform subsets, equal weights 1/K_hat; per-draw R(A(S)) - R^{K_hat}(A(S))."""
    model = RidgeModel(rng.standard_normal(DIM) + zeta * rng.standard_normal((n_clients, DIM)),
                       NOISE_SD, lam)
    keys = rng.random((n_draws, n_clients))
    members = np.argsort(keys, axis=1)[:, :n_participants]        # the participation plan
    data = model.sample(rng, n_draws, n_samples)
    local = model.erm(data)
    avg = np.take_along_axis(local, members[..., None], axis=1).mean(axis=1)
    risks = model.population_risk(np.broadcast_to(avg[:, None, :], local.shape))
    part = np.take_along_axis(risks, members, axis=1).mean(axis=1)
    return risks.mean(axis=1) - part, risks


CLAIM70 = dict(n_clients=10, n_participants=2, lam=0.1, n_samples=40)


@claim("fedals.claim70.noniid", ref="App. C, eq. (70)", kind="statement", expected="violated",
       statement="The expected participation gap E_P[R(A(S)) - R^{K_hat}(A(S))] is 0 "
                 "(Cases I and II), so only the out-of-sample gap needs a bound.",
       quick=dict(CLAIM70, zeta=1.0, n_draws=2000), full=dict(CLAIM70, zeta=1.0, n_draws=20000))
def claim70_noniid(*, rng, n_clients, n_participants, zeta, lam, n_samples, n_draws):
    r"""V7(c). Ridge, K = 10, K_hat = 2, zeta = 1, Case II (uniform subsets). (70) treats
    x_k = R_k(A(S)) as a fixed sequence, but A(S) is fitted to the participants, whose own
    risks are therefore lower: the gap is positive (pilot 0.204 +- 0.002). Every hypothesis
    of Appendix C holds; expected ``violated``; tolerance 4 MC SE."""
    gap, _ = _participation_gap(rng, n_clients, n_participants, zeta, lam, n_samples, n_draws)
    se = gap.std(ddof=1) / np.sqrt(n_draws)
    return Evidence(measured=gap.mean(), theoretical=0.0, relation="==",
                    tolerance=Tolerance.mc(se, k=4, what="participation gap"),
                    details={"se": se, "instance": dict(K=n_clients, K_hat=n_participants,
                                                        zeta=zeta, lam=lam, n=n_samples)})


@claim("fedals.claim70.iid", ref="App. C, eq. (70)", kind="statement", expected="holds",
       statement="In iid data the participation gap is 0.",
       quick=dict(CLAIM70, zeta=0.0, n_draws=200), full=dict(CLAIM70, zeta=0.0, n_draws=2000))
def claim70_iid(*, rng, n_clients, n_participants, zeta, lam, n_samples, n_draws):
    r"""With identical client distributions R_k = R for every k, so the gap is 0 in every draw
    (not only in expectation). measured: the largest |gap| over draws; tolerance: rounding of
    a mean of K O(1) risks, 4 K eps max risk."""
    gap, risks = _participation_gap(rng, n_clients, n_participants, zeta, lam, n_samples,
                                    n_draws)
    tol = 4 * n_clients * EPS * float(np.max(np.abs(risks)))
    return Evidence(measured=float(np.max(np.abs(gap))), theoretical=0.0, relation="==",
                    tolerance=Tolerance.rounding(tol, "4 K eps max|R_k|"))


@claim("fedals.remark42.case2_bound", ref="Remark 4.2, App. C, eqs. (71), (73)",
       kind="statement", expected="holds",
       statement="Case II (uniform K_hat-subsets, weights K(k) K/K_hat): the out-of-sample gap "
                 "E[R^{K_hat}(A(S)) - R_S^{K_hat}(A(S))] is at most E_{k~K}[(L/mu)(K(k)K/K_hat)^2"
                 " G_k + 2 sqrt(L/mu) (K(k)K/K_hat) sqrt(D_k G_k)].",
       quick=dict(CLAIM70, zeta=1.0, n_draws=2000), full=dict(CLAIM70, zeta=1.0, n_draws=20000))
def remark42_case2(*, rng, n_clients, n_participants, zeta, lam, n_samples, n_draws):
    r"""V7(d). Uniform K, so K_hat(k) = 1/K_hat. Given the participant set P, (71) is Thm A.2
    for the participants; averaging over P (Lemma C.2) gives (73) with D_k read as the
    non-iidness of client k when it participates, E[delta_k | k in P] (the square root is
    moved outside the P-average by Jensen, which keeps the bound valid). Every hypothesis is
    met, so ``holds``; tolerance 4 SE of (gap - bound), the bound's SE by the delta method
    on G_k and D_k (dominated by the G term)."""
    model = RidgeModel(rng.standard_normal(DIM) + zeta * rng.standard_normal((n_clients, DIM)),
                       NOISE_SD, lam)
    members = np.argsort(rng.random((n_draws, n_clients)), axis=1)[:, :n_participants]
    data = model.sample(rng, n_draws, n_samples)
    local = model.erm(data)
    avg = np.take_along_axis(local, members[..., None], axis=1).mean(axis=1)
    avg_b = np.broadcast_to(avg[:, None, :], local.shape)
    ref = model.reference_theta
    star = np.broadcast_to(ref, local.shape)
    cv = model.population_risk(star) - model.empirical_risk(data, star)
    local_gap = model.population_risk(local) - model.empirical_risk(data, local) - cv
    nonid = model.empirical_risk(data, avg_b) - model.empirical_risk(data, local)
    mask = np.zeros((n_draws, n_clients), dtype=bool)
    np.put_along_axis(mask, members, True, axis=1)
    ref_avg = np.broadcast_to(ref.mean(0), local.shape)
    cv_avg = model.population_risk(ref_avg) - model.empirical_risk(data, ref_avg)
    per_client = model.population_risk(avg_b) - model.empirical_risk(data, avg_b) - cv_avg
    oos = np.where(mask, per_client, 0.0).sum(axis=1) / n_participants
    G = local_gap.mean(axis=0)
    D = np.where(mask, nonid, 0.0).sum(axis=0) / mask.sum(axis=0)
    kappa = model.L / model.mu
    kh = 1.0 / n_participants
    bound = float(np.mean(kappa * kh ** 2 * G + 2 * np.sqrt(kappa) * kh * np.sqrt(D * G)))
    G_se = local_gap.std(axis=0, ddof=1) / np.sqrt(n_draws)
    bound_se = float(np.sqrt(np.sum(((kappa * kh ** 2 + np.sqrt(kappa) * kh
                                      * np.sqrt(D / np.maximum(G, 1e-300))) * G_se) ** 2))
                     / n_clients)
    gap_se = oos.std(ddof=1) / np.sqrt(n_draws)
    return Evidence(measured=float(oos.mean()), theoretical=bound, relation="<=",
                    tolerance=Tolerance.mc(np.hypot(gap_se, bound_se), k=4,
                                           what="out-of-sample gap - bound"),
                    details={"gap_se": gap_se, "G_mean": float(G.mean()),
                             "D_mean": float(D.mean()), "kappa": kappa})
