r"""Remark 5.1 of FedALS (Sec. 5): the aggregation frequency of phi cannot be reduced
arbitrarily, as it would increase the empirical risk (the convergence rate of non-convex,
non-iid local SGD is O(tau/T + (tau/T)^{2/3} + 1/sqrt(T)), T = tau R); the result and its
claim, re-run on the MLP task of :mod:`.mlp_experiment`. Instances carry ``split``,
``alphas`` and ``local_steps``.
"""

from __future__ import annotations

from scipy.stats import spearmanr

from flbounds.ledger import Evidence, Tolerance, claim, result

from ._predicates import integer_alpha, noniid_split
from .mlp_cells import as_run, noniid_stream, sweep_cell, sweep_grid
from .mlp_experiment import FULL, QUICK

REMARK51 = result(
    "fedals.remark5_1", ref="Remark 5.1", title="training risk against tau",
    parts={"train_risk": "at a fixed number of steps T, fewer aggregations (larger tau) leave a "
                         "higher empirical risk in the general non-iid setting"},
    hypotheses=(integer_alpha, noniid_split))


def _tau_grid(*, rng, n_seeds, n_steps, n_test, local_steps):
    """One cell per tau: FedAvg (alpha = 1) on the non-iid task, initial model and plan of
    the shared non-iid stream (:mod:`.mlp_cells`)."""
    return sweep_grid(noniid_stream(rng),
                      settings=[dict(alpha=1, local_steps=tau) for tau in local_steps],
                      split="noniid", n_seeds=n_seeds, n_steps=n_steps, n_test=n_test)


@claim("fedals.remark51.train_risk_vs_tau", ref="Remark 5.1", kind="remark", expected="holds",
       result=REMARK51, parts=("train_risk",),
       statement="At a fixed number of local steps T, more local steps per averaging (larger "
                 "tau) leave a higher training risk in the non-iid setting.",
       quick=dict(QUICK, local_steps=[1, 5, 25, 125]),
       full=dict(FULL, local_steps=[1, 5, 25, 125]),
       cells=dict(grid=_tau_grid, run=sweep_cell))
def train_risk_vs_tau(*, rng, cells, n_seeds, n_steps, n_test, local_steps):
    r"""V11: FedAvg (alpha = 1) on the MLP, same task/init/plan for every tau. Rule: Spearman
    (tau, mean final training risk of the averaged model) >= 0.9 (with 4 values: a strict
    increase). Both profiles show a steep increase; ``holds``. Each tau is a cell (one run,
    ``_tau_grid``)."""
    risks = [as_run(c).train_loss for c in cells]
    means = [float(r.mean()) for r in risks]
    rho = float(spearmanr(local_steps, means).statistic)
    return Evidence(measured=rho, theoretical=0.9, relation=">=",
                    instance=dict(split="noniid", alphas=[1], local_steps=local_steps),
                    tolerance=Tolerance(0.0, "exact", "rank statistic"),
                    details={"local_steps": local_steps, "train_risk": means})
