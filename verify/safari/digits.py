r"""Qualitative claims of SAFARI's experiments ([000], Sec. 5, Tables 1-4; spec V8), replicated
on scikit-learn's digits with multinomial logistic regression (see
:mod:`flbounds.safari_digits` for the setting and its interpretation choices).

Each seed draws one federation (split, partition, server sample) and one plan; FedAvg (q = 1)
and SAFARI (q = 0.8) run on the same plan, so gains are paired. A claim that a gain is
positive compares the lower end of the two-sided 95% t-interval over seeds with 0.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.safari_digits import gain

CI_TOL = Tolerance.exact("the 95% t-interval over paired seeds is what is compared")


def _gains(rng, configs, n_seeds, n_rounds):
    """(n_seeds, len(configs)) SAFARI - FedAvg accuracy gains (points)."""
    out = np.empty((n_seeds, len(configs)))
    for i, child in enumerate(rng.spawn(n_seeds)):
        for j, (p, s, n_t) in enumerate(configs):
            fedavg, safari = gain(child, classes_per_client=p, n_excluded=s, n_server=n_t,
                                  n_rounds=n_rounds)
            out[i, j] = safari - fedavg
    return out


def _t_interval(x):
    x = np.asarray(x, dtype=float)
    half = stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
    return float(x.mean() - half), float(x.mean() + half)


def _difference_claim(rng, hi_cfg, lo_cfg, n_seeds, n_rounds):
    g = _gains(rng, [hi_cfg, lo_cfg], n_seeds, n_rounds)
    diff = g[:, 0] - g[:, 1]
    lo, hi = _t_interval(diff)
    return Evidence(measured=lo, theoretical=0.0, relation=">=", tolerance=CI_TOL,
                    details={"mean_gain": g.mean(axis=0), "configs_p_s_nT": [hi_cfg, lo_cfg],
                             "difference_ci95": [lo, hi], "gains_per_seed": g})


QUICK = dict(n_seeds=4, n_rounds=100)
FULL = dict(n_seeds=10, n_rounds=150)


@claim("safari.digits.gain_grows_as_p_falls", ref="Tables 1-2 (spec V8)", kind="remark",
       expected="holds",
       statement="With s = 4 excluded clients and n_T = 200 server samples, SAFARI's gain over "
                 "FedAvg is larger at p = 1 than at p = 10 (digits replication).",
       quick=QUICK, full=FULL)
def gain_grows_as_p_falls(*, rng, n_seeds, n_rounds):
    """At p = 1 the excluded clients hold 4 classes FedAvg never sees (FedAvg <= ~60%), the
    server data teach them; at p = 10 nothing is missing. Lower 95% CI of the paired
    difference of gains must be >= 0."""
    return _difference_claim(rng, (1, 4, 200), (10, 4, 200), n_seeds, n_rounds)


@claim("safari.digits.gain_grows_with_s", ref="Tables 1-2 (spec V8)", kind="remark",
       expected="holds",
       statement="At p = 1 with n_T = 200, SAFARI's gain over FedAvg is larger with s = 4 "
                 "excluded clients than with s = 0.",
       quick=QUICK, full=FULL)
def gain_grows_with_s(*, rng, n_seeds, n_rounds):
    """With s = 0 every class reaches FedAvg through sampled clients; with s = 4 four classes
    are missing. Lower 95% CI of the paired difference of gains must be >= 0."""
    return _difference_claim(rng, (1, 4, 200), (1, 0, 200), n_seeds, n_rounds)


@claim("safari.digits.gain_grows_with_server_size", ref="Tables 3-4 (spec V8)", kind="remark",
       expected="holds",
       statement="At p = 1, s = 4, SAFARI's gain is larger with n_T = 200 server samples than "
                 "with n_T = 25.",
       quick=QUICK, full=FULL)
def gain_grows_with_server_size(*, rng, n_seeds, n_rounds):
    """More server samples per missing class; lower 95% CI of the paired difference >= 0."""
    return _difference_claim(rng, (1, 4, 200), (1, 4, 25), n_seeds, n_rounds)


@claim("safari.digits.no_gain_iid", ref="Tables 2-4 ('-' at p = 10; spec V8)", kind="remark",
       expected="holds",
       statement="At p = 10 (i.i.d.) with s = 4 SAFARI and FedAvg do not differ by more than "
                 "2 points (the paper's '-').",
       quick=dict(n_seeds=6, n_rounds=100), full=dict(n_seeds=20, n_rounds=150))
def no_gain_iid(*, rng, n_seeds, n_rounds):
    """Every eligible client holds every class, so excluding clients removes no information;
    the 95% t-interval of the gain must lie inside [-2, 2]."""
    g = _gains(rng, [(10, 4, 200)], n_seeds, n_rounds)[:, 0]
    lo, hi = _t_interval(g)
    return Evidence(measured=[lo, hi], theoretical=[(-2.0, 2.0)] * 2, relation="in",
                    tolerance=CI_TOL, details={"gains_per_seed": g, "mean": float(g.mean())})
