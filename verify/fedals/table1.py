r"""Table 1 of FedALS (Sec. 7): test accuracy for 5 nodes of FedAvg, FedALS, SCAFFOLD and
FedALS + SCAFFOLD, iid and non-iid; the result, its parts and its claims, re-run on the
synthetic label-skew MLP task of :mod:`.mlp_experiment` (tau = 5, alpha = 10 against alpha = 1).

Rules, fixed in advance, with one-sided 95% Student-t limits over seeds of paired
differences: a claimed improvement *holds* when its lower limit is > 0, is *violated* when the
upper limit is < 0 (a significant loss, never mere non-detection), and is otherwise
undecided (``not-applicable``, underpowered). Instances carry ``split``, ``alphas`` and
``local_steps``.
"""

from __future__ import annotations

from flbounds.ledger import Evidence, Tolerance, claim, result
from verify.replay import shared_generator

from ._predicates import iid_split, integer_alpha, noniid_split
from .mlp_cells import as_run, sweep_cell, sweep_grid
from .mlp_experiment import EXACT_LIMITS, FULL, QUICK, _decide, _paired, _table
from .mlp_task import alpha_sweep
from .table2 import TABLE2

#: local steps of the re-runs (the paper's tau = 5, Sec. 7), passed to ``alpha_sweep``
TAU = 5

TABLE1 = result(
    "fedals.table1", ref="Table 1",
    title="test performance for 5 nodes: FedAvg, FedALS, SCAFFOLD, FedALS+SCAFFOLD",
    parts={"noniid": "non-iid: FedALS is more accurate than FedAvg (also Sec. 1 Contribution "
                     "IV, Sec. 7 and the Conclusion)",
           "scaffold": "non-iid: FedALS + SCAFFOLD is more accurate than SCAFFOLD",
           "iid": "iid: FedALS and FedAvg about equal (Sec. 7.2: the improvement is negligible)",
           "numbers": ("the printed accuracies of ResNet-20 on SVHN, CIFAR-10 and CIFAR-100",
                       "training at the paper's scale is out of reach of the CPU budget; the "
                       "printed non-iid numbers are compared with Table 3 "
                       "(fedals.table3.consistent_with_table1)")},
    hypotheses=(integer_alpha, noniid_split.only("noniid", "scaffold"), iid_split.only("iid")))


#: the FedAvg and FedALS columns are the runs of ``fedals.v9.accuracy_alpha10_beats_fedavg``:
#: both claims draw from the generator of ``fedals.table1.scaffold_columns`` (whose numbers
#: are thus those it had alone), so each run is computed once (:mod:`.mlp_cells`)
SCAFFOLD_STREAM = "fedals.table1.scaffold_columns"

#: the four columns of the SCAFFOLD claim, one cell (one run) each
SCAFFOLD_CELLS = [dict(alpha=a, control=c) for a in (1, 10) for c in ("none", "scaffold")]


def _scaffold_grid(*, rng, n_seeds, n_steps, n_test):
    """FedAvg, SCAFFOLD, FedALS and FedALS+SCAFFOLD (non-iid, tau = ``TAU``), one cell each
    on the task, initial model and plan of ``SCAFFOLD_STREAM`` (:mod:`.mlp_cells`)."""
    return sweep_grid(shared_generator(rng, SCAFFOLD_STREAM), settings=SCAFFOLD_CELLS,
                      split="noniid", n_seeds=n_seeds,
                      n_steps=n_steps, n_test=n_test, local_steps=TAU)


@claim("fedals.table1.scaffold_columns", ref="Table 1 (SCAFFOLD and FedALS+SCAFFOLD, non-iid)",
       kind="reproduction", expected="not-applicable", expected_full="not-reproduced",
       result=TABLE1, parts=("scaffold",),
       statement="In the non-iid setup FedALS+SCAFFOLD (alpha = 10) is more accurate than "
                 "SCAFFOLD (alpha = 1), as FedALS is over FedAvg.",
       quick=QUICK, full=FULL, cells=dict(grid=_scaffold_grid, run=sweep_cell))
