r"""Hypotheses shared by several results of FedALS, as predicates on an instance.

Theorems 4.1 / A.2, B.1, 4.3 / B.2 and Remark 4.2 repeat the same assumptions (a loss
mu-strongly convex and L-smooth in the parameters, one weighted average of the local models,
...); each is written once here, with the paper's wording, and given to every result that
states it. Instances name the values read:

- ``model``: the data model (:class:`~flbounds.theory.data_models.RidgeModel`,
  :class:`~flbounds.theory.data_models.SoftmaxPool`), whose ``mu`` and ``L`` are the exact
  per-sample curvature bounds of its loss (``L = inf`` for unbounded covariates);
- ``w``: the client weights :math:`\mathcal K(k)`;
- ``local``: the local algorithm, ``"erm"`` (exact local minimiser) or ``"sgd"`` (tau steps
  of eq. (5)), with ``local_steps`` the tau (or the list of taus) run;
- ``data_reuse``: ``"fresh"`` when each round draws new samples (one pass), ``"fixed"``
  when every round reuses the client's dataset.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import hypothesis

#: sum of the weights: the constructions normalise them, so 1e-9 leaves room for rounding
WEIGHT_SUM_RTOL = 1e-9


def is_distribution(w) -> bool:
    """Nonnegative finite weights summing to 1."""
    w = np.asarray(w, dtype=float)
    return bool(w.ndim == 1 and w.size > 0 and np.all(np.isfinite(w)) and np.all(w >= 0)
                and abs(w.sum() - 1.0) <= WEIGHT_SUM_RTOL)


def identical_clients(model) -> bool:
    """Every client has the same data distribution (iid): same optimum for a ridge model,
    same pool of (x, y) pairs for a pool model."""
    theta = getattr(model, "theta_star", None)
    if theta is not None:
        theta = np.asarray(theta)
        return bool(np.array_equal(theta, np.broadcast_to(theta[0], theta.shape)))
    features = getattr(model, "features", None)
    if features is not None:
        f, y = np.asarray(features), np.asarray(model.labels)
        return bool(np.array_equal(f, np.broadcast_to(f[0], f.shape))
                    and np.array_equal(y, np.broadcast_to(y[0], y.shape)))
    return False


def positive_integers(values) -> bool:
    """Every entry an integer >= 1."""
    v = np.atleast_1d(np.asarray(values, dtype=float))
    return bool(v.size > 0 and np.all(v >= 1) and np.all(v == np.round(v)))


@hypothesis("convex", "l(M_theta, z) is mu-strongly convex and L-smooth in M_theta "
                      "(0 < mu <= L < inf, the model's exact per-sample curvature bounds)")
def convex_smooth(*, model):
    mu, L = float(model.mu), float(model.L)
    return bool(0 < mu <= L < np.inf)


@hypothesis("erm", "M_theta_k = A_k(S_k) is the ERM on the local dataset S_k")
def local_erm(*, local):
    return local == "erm"


@hypothesis("one_round", "theta_hat = E_{k~K} theta_k: one round of FedAvg over all K clients, "
                         "K a distribution over the clients")
def one_round(*, w):
    return is_distribution(w)


@hypothesis("fedavg", "the aggregated model of every round is obtained by FedAvg, theta_hat_r = "
                     "E_{k~K} theta_{k,r} over all K clients, K a distribution")
def fedavg_rounds(*, w):
    return is_distribution(w)


@hypothesis("local_sgd", "local models computed by tau >= 1 local mini-batch SGD steps (5) "
                         "on the client's data")
def local_sgd(*, local, local_steps):
    return local == "sgd" and positive_integers(local_steps)


@hypothesis("variance", "the gradient variance is bounded by sigma^2 (here: covariates on the "
                        "unit sphere and finite label noise, so the per-sample gradient "
                        "variance is bounded on the bounded region the iterates stay in)")
def bounded_variance(*, model):
    return (getattr(model, "covariates", None) == "sphere"
            and bool(np.isfinite(getattr(model, "noise_sd", np.inf))))


@hypothesis("fresh", "the data points Z_{k,r} used in round r are sampled without "
                     "replacement (fresh samples every round)")
def fresh_data(*, data_reuse):
    return data_reuse == "fresh"


@hypothesis("iid", "iid setting: D_1 = ... = D_K")
def iid(*, model):
    return identical_clients(model)


@hypothesis("noniid_split", "the non-iid setup of Sec. 7 (each client holds a skewed subset of "
                            "the labels)")
def noniid_split(*, split):
    return split == "noniid"


@hypothesis("iid_split", "the iid setup of Sec. 7 (data shuffled and evenly divided)")
def iid_split(*, split):
    return split == "iid"


@hypothesis("alpha", "alpha = tau_phi / tau_h a positive integer and tau >= 1 (Sec. 5)")
def integer_alpha(*, alphas, local_steps):
    return positive_integers(alphas) and positive_integers(local_steps)
