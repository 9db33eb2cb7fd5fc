r"""SAFARI Theorems 2-3: excess error :math:`\epsilon_P` of threshold ERM vs sample size.

FL-only (client data from :math:`\mathcal D = U[0.2, 0.6]`), server-only (:math:`P = U[0,1]`)
and SA-FL (pooled, :math:`n_S = 10 n_T`), against the total sample size, for a boundary
inside supp :math:`\mathcal D` (:math:`t^* = 0.4`) and outside it (:math:`t^* = 0.8`). Median
and 20-80% band over seeds; reference slope -1. (Spec V3.)
"""

from __future__ import annotations

import sys

import matplotlib.pyplot as plt
import numpy as np

from figures._common import band, run_figure
from flbounds.theory.thresholds import pooled_erm_errors, uniform

NAME = "safari_threshold_rates"
#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("safari.thm2", "safari.thm3")
CLIENT, SERVER = uniform(0.2, 0.6), uniform(0.0, 1.0)


def compute(profile: str = "quick", seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    n_reps = 60 if profile == "quick" else 400
    totals = np.array([22, 66, 220, 660, 2200, 6600] + ([22000] if profile == "full" else []))
    data = {"n_total": totals}
    for target in (0.4, 0.8):
        for name, (frac_client, frac_server) in {"fl": (1.0, 0.0), "server": (0.0, 1.0),
                                                 "safl": (10 / 11, 1 / 11)}.items():
            err = np.empty((n_reps, totals.size))
            for j, n in enumerate(totals):
                err[:, j] = pooled_erm_errors(
                    rng, n_client=int(round(frac_client * n)), n_server=int(round(frac_server * n)),
                    client_dist=CLIENT, server_dist=SERVER, target=target, n_reps=n_reps)["eps_p"]
            data[f"{name}_{target}"] = err
    return data


def plot(data: dict):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
    x = data["n_total"]
    for ax, target in zip(axes, (0.4, 0.8), strict=True):
        for name, label in (("fl", r"FL only ($n_T=0$)"), ("server", r"server only ($n_S=0$)"),
                            ("safl", r"SA-FL ($n_S=10n_T$)")):
            band(ax, x, np.maximum(data[f"{name}_{target}"], 1e-7), label=label)
        ref = np.median(data[f"server_{target}"][:, 0]) * x[0] / x
        ax.plot(x, ref, "k--", linewidth=1, label="slope $-1$")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(r"total sample size $n_T + n_S$")
        ax.set_title(fr"$t^*={target}$ " + ("(inside supp $\\mathcal{D}$)" if target < 0.6
                                           else "(outside supp $\\mathcal{D}$)"))
    axes[0].set_ylabel(r"excess error $\epsilon_P(\hat h)$")
    axes[0].legend()
    fig.tight_layout()
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