def scaffold_columns(*, rng, cells, n_seeds, n_steps, n_test):
    """SCAFFOLD = FedALS's per-group control variates with alpha = 1 (the corrected control
    update, ``fedals.alg4.corrected_scaffold_exact``); FedALS+SCAFFOLD with alpha = 10.
    Measured: the decisive t-limit of acc(FedALS+SCAFFOLD) - acc(SCAFFOLD) (module rule);
    theoretical 0 (>=). The FedAvg and FedALS columns are in details. Quick (3 seeds, seed 0):
    -0.006 +- 0.002, upper limit +8e-5, so undecided (``not-applicable``). Full (20 seeds x
    3000 steps, seed 0): -0.0019 +- 0.0005, upper limit -0.0009: ``not-reproduced`` (a small but
    significant loss, as for FedALS vs FedAvg, ``fedals.v9.accuracy_alpha10_beats_fedavg``);
    SCAFFOLD - FedAvg -0.0001 +- 0.0006 (the paper's "SCAFFOLD ~ FedAvg").

    A synthetic re-run of an empirical result (kind ``reproduction``): not reproducing the paper's
    effect here is not a paper error. Each column is a cell (one run, ``_scaffold_grid``)."""
    res = {(c["alpha"], c["control"]): as_run(out)
           for c, out in zip(SCAFFOLD_CELLS, cells, strict=True)}
    diff = _paired(res[(1, "scaffold")].test_acc, res[(10, "scaffold")].test_acc)
    measured, decided = _decide([diff])
    columns = {"FedAvg": res[(1, "none")], "FedALS": res[(10, "none")],
               "SCAFFOLD": res[(1, "scaffold")], "FedALS+SCAFFOLD": res[(10, "scaffold")]}
    return Evidence(measured=measured, theoretical=0.0, relation=">=",
                    instance=dict(split="noniid", alphas=[1, 10], local_steps=TAU),
                    tolerance=EXACT_LIMITS, applicable=decided,
                    reason="" if decided else "underpowered: the 95% interval contains 0",
                    details={"columns": {k: float(v.test_acc.mean()) for k, v in
                                         columns.items()},
                             "fedals_scaffold_minus_scaffold": diff,
                             "scaffold_minus_fedavg": _paired(res[(1, "none")].test_acc,
                                                              res[(1, "scaffold")].test_acc)})


def _fedavg_fedals_grid(*, rng, n_seeds, n_steps, n_test):
    """FedAvg and FedALS (alpha = 1 and 10, non-iid, tau = ``TAU``), one cell each on
    ``SCAFFOLD_STREAM``, the runs of two columns of the SCAFFOLD claim (:mod:`.mlp_cells`)."""
    return sweep_grid(shared_generator(rng, SCAFFOLD_STREAM),
                      settings=[dict(alpha=1), dict(alpha=10)],
                      split="noniid", n_seeds=n_seeds, n_steps=n_steps, n_test=n_test,
                      local_steps=TAU)


@claim("fedals.v9.accuracy_alpha10_beats_fedavg",
       ref="Sec. 1 Contribution IV, Sec. 7 and Conclusion (FedALS outperforms FedAvg in "
           "accuracy in non-iid setups); Table 1, Table 2",
       kind="reproduction", expected="not-reproduced",
       parts=(TABLE1.part("noniid"), TABLE2.part("alpha10_vs_1")),
       statement="In non-iid setups FedALS (here alpha = 10, same tau) is at least as accurate "
                 "as FedAvg (alpha = 1); the paper claims it is more accurate.",
       quick=QUICK, full=FULL, cells=dict(grid=_fedavg_fedals_grid, run=sweep_cell))
