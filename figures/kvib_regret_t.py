r"""K-Vib regret vs the horizon T on log-log axes for several budgets K (Thm 5.2: T^{2/3}).

Left: :math:`\mathrm{Regret}_S(T)` with fitted slopes and a :math:`T^{2/3}` reference; right:
:math:`\mathrm{Regret}_S(T)/T`, which must decrease. Median and 20-80% band over seeds;
:math:`\theta,\gamma` at their T-dependent theory values (Algorithm 2 as printed).
"""

from __future__ import annotations

import sys

import matplotlib.pyplot as plt
import numpy as np

from figures._common import band, run_figure
from flbounds.sampling.online import Assumption51Feedback, kvib_online, static_regret
from flbounds.stats import loglog_slope

NAME = "kvib_regret_t"
#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("kvib.thm5_2.t_exponent", "kvib.thm5_2.sublinear")


def compute(profile: str = "quick", seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    n, n_seeds = 100, (3 if profile == "quick" else 10)
    rounds = np.array([1000, 2000, 4000, 8000, 16000] if profile == "quick"
                      else [1000, 4000, 16000, 64000])
    ks = np.array([2, 8, 16])
    fb = Assumption51Feedback.generate(rng, n)
    data = {"rounds": rounds, "ks": ks}
    for k in ks:
        data[f"regret_K{k}"] = np.array([[static_regret(
            kvib_online(fb, int(t), int(k), np.random.default_rng([seed, int(k), s]),
                        G=fb.G).costs, fb, k) for t in rounds] for s in range(n_seeds)])
    return data


def plot(data: dict):
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4.2))
    t = data["rounds"]
    rng = np.random.default_rng(0)
    for k in data["ks"]:
        reg = data[f"regret_K{k}"]
        fit = loglog_slope(t, reg, rng=rng, n_boot=500)
        band(ax, t, reg, label=rf"$K = {k}$: slope {fit.slope:.2f}")
        band(ax2, t, reg / t, label=rf"$K = {k}$")
    ref = data[f"regret_K{data['ks'][0]}"].mean(0)[0] * (t / t[0]) ** (2 / 3)
    ax.plot(t, ref, "k--", linewidth=1, label=r"$T^{2/3}$")
    for a in (ax, ax2):
        a.set_xscale("log")
        a.set_yscale("log")
        a.set_xlabel(r"horizon $T$")
        a.legend()
    ax.set_ylabel(r"$\mathrm{Regret}_S(T)$")
    ax2.set_ylabel(r"$\mathrm{Regret}_S(T)/T$")
    ax.set_title(r"K-Vib static regret vs $T$")
    ax2.set_title("average regret per round")
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
