r"""K-Vib regret vs the budget K on log-log axes, per sampler, with fitted slopes (Fig. 3b / 6).

Static regret :math:`\sum_t\ell_t(p^t)-\min_p\sum_t\ell_t(p)` with the exact best fixed ISP
probability in hindsight, Assumption-5.1 feedback (LogNormal profile, :math:`\lambda=1/N`),
median and 20-80% band over seeds; the dashed line has the theoretical slope -4/3 (Thm 5.2).
RSP baselines (Vrb, Mabs, Avare reconstructed) are charged :math:`\ell_t(Kq^t)`.
"""

from __future__ import annotations

import sys

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter

from figures._common import band, run_figure
from flbounds.sampling import Avare, Mabs, UniformISP, Vrb
from flbounds.sampling.online import Assumption51Feedback, kvib_online, run_online, static_regret
from flbounds.stats import loglog_slope

NAME = "kvib_regret_k"
#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("kvib.thm5_2.k_exponent", "kvib.app_f")
SAMPLERS = ("K-Vib (paper)", "K-Vib (code variant)", "Vrb", "Mabs", "Avare (reconstructed)",
            "uniform ISP")


def _costs(name, fb, k, t, rng):
    n, G = fb.n_clients, fb.G
    if name.startswith("K-Vib"):
        variant = "paper" if "paper" in name else "code"
        return kvib_online(fb, t, k, rng, G=G, variant=variant).costs
    make = {"Vrb": lambda: Vrb(n, k, t, G=G), "Mabs": lambda: Mabs(n, k, t, G=G),
            "Avare (reconstructed)": lambda: Avare(n, k, G=G),
            "uniform ISP": lambda: UniformISP(n, k)}[name]
    return run_online(make(), fb, t, rng).costs


def compute(profile: str = "quick", seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    n, t, n_seeds = (100, 2000, 2) if profile == "quick" else (100, 8000, 5)
    ks = np.array([2, 4, 8, 16])
    fb = Assumption51Feedback.generate(rng, n)
    data = {"ks": ks, "n_clients": n, "n_rounds": t}
    children = rng.spawn(n_seeds)
    for j, name in enumerate(SAMPLERS):
        reg = np.array([[static_regret(_costs(name, fb, int(k), t,
                                              np.random.default_rng([seed, j, s])), fb, k)
                         for k in ks] for s in range(len(children))])
        data[f"regret_{j}"] = reg
    return data


def plot(data: dict):
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    ks = data["ks"]
    rng = np.random.default_rng(0)
    for j, name in enumerate(SAMPLERS):
        reg = data[f"regret_{j}"]
        fit = loglog_slope(ks, reg, rng=rng, n_boot=500)
        band(ax, ks, reg, label=f"{name}: slope {fit.slope:.2f}".replace(" -", " −"))
        ax.lines[-1].set_marker("osD^vx"[j])      # markers tell apart lines that run close
    ref = data["regret_0"].mean(0)[0] * (ks / ks[0]) ** (-4 / 3)
    ax.plot(ks, ref, "k--", linewidth=1, label=r"slope $-4/3$ (Thm 5.2), through K-Vib's first")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(r"budget $K$")
    ax.set_ylabel(r"$\mathrm{Regret}_S(T)$")
    ax.set_title(rf"Regret vs $K$ ($N = {int(data['n_clients'])}$, $T = {int(data['n_rounds'])}$;"
                 " median, 20-80% band)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1))
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
