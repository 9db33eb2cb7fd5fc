r"""Shared Monte Carlo machinery of FedALS's local-SGD results (FedALS, App. B): the one-round
cells of Theorem B.1 and the R-round FedAvg runs of Theorem 4.3 / B.2 and definition (7), on
ridge-on-the-sphere (mu = lambda, L = 1 + lambda), and the instances their hypotheses read.
"""

from __future__ import annotations

import numpy as np

from flbounds.theory.data_models import RidgeModel
from flbounds.theory.generalization import one_round_draws, summarize_bound
from flbounds.theory.generalization_rounds import batch_plan, r_round_fedavg, ridge_local_sgd

from .instances import DIM, NOISE_SD

B1_QUICK = dict(n_draws=400, n_clients=4, n_samples=40, lam=0.1, batch_size=8, step=0.5,
                local_steps=[1, 5, 20], zeta=[0.0, 1.0])
B1_FULL = dict(n_draws=4000, n_clients=4, n_samples=40, lam=0.1, batch_size=8, step=0.5,
               local_steps=[1, 5, 20, 100], zeta=[0.0, 1.0])


PILOT_DRAWS = 200


def _b1_runs(rng, n_draws, n_clients, n_samples, lam, batch_size, step, local_steps, zeta):
    """Thm B.1 Monte Carlo cells, one per (zeta, tau).

    What is paired across tau (within one zeta): the client optima and every dataset S and
    copy S' (all draws, every chunk): the datasets come from a generator seeded identically
    for each tau and used for nothing else until they are all drawn (then for the bound's
    bootstrap). Not paired: the SGD batch indices (their shape depends on tau; they come from
    a separate per-tau stream ``[seed, tau]``) and the control-variate pilot (its datasets and
    batch plans, stream ``[seed, tau, 1]``, independent of the datasets).
    Differences across tau therefore differ only through tau and the batch plans.
    """
    base = rng.standard_normal(DIM)
    out = []
    for z in zeta:
        model = RidgeModel(base + z * rng.standard_normal((n_clients, DIM)), NOISE_SD, lam)
        w = np.full(n_clients, 1.0 / n_clients)
        seed = int(rng.integers(2 ** 62))
        for tau in local_steps:
            sub = np.random.default_rng(seed)
            plans = np.random.default_rng([seed, tau])

            def run_local(data, g, tau=tau, model=model):
                plan = batch_plan(g, data.X.shape[0], n_clients, n_samples, tau, batch_size)
                return ridge_local_sgd(model, data, plan, step=step)

            def local(data, _datasets_rng, run_local=run_local, plans=plans):
                return run_local(data, plans)     # batch plans never touch the datasets' rng

            # control-variate points: mean local output over independent pilot draws
            pilot = np.random.default_rng([seed, tau, 1])
            ref = run_local(model.sample(pilot, PILOT_DRAWS, n_samples), pilot).mean(axis=0)
            dr = one_round_draws(model, w, n_samples, n_draws, sub, local=local, reference=ref)
            s = summarize_bound(dr, w, model.mu, model.L, sub, kind="thmB1")
            out.append(dict(zeta=z, tau=tau, model=model, w=w, draws=dr, summary=s))
    return out


def b1_instances(runs):
    """The values Thm B.1's hypotheses read, one instance per (zeta, tau) cell."""
    return [dict(model=r["model"], w=r["w"], local="sgd", local_steps=r["tau"]) for r in runs]


R_QUICK = dict(n_draws=200, n_clients=4, batch_size=4, step=0.5, n_rounds=10, zeta=1.0,
               lam=0.1, local_steps=[1, 2, 5, 10, 20])
R_FULL = dict(n_draws=3000, n_clients=4, batch_size=4, step=0.5, n_rounds=10, zeta=1.0,
              lam=0.1, local_steps=[1, 2, 5, 10, 20])


def _r_round_runs(rng, n_draws, n_clients, batch_size, step, n_rounds, zeta, lam, local_steps):
    model = RidgeModel(rng.standard_normal(DIM) + zeta * rng.standard_normal((n_clients, DIM)),
                       NOISE_SD, lam)
    w = np.full(n_clients, 1.0 / n_clients)
    runs = []
    for tau in local_steps:
        tr = r_round_fedavg(model, w, rng, n_draws=n_draws, n_rounds=n_rounds,
                            local_steps=tau, batch_size=batch_size, step=step)
        runs.append(dict(tau=tau, trace=tr, model=model, w=w))
    return runs


def _avg_se(per_round):
    x = per_round.mean(axis=0)          # average over rounds, one value per draw
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(len(x)))


def round_instances(runs):
    """The values Thm 4.3 / B.2's hypotheses read, one instance per tau: R rounds of local
    SGD on fresh one-pass data (``r_round_fedavg``: |Z_kr| = tau b new samples per round)."""
    return [dict(model=r["model"], w=r["w"], local="sgd", local_steps=r["tau"],
                 data_reuse="fresh") for r in runs]


def _ratio(a, b):
    """mean(b)/mean(a) and its delta-method SE, a and b (n,) independent-draw samples."""
    ma, mb = a.mean(), b.mean()
    sa, sb = a.std(ddof=1) / np.sqrt(len(a)), b.std(ddof=1) / np.sqrt(len(b))
    r = mb / ma
    return float(r), float(abs(r) * np.hypot(sa / ma, sb / mb))
