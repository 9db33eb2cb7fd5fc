r"""Figure 2 of SAFARI: test accuracy on CIFAR-10 with s = 4, p = 1, q = 0.4 for FedAvg
and SAFARI at three server sizes; the text reads it as "SAFARI converges faster and reaches a
higher accuracy as the server dataset grows". Re-run on the digits stand-in of
:mod:`.digits` (multinomial logistic regression, M = 10, m = 5, one local epoch, lr 0.1, one
epoch of server SGD per server round) at the figure's q = 0.4: kind ``reproduction``, so not
showing the figure's effect would not accuse the paper.
"""

from __future__ import annotations

from flbounds.ledger import Evidence, claim

from ..digits_experiment import GainSetting, gains
from . import FIGURE2
from .digits import CI_TOL, EPOCH, PRINTED_GAIN, _t_interval

#: the figure's setting: p = 1 class per client, s = 4 excluded clients, q = 0.4
P_CLASSES, N_EXCLUDED, Q_FIG2 = 1, 4, 0.4


def _paired_gains(rng, sizes, n_seeds, n_rounds):
    """(n_seeds, len(sizes)) SAFARI - FedAvg gains (points) at q = 0.4, one seed's generator
    consumed by the sizes in order (as :func:`verify.safari.tables.digits._gains`)."""
    draws = [(child, GainSetting(P_CLASSES, N_EXCLUDED, n_t, Q_FIG2))
             for child in rng.spawn(n_seeds) for n_t in sizes]
    acc = gains(draws, n_rounds=n_rounds)
    return (acc[:, 1] - acc[:, 0]).reshape(n_seeds, len(sizes))


@claim("safari.figure2.accuracy_grows_with_server_size", ref="Figure 2 (text, Sec. 5)",
       kind="reproduction", expected="reproduced", result=FIGURE2, parts=("server_size",),
       statement="At q = 0.4, s = 4, p = 1 SAFARI's accuracy gain over FedAvg grows with the "
                 "server data: larger with n_T = 200 than with n_T = 25, at the end of the run "
                 "and already after a quarter of it (digits re-run)." + EPOCH,
       quick=dict(sizes=[25, 200], n_seeds=4, n_rounds=100),
       full=dict(sizes=[25, 200], n_seeds=10, n_rounds=150))
def accuracy_grows_with_server_size(*, rng, sizes, n_seeds, n_rounds):
    """Paired by seed (each seed's generator draws the federations, server samples and plans
    of both sizes, FedAvg and SAFARI sharing a plan). Measured: the lower ends of the 95%
    t-intervals of gain(n_T = 200) - gain(n_T = 25) after n_rounds / 4 ("converges faster")
    and after n_rounds ("higher accuracy"); "higher" is strict, so each must be at least 0.01
    points (the resolution the paper prints accuracies at) to reproduce the figure's reading."""
    early = _paired_gains(rng.spawn(1)[0], sizes, n_seeds, max(4, n_rounds // 4))
    final = _paired_gains(rng.spawn(1)[0], sizes, n_seeds, n_rounds)
    lows, cis = [], []
    for g in (early, final):
        lo, hi = _t_interval(g[:, -1] - g[:, 0])
        lows.append(lo)
        cis.append([lo, hi])
    decided = all(lo >= 0.01 or hi < PRINTED_GAIN for lo, hi in cis)
    return Evidence(measured=lows, theoretical=[0.01, 0.01], relation=">=", tolerance=CI_TOL,
                    undecided="" if decided else f"95% intervals {cis} neither detect the "
                    f"growth nor exclude a printed {PRINTED_GAIN}-point one",
                    details={"sizes": sizes, "difference_ci95_early_final": cis,
                             "mean_gain_early": early.mean(axis=0),
                             "mean_gain_final": final.mean(axis=0), "q": Q_FIG2,
                             "rounds_early_final": [max(4, n_rounds // 4), n_rounds]})
