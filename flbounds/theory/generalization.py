r"""Monte Carlo engine for the one-round generalization gap of an averaged model (FedALS, Sec. 4).

One round of FedAvg: every client k runs a local algorithm :math:`\mathcal A_k` on its
dataset :math:`S_k`, the server outputs :math:`\hat\theta = \sum_k w_k \mathcal A_k(S_k)`
(:math:`w = \mathcal K`). For each Monte Carlo draw of all datasets S and of an independent
copy S' the engine records, per client,

- the gap of the averaged model
  :math:`\Delta(S) = \sum_k w_k [R_k(\hat\theta) - R_{S_k}(\hat\theta)]`;
- the local gap :math:`\Delta_{\mathcal A_k}(S_k) = R_k(\theta_k) - R_{S_k}(\theta_k)`;
- the non-iidness :math:`\delta_k = R_{S_k}(\hat\theta) - R_{S_k}(\theta_k)`;
- the local optimization error :math:`\varepsilon_k = R_{S_k}(\theta_k) - \min R_{S_k}`;
- the terms of the proof of Thm 4.1 / B.1 with :math:`S^{(k)}` (client k's whole dataset
  replaced by :math:`S'_k`): the leave-one-out term of Lemma A.1, :math:`v`, :math:`g` and
  the slacks of the per-draw inequalities (16), (22) and (29).

Gaps use the control variate :math:`R_k(\theta^{ref}) - R_{S_k}(\theta^{ref})` at fixed points
(the population minimizers, averaged with w for the averaged model), whose mean is exactly 0:
the estimates stay unbiased with a much smaller variance.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from threadpoolctl import ThreadpoolController

from flbounds.theory.data_models import RidgeModel
from flbounds.validation import check_probability_vector

MC_CHUNK_ELEMENTS = 4_000_000


class OneRoundDraws(NamedTuple):
    """Per-draw quantities (T draws; arrays (T,) or (T, K)) of one FedAvg round."""

    gap: np.ndarray
    local_gap: np.ndarray
    nonid: np.ndarray
    opt_error: np.ndarray
    loo: np.ndarray
    v_sq: np.ndarray
    g_sq: np.ndarray
    g_dot_v: np.ndarray
    excess_copy: np.ndarray
    smooth_slack: np.ndarray
    sc_slack: np.ndarray
    pl_slack: np.ndarray


def _check_weights(weights, n_clients: int) -> np.ndarray:
    return check_probability_vector(weights, "weights", n=n_clients)


def _control_variate(model, data, ref: np.ndarray) -> np.ndarray:
    """R_k(ref_k) - R_{S_k}(ref_k) for fixed points ref (K, d): mean exactly 0."""
    T = _n_draws(data)
    star = np.broadcast_to(ref, (T, *ref.shape))
    # R_k(ref_k) is the same for every draw: computed once (per draw, the same numbers)
    population = np.broadcast_to(model.population_risk(ref[None]), (T, ref.shape[0]))
    return population - model.empirical_risk(data, star)


#: the controller behind :func:`single_threaded_blas` and ``len(sys.modules)`` when it was made
_blas: tuple[ThreadpoolController, int] | None = None


def single_threaded_blas():
    """``threadpool_limits(limits=1, user_api="blas")``, from a controller kept between calls:
    making one inspects every loaded library (milliseconds, on every call of the simulators
    below). It is made again once a module was imported since, so a BLAS library loaded
    meanwhile is limited too, as a fresh ``threadpool_limits`` would."""
    global _blas
    if _blas is None or _blas[1] != len(sys.modules):
        _blas = ThreadpoolController(), len(sys.modules)
    return _blas[0].limit(limits=1, user_api="blas")


def _n_draws(data) -> int:
    return data[0].shape[0]


def one_round_draws(model, weights, n_samples, n_draws: int, rng: np.random.Generator, *,
                    local: Callable | None = None, reference=None) -> OneRoundDraws:
    r"""Simulate ``n_draws`` independent (S, S') pairs and return :class:`OneRoundDraws`.

    Parameters
    ----------
    model
        A model of :mod:`flbounds.theory.data_models` (ridge, pools).
    weights
        :math:`\mathcal K`, nonnegative, summing to 1, one per client.
    n_samples
        Samples per client (int or one per client).
    n_draws
        Monte Carlo draws T.
    rng
        Source of every dataset and of the local algorithm's plan.
    local
        ``local(data, rng) -> theta (T, K, d)``: the local algorithm; default the local ERM
        (Thm 4.1). A stochastic local algorithm draws its plan from the ``rng`` it is given.
    reference
        Fixed points (K, d) of the control variates (default ``model.reference_theta``, the
        population minimizers); any fixed choice keeps the estimates unbiased, one close to
        the local outputs (e.g. a pilot mean from independent draws) reduces their variance.
    """
    if n_draws < 2:
        raise ValueError("n_draws must be >= 2 (standard errors need two draws)")
    w = _check_weights(weights, model.n_clients)
    d = model.dim
    per_draw = max(1, int(np.sum(np.broadcast_to(n_samples, (model.n_clients,)))) * d * d)
    chunk = max(2, min(n_draws, MC_CHUNK_ELEMENTS // per_draw))
    parts, done = [], 0
    # Many tiny batched BLAS calls: threads only add overhead (and thrash on a loaded host).
    with single_threaded_blas():
        while done < n_draws:
            size = min(chunk, n_draws - done)
            parts.append(_chunk(model, w, n_samples, size, rng, local, reference))
            done += size
    return OneRoundDraws(*(np.concatenate(f, axis=0) for f in zip(*parts, strict=True)))


def _chunk(model, w, n_samples, n_draws, rng, local, reference) -> OneRoundDraws:
    # the local ERM reads the ridge data's sufficient statistics only: no copy of the samples
    lean = {"keep_samples": False} if local is None and isinstance(model, RidgeModel) else {}
    data = model.sample(rng, n_draws, n_samples, **lean)
    copy = model.sample(rng, n_draws, n_samples, **lean)
    if local is None:
        return one_round_batch(model, w, data, copy, model.erm(data), model.erm(copy),
                               local_is_erm=True, reference=reference)
    return one_round_batch(model, w, data, copy, local(data, rng), local(copy, rng),
                           reference=reference)


def one_round_batch(model, weights, data, copy, theta, theta_c, *,
                    local_is_erm: bool = False, reference=None) -> OneRoundDraws:
    r"""The per-draw quantities for given datasets S (``data``), copies S' (``copy``) and the
    local outputs :math:`\theta_k = \mathcal A_k(S_k)` (``theta``) and
    :math:`\mathcal A_k(S'_k)` (``theta_c``), each (T, K, d).

    With ``local_is_erm`` the local outputs are taken to be the ERMs (no optimization error);
    otherwise the ERMs are computed to measure :math:`\varepsilon_k`.
    """
    w = np.asarray(weights, dtype=float)
    if local_is_erm:
        star_c = theta_c
        opt_error = np.zeros(theta.shape[:2])
    else:
        star, star_c = model.erm(data), model.erm(copy)
        opt_error = model.empirical_risk(data, theta) - model.empirical_risk(data, star)
    avg = np.einsum("k,tki->ti", w, theta)
    avg_b = np.broadcast_to(avg[:, None, :], theta.shape)
    ref = model.reference_theta if reference is None else np.asarray(reference, dtype=float)
    ref_avg = np.broadcast_to(w @ ref, ref.shape)
    risk_avg_s = model.empirical_risk(data, avg_b)
    risk_loc_s = model.empirical_risk(data, theta)
    gap = np.einsum("k,tk->t", w, model.population_risk(avg_b) - risk_avg_s
                    - _control_variate(model, data, ref_avg))
    local_gap = model.population_risk(theta) - risk_loc_s - _control_variate(model, data, ref)
    nonid = risk_avg_s - risk_loc_s
    # S^(k): client k's dataset replaced by its copy; only client k's local model changes.
    replaced = avg_b + w[None, :, None] * (theta_c - theta)
    v = avg_b - replaced
    g = model.empirical_grad(copy, replaced)
    risk_copy_replaced = model.empirical_risk(copy, replaced)
    min_copy = model.empirical_risk(copy, star_c)
    loo = model.empirical_risk(copy, avg_b) - risk_copy_replaced
    v_sq = np.einsum("tki,tki->tk", v, v)
    g_sq = np.einsum("tki,tki->tk", g, g)
    g_dot_v = np.einsum("tki,tki->tk", g, v)
    excess_copy = risk_copy_replaced - min_copy
    L = model.L if np.isfinite(model.L) else np.nan  # OLS: no smoothness constant
    smooth_slack = g_dot_v + 0.5 * L * v_sq - loo
    diff = theta - theta_c
    sc_slack = (model.empirical_risk(copy, theta) - model.empirical_risk(copy, theta_c)
                - 0.5 * model.mu * np.einsum("tki,tki->tk", diff, diff)) if local_is_erm \
        else np.zeros_like(v_sq)
    pl_slack = 2.0 * L * excess_copy - g_sq
    return OneRoundDraws(gap, local_gap, nonid, opt_error, loo, v_sq, g_sq, g_dot_v,
                         excess_copy, smooth_slack, sc_slack, pl_slack)


class BoundSummary(NamedTuple):
    """Means and standard errors of a one-round bound and the true gap."""

    gap: float
    gap_se: float
    bound: float
    bound_se: float
    G: np.ndarray
    D: np.ndarray
    first_term: float
    first_term_se: float
    second_term: float


def _bound_terms(G, D, w, kappa, first, second, G_root=None):
    """sum_k w_k [first kappa w_k^2 G_k + second sqrt(kappa) w_k sqrt(D_k G'_k)], per row;
    G' = ``G_root`` (default G)."""
    G_root = G if G_root is None else G_root
    G_pos, D_pos = np.maximum(G_root, 0.0), np.maximum(D, 0.0)
    t1 = first * kappa * (w ** 3 * G).sum(axis=-1)
    t2 = second * np.sqrt(kappa) * (w ** 2 * np.sqrt(D_pos * G_pos)).sum(axis=-1)
    return t1, t2


def summarize_bound(draws: OneRoundDraws, weights, mu: float, L: float,
                    rng: np.random.Generator, *, kind: str = "thm41",
                    n_boot: int = 200, bootstrap: str = "multinomial") -> BoundSummary:
    r"""Thm 4.1 (``kind="thm41"``), Thm B.1 (``kind="thmB1"``) or the printed (56)
    (``kind="eq56"``) bound with a bootstrap SE.

    Thm 4.1: :math:`\sum_k w_k[\kappa w_k^2 G_k + 2\sqrt\kappa\, w_k\sqrt{D_k G_k}]`.
    Thm B.1 (37): :math:`\sum_k w_k[2\kappa w_k^2 \tilde G_k + \sqrt{8\kappa}\, w_k
    \sqrt{\tilde D_k\tilde G_k}]` with :math:`\tilde G = E(\Delta_{\mathcal A_k} + 2\varepsilon_k)`,
    :math:`\tilde D = E(\delta_k + \varepsilon_k)`. (56) as printed: as (37) but with
    :math:`E(\Delta_{\mathcal A_k} + \varepsilon_k)` instead of :math:`\tilde G` under the
    square root. Expectations are taken before the square root (spec 7.18); the SE is the
    bootstrap SD over draws (multinomial resampling): ``bootstrap="multinomial"`` draws each
    replicate's counts with ``rng.multinomial``, ``"indices"`` counts T indices drawn
    uniformly (the same law of the counts from a cheaper stream, about a tenth of the cost).
    """
    if bootstrap not in ("multinomial", "indices"):
        raise ValueError("bootstrap must be 'multinomial' or 'indices'")
    w = np.asarray(weights, dtype=float)
    kappa = L / mu
    root_rows = None
    if kind == "thm41":
        g_rows, d_rows, first, second = draws.local_gap, draws.nonid, 1.0, 2.0
    elif kind in ("thmB1", "eq56"):
        g_rows = draws.local_gap + 2.0 * draws.opt_error
        d_rows = draws.nonid + draws.opt_error
        first, second = 2.0, np.sqrt(8.0)
        if kind == "eq56":
            root_rows = draws.local_gap + draws.opt_error
    else:
        raise ValueError("kind must be 'thm41', 'thmB1' or 'eq56'")
    if root_rows is None:
        root_rows = g_rows
    T = g_rows.shape[0]
    G, D = g_rows.mean(axis=0), d_rows.mean(axis=0)
    t1, t2 = _bound_terms(G, D, w, kappa, first, second, root_rows.mean(axis=0))
    if bootstrap == "multinomial":
        counts = rng.multinomial(T, np.full(T, 1.0 / T), size=n_boot) / T
    else:
        picks = rng.integers(0, T, size=(n_boot, T)) + T * np.arange(n_boot)[:, None]
        counts = np.bincount(picks.ravel(), minlength=n_boot * T).reshape(n_boot, T) / T
    b1, b2 = _bound_terms(counts @ g_rows, counts @ d_rows, w, kappa, first, second,
                          counts @ root_rows)
    return BoundSummary(float(draws.gap.mean()), float(draws.gap.std(ddof=1) / np.sqrt(T)),
                        float(t1 + t2), float(np.std(b1 + b2, ddof=1)), G, D, float(t1),
                        float(np.std(b1, ddof=1)), float(t2))
