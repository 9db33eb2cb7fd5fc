r"""Exact aggregation weights against the nominal ones, for three participation processes.

FL analyses often replace :math:`q_i = E[1\{i \in S\}/|S|]` by a nominal weight: the
normalized participation probability :math:`p_i/\sum_j p_j` (Bernoulli) or the sampling weight
:math:`w_i` (weighted sampling without replacement). The figure shows, per client, the exact
:math:`q_i` (computed by :mod:`flbounds.participation`) against that nominal value; points off
the diagonal are the error the approximation makes. (Spec ``002_focus.md``, section 1.5.)
"""

from __future__ import annotations

import sys

import matplotlib.pyplot as plt
import numpy as np

from figures._common import run_figure
from flbounds.participation import Bernoulli, UniformWithoutReplacement, WeightedWithoutReplacement

NAME = "participation_weights"
#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("focus.assumption1",)


def compute(profile: str = "quick", seed: int = 0) -> dict:
    """Exact q and nominal weights for Bernoulli, uniform and weighted m-of-N processes."""
    rng = np.random.default_rng(seed)
    n_clients = 12 if profile == "quick" else 16
    p = rng.uniform(0.05, 0.95, n_clients)
    w = rng.dirichlet(np.ones(n_clients))
    m = 4
    return {
        "bernoulli_exact": Bernoulli(p).aggregation_weights(),
        "bernoulli_nominal": p / p.sum(),
        "uniform_exact": UniformWithoutReplacement(n_clients, m).aggregation_weights(),
        "uniform_printed": np.full(n_clients, 1.0 / m),  # the "q_i = 1/m" of case 3a
        "weighted_exact": WeightedWithoutReplacement(w, m).aggregation_weights(),
        "weighted_nominal": w,
    }


def plot(data: dict):
    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    for key, label, marker in [("bernoulli", r"Bernoulli($p$): $p_i/\sum_j p_j$", "o"),
                               ("weighted", r"weighted $m$-of-$N$: $w_i$", "s")]:
        ax.scatter(data[f"{key}_nominal"], data[f"{key}_exact"], label=label, marker=marker)
    ax.scatter(data["uniform_printed"], data["uniform_exact"], marker="^",
               label=r"uniform $m$-of-$N$: printed $1/m$")
    top = max(float(np.max(v)) for v in data.values()) * 1.05
    ax.plot([0, top], [0, top], color="0.5", linewidth=1, label="exact = nominal")
    ax.set_xlabel("nominal weight")
    ax.set_ylabel(r"exact $q_i = E[1\{i\in S\}/|S|;\ S\neq\emptyset]$")
    ax.set_title("Aggregation weights: exact vs nominal")
    ax.legend()
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
