r"""SAFARI's digits replication in the layout of the paper's Tables 1-3.

Multinomial logistic regression on scikit-learn's digits (:mod:`verify.safari.digits_experiment`):
Table 1 analogue (FedAvg accuracy, rows s, columns p), Table 2 analogue (SAFARI q = 0.8 minus
FedAvg, '-' when the 95% t-interval over seeds lies inside [-2, 2]) and Table 3 analogue
(gain vs server size n_T at s = 4). Mean over seeds; accuracy in %.
"""

from __future__ import annotations

import sys

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from figures._common import run_figure
from verify.safari.digits_experiment import GainSetting, gains

NAME = "safari_digits_table"
#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("safari.digits",)
PS, SS = (10, 5, 2, 1), (0, 2, 4)


def compute(profile: str = "quick", seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    n_seeds, n_rounds = (2, 80) if profile == "quick" else (5, 150)
    sizes = (25, 50, 100, 200) if profile == "quick" else (25, 50, 100, 200, 400)
    draws = [(child, GainSetting(p, s, 200)) for child in rng.spawn(n_seeds)
             for s in SS for p in PS]
    acc = gains(draws, n_rounds=n_rounds).reshape(n_seeds, len(SS), len(PS), 2)
    fedavg, gain = acc[..., 0], acc[..., 1] - acc[..., 0]
    draws = [(child, GainSetting(p, 4, n_t)) for child in rng.spawn(n_seeds)
             for n_t in sizes for p in PS]
    acc = gains(draws, n_rounds=n_rounds).reshape(n_seeds, len(sizes), len(PS), 2)
    by_size = acc[..., 1] - acc[..., 0]
    return {"fedavg": fedavg, "gains": gain, "by_size": by_size, "sizes": np.array(sizes)}


def _cell(samples):
    x = np.asarray(samples)
    if x.size > 1:
        half = stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
        if -2 <= x.mean() - half and x.mean() + half <= 2:
            return "-"
    return f"{x.mean():.2f}"


def plot(data: dict):
    fig, axes = plt.subplots(3, 1, figsize=(7, 8))
    cols = [f"$p={p}$" for p in PS]
    tables = [
        ("Table 1 analogue: FedAvg test accuracy (%)", [f"$s={s}$" for s in SS],
         [[f"{v:.2f}" for v in row] for row in data["fedavg"].mean(axis=0)]),
        (r"Table 2 analogue: SAFARI ($q=0.8$, $n_T=200$) $-$ FedAvg (% points)",
         [f"$s={s}$" for s in SS],
         [[_cell(data["gains"][:, a, b]) for b in range(len(PS))] for a in range(len(SS))]),
        (r"Table 3 analogue: SAFARI $-$ FedAvg vs server size $n_T$ ($s=4$)",
         [f"$n_T={n}$" for n in data["sizes"]],
         [[_cell(data["by_size"][:, a, b]) for b in range(len(PS))]
          for a in range(len(data["sizes"]))]),
    ]
    for ax, (title, rows, cells) in zip(axes, tables, strict=True):
        ax.axis("off")
        ax.set_title(title)
        tab = ax.table(cellText=cells, rowLabels=rows, colLabels=cols, loc="center",
                       cellLoc="center")
        tab.scale(1, 1.3)
    fig.suptitle(rf"Digits replication ($M = 10$, $m = 5$; mean of {data['fedavg'].shape[0]} "
                 "seeds)")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.text(0.5, 0.01, "$p$: classes per client; $s$: clients that never participate.\n"
             r"'-': the 95% t-interval of the difference lies inside $[-2, 2]$ points.",
             ha="center", va="bottom")
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
