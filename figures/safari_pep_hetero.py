r"""SAFARI, heterogeneous clients: one round's worst case (PEP) and a replayed witness against s.

N = 3 clients, each L-smooth mu-strongly convex (mu = 1, L = 2), q = 0.5, K = 2, eta_s =
0.0333, eta_c = 4 L eta_s/(K(L + mu)), no gradient noise. x-axis: s = sigma_G^2 /
||x_r - x*||^2. Curves: the proof's one-round inequality (83), (1 - eta_bar) + delta(s) (Theorem
5 at R = 1 is larger still); the SDP upper bound on the worst E||x_{r+1} - x*||^2 over the class
(``flbounds.pep.safari_hetero_rate``, Assumption 5 at the evaluated points) with full
participation and with client 3 never sampled (1 of clients 1-2 per client round); and, for the
biased case, the best 1-D quadratic instance replayed through ``flbounds.algorithms.safari``
(a lower bound, ``flbounds.pep.server_hetero_witness``). Steps, q-condition and (83) from
``verify.safari.pep_conditions``.
"""

from __future__ import annotations

import sys

import numpy as np

from figures._common import run_figure
from flbounds.pep import safari_hetero_rate
from verify.safari.pep_conditions import (
    one_round_bound,
    thm5_hetero_witness,
    thm5_state_constraint,
    thm5_steps,
)

NAME = "safari_pep_hetero"
CLAIMS = ("safari.thm5.hetero_tightness",)
PROFILES = {"quick": dict(ss=(0.0, 0.1, 1.0, 10.0)),
            "full": dict(ss=(0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0))}
MU, L, Q, K, STEP, N = 1.0, 2.0, 0.5, 2, 0.1 / 3, 3
BIASED = dict(n_sampled=1, eligible=[0, 1])


def compute(profile="quick", seed=0):
    ss = np.array(PROFILES[profile]["ss"])
    one_round, full, biased, witness = (np.empty(ss.size) for _ in range(4))
    eta_c, _ = thm5_steps(MU, L, K, STEP)
    kw = dict(state_constraint=thm5_state_constraint(MU, L, Q, K, STEP))
    for k, s in enumerate(ss):
        res = safari_hetero_rate(MU, L, Q, K, eta_c, STEP, N, sigma_g2_ratio=s, **kw)
        one_round[k], full[k] = one_round_bound(MU, L, Q, K, STEP, s), res.worst
        biased[k] = safari_hetero_rate(MU, L, Q, K, eta_c, STEP, N, sigma_g2_ratio=s, **kw,
                                       **BIASED).worst
        witness[k] = thm5_hetero_witness(MU, L, Q, K, STEP, N, sigma_g2_ratio=s,
                                         **BIASED).replayed
    return {"s": ss, "one_round": one_round, "pep_full": full, "pep_biased": biased,
            "witness_biased": witness, "q": np.array(Q), "local_steps": np.array(K)}


def plot(data):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    x = np.maximum(data["s"], 1e-3)
    ax.plot(x, data["one_round"], "k--", label=r"proof's (83): $1 - \bar\eta + \delta(s)$")
    ax.plot(x, data["pep_full"], "o-", label="PEP, full participation")
    ax.plot(x, data["pep_biased"], "s-", label="PEP, client 3 never sampled")
    ax.plot(x, data["witness_biased"], "x:", label="replayed 1-D quadratics (biased)")
    ax.set_xscale("log")
    ax.set_xlabel(r"$s = \sigma_G^2 / \|x_r - x^\star\|^2$ ($s = 0$ drawn at $10^{-3}$)")
    ax.set_ylabel(r"worst $E\|x_{r+1} - x^\star\|^2$")
    ax.set_title(r"SAFARI Thm 5, one round, $N = 3$, $q = 0.5$, $K = 2$")
    ax.legend()
    fig.tight_layout()
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
