r"""Rate atlas: worst-case contraction per round against the participation probability.

Every client participates independently with probability p (N clients sharing a minimizer,
L/mu = 4, one local step for all: 1/(4 L tau)). For FedAvg, SCAFFOLD, FOCUS, FedAU (weights
1/p, their steady state) and MIFA, the bracket of ``flbounds.pep.lyapunov_rate``: the contraction
gap 1 - rho certified by the best quadratic Lyapunov function of the round's state (solid;
where its bracket is open, the lifted V of ``values=True``) and that of a replayed 1-D
witness (dotted; the true worst case lies between). Beside them,
where a paper prints a rate: FOCUS at Theorem 1(a)'s step against its printed
1 - eta mu N/2, and SAFARI (q = p the probability of a client round) against Theorem 5's
1 - eta_bar. ``flbounds atlas`` also writes the numbers as a JSON and Markdown table.
"""

from __future__ import annotations

import sys

import numpy as np

from figures._common import plt, run_figure
from flbounds.pep.atlas import arrays, compute_atlas

NAME = "pep_atlas"
CLAIMS = ("focus.thm1a.tightness", "safari.thm5.tightness")


def compute(profile="quick", seed=0, **options):
    """The atlas's arrays (``seed`` unused: every number is a worst case or an exact
    expectation), the printed rates looked up in the ledger's bounds."""
    from flbounds.ledger.api.bounds import get
    from flbounds.ledger.api.registry import load_all

    load_all()
    atlas = compute_atlas(profile=profile, printed=get, **options)
    return {**arrays(atlas), "n_clients": atlas["constants"]["n_clients"],
            "local_steps": atlas["constants"]["local_steps"], "step": atlas["constants"]["step"],
            "mu": atlas["constants"]["mu"], "L": atlas["constants"]["L"]}


MARKERS = "osD^v<>"


def plot(data):
    fig, (left, right) = plt.subplots(1, 2, figsize=(11.5, 6.2))
    p = data["p"]
    diverging = 0
    for k, name in enumerate(data["names"]):
        ax = right if "Thm" in str(name) else left
        cert, wit, printed = (data[f"s{k}_{f}"] for f in ("certified", "witness", "printed"))
        (line,) = ax.semilogy(p, 1 - cert, marker=MARKERS[k % len(MARKERS)], ls="-",
                              markerfacecolor="none", label=f"{name}: certified")
        ax.semilogy(p, np.where(wit < 1, 1 - wit, np.nan), ":", color=line.get_color(),
                    label=f"{name}: witness")
        if np.any(wit >= 1):  # a replayed instance on which the algorithm diverges
            # at the axis' foot, each series a little higher so the marks do not overlap
            diverging += 1
            ax.plot(p[wit >= 1], np.full(int(np.sum(wit >= 1)), 0.03 * diverging), "x", ms=9,
                    color=line.get_color(), clip_on=False, transform=ax.get_xaxis_transform(),
                    label=f"{name}: witness diverges")
        if np.isfinite(printed).any():
            ax.semilogy(p, 1 - printed, "--", color=line.get_color(), label=f"{name}: printed")
    left.set_title(rf"common step $\eta = {float(data['step']):.3g}$, "
                   rf"$N = {int(data['n_clients'])}$, $\tau = {int(data['local_steps'])}$")
    right.set_title("at the papers' printed steps")
    for ax in (left, right):
        ax.set_xlabel("participation probability $p$ (SAFARI: $q$)")
        ax.set_ylabel(r"contraction gap $1-\rho$ per round")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    fig.subplots_adjust(bottom=0.36, wspace=0.25)
    fig.suptitle(rf"Worst-case rate over many rounds, $L/\mu = "
                 rf"{float(data['L']) / float(data['mu']):g}$")
    return fig


def draw(table, out):
    """The figure of an atlas table (:func:`flbounds.pep.atlas.compute_atlas`'s dict) as
    ``pep_atlas.png`` (300 dpi) and ``pep_atlas.pdf`` in ``out``; returns the paths."""
    from pathlib import Path

    from figures._style import DPI, figure_style

    c = table["constants"]
    data = {**arrays(table), **{k: c[k] for k in ("n_clients", "local_steps", "step", "mu",
                                                   "L")}}
    paths = [Path(out) / "pep_atlas.png", Path(out) / "pep_atlas.pdf"]
    with figure_style():
        fig = plot(data)
        fig.savefig(paths[0], dpi=DPI)
        fig.savefig(paths[1])
    plt.close(fig)
    return paths


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
