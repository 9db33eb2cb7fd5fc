r"""Qualitative claims of SAFARI's experiments (SAFARI, Sec. 5, Tables 1-4; spec V8), replicated
on scikit-learn's digits with multinomial logistic regression (see
:mod:`verify.safari.digits_experiment` for the setting and its interpretation choices).

Interpretation shared by these claims: a server round runs one *epoch* of minibatch SGD over
the n_T server samples, whereas Algorithm 1 line 11 prints a single server SGD step per server
round (the experiments do not state the number of server steps, spec 7.A.20).
``safari.digits.literal_single_server_step`` runs the literal single step.

Each seed draws one federation (split, partition, server sample) and one plan; FedAvg (q = 1)
and SAFARI (q = 0.8) run on the same plan, so gains are paired. These are synthetic re-runs
of the paper's tables (kind ``reproduction``), decided on the two-sided 95% t-interval over
seeds of a paired gain: ``reproduced`` when its lower end is >= 0 (the effect is detected);
``not-reproduced`` when its upper end is below 2 points (the data exclude a difference the
paper would print: its tables print '-' for differences within a 2% error bar); otherwise
``inconclusive``, with the interval.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from flbounds.ledger import Evidence, Tolerance, claim

from ..alg1 import ALG1
from ..digits_experiment import GainSetting, gains
from . import TABLE2, TABLE3, TABLE4

CI_TOL = Tolerance.exact("the 95% t-interval over paired seeds is what is compared")
#: the smallest difference the paper prints as one (its '-' is "within a 2% error bar")
PRINTED_GAIN = 2.0


def undecided_gain(lo: float, hi: float) -> str:
    """'' when the interval decides (lower end >= 0, or upper end < 2 points), else why not."""
    if lo >= 0 or hi < PRINTED_GAIN:
        return ""
    return (f"the 95% interval [{lo:.2f}, {hi:.2f}] points contains 0 and reaches "
            f"{PRINTED_GAIN} points: too few seeds to detect the gain or to exclude a printed "
            "one")


EPOCH = (" [Interpretation: a server round is one epoch of server SGD, not Alg. 1 line 11's "
         "single step.]")


def _gains(rng, configs, n_seeds, n_rounds, server_steps=None, batch=16):
    """(n_seeds, len(configs)) SAFARI - FedAvg accuracy gains (points): per seed, the
    configs in order on that seed's generator, all runs in one lockstep batch."""
    draws = [(child, GainSetting(p, s, n_t)) for child in rng.spawn(n_seeds)
             for p, s, n_t in configs]
    acc = gains(draws, n_rounds=n_rounds, server_steps=server_steps, batch=batch)
    return (acc[:, 1] - acc[:, 0]).reshape(n_seeds, len(configs))


def _t_interval(x):
    x = np.asarray(x, dtype=float)
    half = stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
    return float(x.mean() - half), float(x.mean() + half)


def _difference_claim(rng, hi_cfg, lo_cfg, n_seeds, n_rounds):
    g = _gains(rng, [hi_cfg, lo_cfg], n_seeds, n_rounds)
    diff = g[:, 0] - g[:, 1]
    lo, hi = _t_interval(diff)
    return Evidence(measured=lo, theoretical=0.0, relation=">=", tolerance=CI_TOL,
                    undecided=undecided_gain(lo, hi),
                    details={"mean_gain": g.mean(axis=0), "configs_p_s_nT": [hi_cfg, lo_cfg],
                             "difference_ci95": [lo, hi], "gains_per_seed": g})


QUICK = dict(n_seeds=4, n_rounds=100)
FULL = dict(n_seeds=10, n_rounds=150)


@claim("safari.digits.gain_grows_as_p_falls", ref="Tables 1-2", kind="reproduction",
       expected="reproduced", result=TABLE2, parts=("trends",),
       statement="With s = 4 excluded clients and n_T = 200 server samples, SAFARI's gain over "
                 "FedAvg is larger at p = 1 than at p = 10 (digits replication)." + EPOCH,
       quick=QUICK, full=FULL)
def gain_grows_as_p_falls(*, rng, n_seeds, n_rounds):
    """At p = 1 the excluded clients hold 4 classes FedAvg never sees (FedAvg <= ~60%), the
    server data teach them; at p = 10 nothing is missing. Lower 95% CI of the paired
    difference of gains must be >= 0."""
    return _difference_claim(rng, (1, 4, 200), (10, 4, 200), n_seeds, n_rounds)


@claim("safari.digits.gain_grows_with_s", ref="Tables 1-2", kind="reproduction",
       expected="reproduced", result=TABLE2, parts=("trends",),
       statement="At p = 1 with n_T = 200, SAFARI's gain over FedAvg is larger with s = 4 "
                 "excluded clients than with s = 0." + EPOCH,
       quick=QUICK, full=FULL)
