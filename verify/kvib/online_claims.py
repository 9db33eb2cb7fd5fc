r"""Helpers of the K-Vib baseline remarks (no claims here): the static regrets of K-Vib, Vrb
and Mabs and their bootstrap slopes, used by :mod:`verify.kvib.fig6` (K-Vib, recipe
V12(vi))."""

from __future__ import annotations

import numpy as np

from flbounds.sampling.online import (
    kvib_online,
    static_regret,
)
from flbounds.sampling.online_batched import baseline_costs


def _baseline_regrets(rng, fb, ks, n_rounds, n_seeds):
    """Static regrets (n_seeds, len(ks)) of K-Vib, Vrb and Mabs (App. F settings, G = max)."""
    G = fb.G
    out = {}
    for name in ("vrb", "mabs", "kvib"):
        reg = np.empty((n_seeds, len(ks)))
        children = rng.spawn(n_seeds)
        if name != "kvib":
            # Vrb / Mabs: all seeds and budgets in one batch, bit for bit the run_online runs
            costs = baseline_costs(name, fb, ks, n_rounds, children, G=G)
        for s, child in enumerate(children):
            for j, k in enumerate(ks):
                run = kvib_online(fb, n_rounds, k, child, G=G).costs if name == "kvib" \
                    else costs[s, j]
                reg[s, j] = static_regret(run, fb, k)
        out[name] = reg
    return out


def _boot_slopes(rng, ks, reg, n_boot=2000):
    """Seed-bootstrap replicates of the K-slope of the geometric-mean regret (as
    :func:`flbounds.stats.loglog_slope` resamples)."""
    lx = np.log(np.asarray(ks, dtype=float))
    rows = rng.integers(0, reg.shape[0], size=(n_boot, reg.shape[0]))
    curves = np.log(reg)[rows].mean(axis=1)
    xc = lx - lx.mean()
    return (curves - curves.mean(axis=1, keepdims=True)) @ xc / (xc @ xc)


_BASE_QUICK = dict(n_clients=100, n_rounds=2000, ks=(2, 4, 8, 16), n_seeds=3)
_BASE_FULL = dict(n_clients=100, n_rounds=8000, ks=(2, 4, 8, 16), n_seeds=8)
_CAVEAT = ("the paper's Fig. 6 plots the released code's sample-based relative metric "
           "sum_t |sum_{S} pi/p - l*_t| / l*_t, not eq. (8), so its curves need not agree")




def interval_rule(boot: dict, threshold: float, *, alpha: float, effect: str) -> dict:
    r"""The two-sided rule, fixed before the data, of a figure's slope effect read on seed
    bootstraps: ``boot`` maps a curve to bootstrap replicates of its statistic (a slope or a
    slope difference), ``effect`` is ``"<="`` or ``">="`` against ``threshold`` (the paper's
    side). Each curve's two-sided percentile interval is at level ``alpha / m`` (Bonferroni
    over the m curves). The effect is *shown* when every interval lies on the paper's side,
    *contradicted* when some interval lies wholly on the other side; otherwise undecided,
    with the interval half-widths as the smallest difference the runs resolve.

    Returns a dict: ``measured`` (the interval ends to compare with ``threshold`` under
    ``effect``: the far ends when contradicted, else the near ends), ``undecided`` (the reason,
    or ""), ``intervals`` and ``half_widths``."""
    if effect not in ("<=", ">="):
        raise ValueError(f"effect must be '<=' or '>=', got {effect!r}")
    q = alpha / (2 * len(boot))
    iv = {k: (float(np.quantile(v, q)), float(np.quantile(v, 1 - q))) for k, v in boot.items()}
    half = {k: (hi - lo) / 2 for k, (lo, hi) in iv.items()}
    if effect == "<=":
        near, far = [hi for _, hi in iv.values()], [lo for lo, _ in iv.values()]
        contradicted = any(lo > threshold for lo in far)
        shown = all(hi <= threshold for hi in near)
    else:
        near, far = [lo for lo, _ in iv.values()], [hi for _, hi in iv.values()]
        contradicted = any(hi < threshold for hi in far)
        shown = all(lo >= threshold for lo in near)
    undecided = "" if contradicted or shown else (
        f"no interval lies wholly on either side of {threshold:g} at family-wise level "
        f"{alpha:g} (Bonferroni over {len(boot)}); half-widths the runs resolve: "
        + ", ".join(f"{k}: {h:.3g}" for k, h in half.items()))
    return {"measured": far if contradicted else near, "undecided": undecided,
            "intervals": iv, "half_widths": half, "shown": shown,
            "contradicted": contradicted}