def accuracy_alpha10(*, rng, cells, n_seeds, n_steps, n_test):
    r"""The paper states generally that FedALS outperforms the baselines in accuracy in non-iid
    setups (Contribution IV, Sec. 7, Conclusion), shown on image and language tasks. This is
    a counterexample on a different task: a synthetic label-skew Gaussian mixture with a
    small ReLU MLP (module docstring), not a re-run of the paper's experiments. Rule: paired
    one-sided t-test at 5% over seeds. measured: the one-sided 95% *upper* confidence limit of
    acc(alpha=10) - acc(alpha=1); the claim holds iff it is >= 0, so ``not-reproduced`` requires a
    significant accuracy loss, not just a failure to show a gain. Quick (seed 0): upper limit
    -0.029 (mean -0.048); full: -0.0057 (mean -0.0074 +- 0.0010). Expected
    ``not-reproduced``. Exact: measured is already a confidence limit. The lower limit is in
    details. The runs are the FedAvg and FedALS columns of ``fedals.table1.scaffold_columns``
    (the same draws, computed once).

    A synthetic re-run of an empirical result (kind ``reproduction``): not reproducing the paper's
    effect here is not a paper error. Each alpha is a cell (one run, ``_fedavg_fedals_grid``),
    the runs of the FedAvg and FedALS columns of ``fedals.table1.scaffold_columns``."""
    res = {a: as_run(c) for a, c in zip((1, 10), cells, strict=True)}
    diff = _paired(res[1].test_acc, res[10].test_acc)
    return Evidence(measured=diff["upper"], theoretical=0.0, relation=">=",
                    instance=dict(split="noniid", alphas=[1, 10], local_steps=TAU),
                    tolerance=Tolerance(0.0, "exact", "measured is already a 95% t-limit"),
                    details={"per_alpha": _table(res), "acc10_minus_acc1": diff,
                             "task": "synthetic label-skew Gaussian mixture, MLP 20-64-64-10",
                             "significant_gain": diff["lower"] > 0})


@claim("fedals.v9.iid_negligible", ref="Table 1 (iid), Sec. 7.2", kind="remark",
       expected="holds", result=TABLE1, parts=("iid",),
       statement="In the iid split FedALS (alpha = 10) and FedAvg reach about the same accuracy.",
       quick=dict(QUICK, n_seeds=6, alphas=[1, 10], margin=0.02),
       full=dict(FULL, alphas=[1, 10], margin=0.02))
def iid_negligible(*, rng, n_seeds, n_steps, n_test, alphas, margin):
    r"""Equivalence rule (TOST): the two-sided 90% interval (two one-sided 95% limits) of
    acc(10) - acc(1) lies inside +-margin, a pre-set equivalence margin of 0.02 chosen before
    the runs (about the paper's largest iid difference, 0.012, plus slack; not derived from
    an error estimate). measured: max(|lower|, |upper|). Pilot: 0.709-0.717 across alpha;
    ``holds`` in both profiles (quick uses 6 seeds: with 3 the t-limits are too wide for the
    margin on some root seeds). (alpha = 100 is not part of the claim: with the quick
    profile's 600 steps its body is averaged once, and it then loses accuracy even in iid.)
    """
    res = alpha_sweep(rng, local_steps=TAU,
                      split="iid", alphas=alphas, n_seeds=n_seeds, n_steps=n_steps,
                      n_test=n_test)
    diffs = {str(a): _paired(res[alphas[0]].test_acc, res[a].test_acc) for a in alphas[1:]}
    worst = max(max(abs(d["lower"]), abs(d["upper"])) for d in diffs.values())
    return Evidence(measured=worst, theoretical=margin, relation="<=",
                    instance=dict(split="iid", alphas=alphas, local_steps=TAU),
                    tolerance=Tolerance(0.0, "exact", "measured is already a 95% t-limit"),
                    details={"per_alpha": _table(res), "differences_vs_alpha1": diffs})