def gain_grows_with_s(*, rng, n_seeds, n_rounds):
    """With s = 0 every class reaches FedAvg through sampled clients; with s = 4 four classes
    are missing. Lower 95% CI of the paired difference of gains must be >= 0."""
    return _difference_claim(rng, (1, 4, 200), (1, 0, 200), n_seeds, n_rounds)


@claim("safari.digits.gain_grows_with_server_size", ref="Tables 3-4",
       kind="reproduction", expected="reproduced",
       parts=(TABLE3.part("trend"), TABLE4.part("trend")),
       statement="At p = 1, s = 4, SAFARI's gain is larger with n_T = 200 server samples than "
                 "with n_T = 25." + EPOCH,
       quick=QUICK, full=FULL)
def gain_grows_with_server_size(*, rng, n_seeds, n_rounds):
    """More server samples per missing class; lower 95% CI of the paired difference >= 0."""
    return _difference_claim(rng, (1, 4, 200), (1, 4, 25), n_seeds, n_rounds)


@claim("safari.digits.no_gain_iid", ref="Tables 2-4 ('-' at p = 10)",
       kind="reproduction", expected="reproduced",
       parts=(TABLE2.part("trends"), TABLE3.part("improvement"), TABLE4.part("improvement")),
       statement="At p = 10 (i.i.d.) with s = 4 SAFARI and FedAvg do not differ by more than "
                 "2 points (the paper's '-')." + EPOCH,
       quick=dict(n_seeds=6, n_rounds=100), full=dict(n_seeds=20, n_rounds=150))
def no_gain_iid(*, rng, n_seeds, n_rounds):
    """Every eligible client holds every class, so excluding clients removes no information;
    the 95% t-interval of the gain must lie inside [-2, 2]."""
    g = _gains(rng, [(10, 4, 200)], n_seeds, n_rounds)[:, 0]
    lo, hi = _t_interval(g)
    # not-reproduced only if the interval lies wholly outside [-2, 2]
    outside = lo > PRINTED_GAIN or hi < -PRINTED_GAIN
    return Evidence(measured=[lo, hi], theoretical=[(-2.0, 2.0)] * 2, relation="in",
                    tolerance=CI_TOL, details={"gains_per_seed": g, "mean": float(g.mean())},
                    undecided="" if outside else
                    f"the 95% interval [{lo:.2f}, {hi:.2f}] straddles the 2-point band")


@claim("safari.digits.literal_single_server_step", ref="Alg. 1 line 11; Tables 1-2",
       kind="reproduction", expected="not-reproduced",
       parts=(ALG1.part("server_round"), TABLE2.part("improvement")),
       statement="With Algorithm 1 as printed (one server SGD step per server round: one "
                 "minibatch of 64, the paper's MNIST batch, at lr 0.1; clients also in batches "
                 "of 64), SAFARI improves on FedAvg at p = 1, s = 4, n_T = 200 (digits "
                 "replication, same round budget as the other digits claims).",
       quick=dict(n_seeds=3, n_rounds=100, batch=64),
       full=dict(n_seeds=10, n_rounds=150, batch=64))
def literal_single_server_step(*, rng, n_seeds, n_rounds, batch):
    """Companion of the digits claims, which run one epoch of server SGD per server round.
    Measured: the lower end of the paired 95% t-interval of the gain (points), >= 0 required.
    Expected `not-reproduced`, from the computation: with a single step of 64 samples, the
    ~20-30 server rounds of a 100-150 round run apply ~2,000 sample-gradients at lr 0.1 in
    total, too little to teach the 4 classes only the server holds, and every server round
    replaces a client round; the measured gain is nil (quick, 3 seeds: CI about [-0.15, 0.2]
    points; with batches of 16 it was [-0.3, 0.1]), while the epoch interpretation gains ~+30
    points on the same configuration. This records that the printed pseudocode, at this
    scale and with the experiments' lr and batch, does not reproduce the tables' gain; the
    paper's experiments may have used more server steps or many more rounds (not stated,
    spec 7.A.20), so this is a finding about the literal pseudocode, not about the paper's
    tables.

    A synthetic re-run of an empirical result (kind ``reproduction``): not reproducing the paper's
    effect here is not a paper error."""
    g = _gains(rng, [(1, 4, 200)], n_seeds, n_rounds, server_steps=1, batch=batch)[:, 0]
    lo, hi = _t_interval(g)
    return Evidence(measured=lo, theoretical=0.0, relation=">=", tolerance=CI_TOL,
                    undecided=undecided_gain(lo, hi),
                    details={"gains_per_seed": g, "mean_gain": float(g.mean()),
                             "gain_ci95": [lo, hi], "server_steps": 1, "batch": batch,
                             "config_p_s_nT": [1, 4, 200]})
