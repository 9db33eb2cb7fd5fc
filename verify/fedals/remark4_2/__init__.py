r"""Remark 4.2 of FedALS (Sec. 4.1 and App. C): partial participation, the result, its
parts, its hypotheses and its printed bounds (72) and (73).

Statement: Theorem 4.1 assumes every client participates. When :math:`\hat K` clients do,

- Case I: :math:`\hat K` clients sampled with replacement from :math:`\mathcal K`, the local
  models averaged with equal weights :math:`1/\hat K`;
- Case II: :math:`\hat K` clients sampled uniformly without replacement, client k weighted
  :math:`\mathcal K(k)K/\hat K`.

App. C splits the gap into the participation gap and the out-of-sample gap ((60)-(61)),
sets the expected participation gap to 0 by Lemmas C.1-C.2 ((70)), bounds the second term
by Thm A.2 given the participants ((71)) and averages over the participants: (72) for
Case I, (73) for Case II.

Claims: :mod:`.case1` (Case I, and Lemma C.1 as (72) uses it), :mod:`.case2` (Case II and
the participation gap (70)). Instances carry ``case`` ("I" / "II"), ``n_clients``,
``n_participants``, ``w`` and, for the bounds, ``model`` and ``local``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import hypothesis, result

from .._predicates import convex_smooth, is_distribution, local_erm, positive_integers


@hypothesis("case_I", "Case I: K_hat clients sampled with replacement based on K, the local "
                      "models averaged with equal weights 1/K_hat")
def case_one(*, case, n_participants, w):
    return case == "I" and positive_integers(n_participants) and is_distribution(w)


@hypothesis("case_II", "Case II: K_hat <= K clients sampled uniformly without replacement, "
                       "client k weighted K(k) K / K_hat")
def case_two(*, case, n_clients, n_participants, w):
    return (case == "II" and positive_integers(n_participants)
            and n_participants <= n_clients == len(w) and is_distribution(w))


@hypothesis("participation", "Case I or Case II participation (the two schemes of Remark 4.2)")
def either_case(*, case, n_clients, n_participants, w):
    return bool(case_one.predicate(case=case, n_participants=n_participants, w=w)
                or case_two.predicate(case=case, n_clients=n_clients,
                                      n_participants=n_participants, w=w))


REMARK42 = result(
    "fedals.remark4_2", ref="Remark 4.2",
    title="partial participation: Case I (with replacement) and Case II bounds",
    parts={"eq70": "(70): E_P[R(A(S)) - R^{K_hat}(A(S))] = 0 for both schemes (by Lemmas C.1 "
                   "and C.2), so only the out-of-sample gap needs a bound",
           "case1": "(72): E_S Delta_A(S) <= E_{k~K}[(L/(mu K_hat^2)) G_k + 2 sqrt(L/mu) "
                    "(1/K_hat) sqrt(D_k G_k)] (Case I)",
           "proof_72": "(72) from (71) by Lemma C.1, with K_hat(k) the weight of client k in "
                       "the averaged model",
           "case2": "(73): E_S Delta_A(S) <= E_{k~K}[(L/mu)(K(k) K/K_hat)^2 G_k + 2 sqrt(L/mu) "
                    "(K(k) K/K_hat) sqrt(D_k G_k)] (Case II)"},
    hypotheses=(convex_smooth, local_erm,
                case_one.only("case1", "proof_72"), case_two.only("case2"),
                either_case.only("eq70")))


def weighted_terms(kappa, G, D, first, second) -> float:
    r"""sum_k [kappa first_k G_k + 2 sqrt(kappa) second_k sqrt(D_k G_k)] (G, D clipped at 0):
    the shape of (71)-(73), with the per-client factors of each printed bound."""
    G_pos = np.maximum(G, 0.0)
    return float(np.sum(kappa * first * G_pos + 2 * np.sqrt(kappa) * second
                        * np.sqrt(np.maximum(D, 0.0) * G_pos)))


def factors_72(w, n_participants):
    """(72)'s factors: E_{k~K} with K(k)/K_hat^2 on G_k and K(k)/K_hat on sqrt(D_k G_k)."""
    w = np.asarray(w, dtype=float)
    return w / n_participants ** 2, w / n_participants


def factors_73(w, n_participants):
    """(73)'s factors: K(k) (K(k) K/K_hat)^2 on G_k and K(k) (K(k) K/K_hat) on sqrt(D_k G_k)."""
    w = np.asarray(w, dtype=float)
    rescaled = w * w.size / n_participants
    return w * rescaled ** 2, w * rescaled


def printed_72(*, kappa, G, D, w, n_participants) -> float:
    """The printed bound (72) of Case I, kappa = L/mu."""
    return weighted_terms(kappa, G, D, *factors_72(w, n_participants))


def printed_73(*, kappa, G, D, w, n_participants) -> float:
    """The printed bound (73) of Case II, kappa = L/mu."""
    return weighted_terms(kappa, G, D, *factors_73(w, n_participants))
