r"""Shared Monte Carlo machinery of FedALS's local-SGD results (FedALS, App. B): the one-round
cells of Theorem B.1 and the R-round FedAvg runs of Theorem 4.3 / B.2 and definition (7), on
ridge-on-the-sphere (mu = lambda, L = 1 + lambda), and the instances their hypotheses read.
"""

from __future__ import annotations

import json

import numpy as np

from flbounds.ledger.engine.runs import reused_run
from flbounds.theory.data_models import RidgeModel
from flbounds.theory.generalization import (
    BoundSummary,
    OneRoundDraws,
    one_round_draws,
    summarize_bound,
)
from flbounds.theory.generalization_rounds import (
    RoundTrace,
    batch_plan,
    r_round_fedavg,
    ridge_local_sgd,
)
from verify.replay import generator_at, generator_state, shared_generator

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
    out = []
    for z, model, w, seed in _b1_models(rng, n_clients, lam, zeta):
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


def _b1_models(rng, n_clients, lam, zeta):
    """Per zeta: the model, its weights and the seed of its cells, the only draws
    :func:`_b1_runs` takes from ``rng`` (the cells use generators of their own)."""
    base = rng.standard_normal(DIM)
    out = []
    for z in zeta:
        model = RidgeModel(base + z * rng.standard_normal((n_clients, DIM)), NOISE_SD, lam)
        out.append((z, model, np.full(n_clients, 1.0 / n_clients), int(rng.integers(2 ** 62))))
    return out


#: the Thm B.1 claims read one set of cells: the draws of ``fedals.thmB1.bound``
#: (:func:`verify.replay.shared_generator`), computed once (``reused_run``)
B1_STREAM = "fedals.thmB1.bound"


def shared_b1_runs(rng, **params):
    """:func:`_b1_runs` on the shared stream ``B1_STREAM`` of ``rng``'s root seed, computed
    once for every claim that asks (the draws and summaries stored; the models replayed)."""
    state = generator_state(shared_generator(rng, B1_STREAM))

    def compute():
        out = {}
        for i, r in enumerate(_b1_runs(generator_at(state), **params)):
            out.update({f"{i}.draws.{f}": getattr(r["draws"], f) for f in OneRoundDraws._fields})
            out.update({f"{i}.summary.{f}": np.asarray(getattr(r["summary"], f))
                        for f in BoundSummary._fields})
        return out

    arrays = reused_run(dict(run="b1_runs", state=state, **params), compute, code=__name__)

    def value(a):
        return float(a) if a.ndim == 0 else a

    runs = []
    for z, model, w, _ in _b1_models(generator_at(state), params["n_clients"], params["lam"],
                                     params["zeta"]):
        for tau in params["local_steps"]:
            i = len(runs)
            draws = OneRoundDraws(*(arrays[f"{i}.draws.{f}"] for f in OneRoundDraws._fields))
            summary = BoundSummary(*(value(arrays[f"{i}.summary.{f}"])
                                     for f in BoundSummary._fields))
            runs.append(dict(zeta=z, tau=tau, model=model, w=w, draws=draws, summary=summary))
    return runs


def b1_instances(runs):
    """The values Thm B.1's hypotheses read, one instance per (zeta, tau) cell."""
    return [dict(model=r["model"], w=r["w"], local="sgd", local_steps=r["tau"]) for r in runs]


R_QUICK = dict(n_draws=200, n_clients=4, batch_size=4, step=0.5, n_rounds=10, zeta=1.0,
               lam=0.1, local_steps=[1, 2, 5, 10, 20])
R_FULL = dict(n_draws=3000, n_clients=4, batch_size=4, step=0.5, n_rounds=10, zeta=1.0,
              lam=0.1, local_steps=[1, 2, 5, 10, 20])


def round_model(rng, n_clients, zeta, lam):
    """The ridge model of the R-round runs (their first draws from ``rng``) and its weights."""
    model = RidgeModel(rng.standard_normal(DIM) + zeta * rng.standard_normal((n_clients, DIM)),
                       NOISE_SD, lam)
    return model, np.full(n_clients, 1.0 / n_clients)


def _r_round_runs(rng, n_draws, n_clients, batch_size, step, n_rounds, zeta, lam, local_steps):
    model, w = round_model(rng, n_clients, zeta, lam)
    runs = []
    for tau in local_steps:
        tr = r_round_fedavg(model, w, rng, n_draws=n_draws, n_rounds=n_rounds,
                            local_steps=tau, batch_size=batch_size, step=step)
        runs.append(dict(tau=tau, trace=tr, model=model, w=w))
    return runs


#: the R-round claims (Def. 7, Thm 4.3 / B.2) read one set of runs: the draws of
#: ``fedals.thm43.eq56_printed`` (:func:`verify.replay.shared_generator`), computed once
#: (``reused_run``)
R_STREAM = "fedals.thm43.eq56_printed"


def shared_r_round_runs(rng, **params):
    """:func:`_r_round_runs` on the shared stream ``R_STREAM`` of ``rng``'s root seed,
    computed once for every claim that asks (traces stored, the model replayed), and the
    stream's generator as the runs leave it (for the claim's further draws)."""
    state = generator_state(shared_generator(rng, R_STREAM))

    def compute():
        g = generator_at(state)
        out = {}
        for i, r in enumerate(_r_round_runs(g, **params)):
            out[f"{i}.literal"], out[f"{i}.corrected"] = r["trace"].literal, r["trace"].corrected
            out.update({f"{i}.draws.{f}": np.stack([getattr(d, f) for d in r["trace"].draws])
                        for f in OneRoundDraws._fields})
        out["after"] = np.frombuffer(json.dumps(generator_state(g)).encode(), dtype=np.uint8)
        return out

    arrays = reused_run(dict(run="r_round_runs", state=state, **params), compute, code=__name__)
    model, w = round_model(generator_at(state), params["n_clients"], params["zeta"],
                           params["lam"])
    runs = []
    for i, tau in enumerate(params["local_steps"]):
        draws = [OneRoundDraws(*(arrays[f"{i}.draws.{f}"][r] for f in OneRoundDraws._fields))
                 for r in range(params["n_rounds"])]
        trace = RoundTrace(arrays[f"{i}.literal"], arrays[f"{i}.corrected"], draws)
        runs.append(dict(tau=tau, trace=trace, model=model, w=w))
    return runs, generator_at(json.loads(arrays["after"].tobytes().decode()))


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
