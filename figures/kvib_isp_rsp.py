r"""ISP vs RSP variance on random instances (Lemma 2.1, eq. 3; Sec. 3, Fig. 1).

Left: the optimal ISP variance :math:`\mathbb V_{\rm ISP}(p^*)` against (a) the best exact
multinomial-RSP variance (:math:`q\propto\|z\|`) and (b) the RSP bound minimum
:math:`\frac{N-K}{N-1}(\sum a)^2/K`; points below the diagonal favour ISP. Right: the ratio
:math:`\mathbb V_{\rm ISP}(p^*)/\mathbb V_{\rm RSP}` against K/N for Example 3.1's setting
(100 Gaussian vectors in :math:`\mathbb R^{1000}`).
"""

from __future__ import annotations

import sys

import matplotlib.pyplot as plt
import numpy as np

from figures._common import run_figure
from flbounds.sampling import isp_variance, multinomial_variance, optimal_isp_probabilities

NAME = "kvib_isp_rsp"
#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("kvib.lemma2_1", "kvib.sec3", "kvib.example3_1")


def compute(profile: str = "quick", seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    n_inst = 300 if profile == "quick" else 3000
    isp, rsp, bound = (np.empty(n_inst) for _ in range(3))
    for j in range(n_inst):
        n = int(rng.integers(5, 61))
        z = rng.standard_normal((n, 20)) * rng.lognormal(0, 1, (n, 1))
        a = np.linalg.norm(z, axis=1)
        k = int(rng.integers(2, n))
        isp[j] = isp_variance(optimal_isp_probabilities(a, k), a) if k < n else 0.0
        rsp[j] = multinomial_variance(a / a.sum(), z, k)
        bound[j] = (n - k) / (n - 1) * a.sum() ** 2 / k
    z = rng.standard_normal((100, 1000))
    a = np.linalg.norm(z, axis=1)
    ks = np.arange(2, 100, 2)
    ratio = np.array([isp_variance(optimal_isp_probabilities(a, k), a)
                      / multinomial_variance(a / a.sum(), z, int(k)) for k in ks])
    return {"isp": isp, "rsp_exact": rsp, "rsp_bound": bound, "ks": ks, "ratio": ratio}


def plot(data: dict):
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4.4))
    ax.scatter(data["rsp_exact"], data["isp"], s=8, label=r"vs exact RSP ($q \propto \|z\|$)")
    ax.scatter(data["rsp_bound"], data["isp"], s=8, marker="x", label="vs RSP bound (min)")
    lo = max(min(data["isp"][data["isp"] > 0].min(), data["rsp_exact"].min()), 1e-6)
    hi = max(data["rsp_bound"].max(), data["rsp_exact"].max())
    ax.plot([lo, hi], [lo, hi], "k--", linewidth=1, label="equal")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"RSP variance")
    ax.set_ylabel(r"$\mathbb{V}_{\rm ISP}(p^*)$")
    share = np.mean(data["isp"] <= data["rsp_exact"])
    ax.set_title(rf"{share:.0%} of instances: ISP $\leq$ exact RSP")
    ax.legend()
    ax2.plot(data["ks"] / 100, data["ratio"], marker=".")
    ax2.axhline(1.0, color="0.5", linewidth=1)
    for k in (10, 30):
        ax2.axvline(k / 100, color="0.8", linewidth=1)
    ax2.set_xlabel(r"$K/N$ ($N = 100$, $d = 1000$)")
    ax2.set_ylabel(r"$\mathbb{V}_{\rm ISP}(p^*)\,/\,\mathbb{V}_{\rm RSP}(q^*)$")
    ax2.set_title(r"Example 3.1 setting ($K = 10$, 30 marked)")
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
