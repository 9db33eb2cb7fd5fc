r"""Not a result of the paper: the authors' own synthetic check of Thm 4.1 (repo
``Peyman-gholami/FedALS``, ``mode="gen"``, ``Visualization_gen.py``), redone with an
L2-regularized softmax model.

Their set-up: Gaussian classes with means :math:`c\mathbf 1`, identity covariance, softmax
regression, iid clients, one averaging at the end, total training size 500 split over K
clients; the plotted "bound" is :math:`G/K^2 + (2/K)\sqrt{DG}`, i.e. Thm 4.1 with
:math:`L/\mu` set to 1. Here each client's distribution is uniform on one fixed finite pool
of that mixture (exact population risk, bounded features), so :math:`\mu = \lambda` and
:math:`L = \tfrac12\max\|x\|^2 + \lambda` are exact.

Declared as a result of its own (``fedals.released_code``: where the released code differs
from the paper); the claim that Thm 4.1 itself holds on the script's setting is attached to
Theorem 4.1's bound too. Instances carry ``model`` (the pool), ``w`` and ``local``. The three
claims read the same runs (one pool; one run of draws per K, each computed once:
``_authors_cell``).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, result
from flbounds.ledger.engine.runs import reused_run
from flbounds.theory.data_models import SoftmaxPool, gaussian_class_pool
from flbounds.theory.generalization import one_round_draws, summarize_bound
from verify.replay import (
    generator_at,
    generator_of,
    generator_state,
    seed_of,
    shared_generator,
)

from ._predicates import convex_smooth, iid, local_erm, one_round
from .thm4_1 import THM41

RELEASED_CODE = result(
    "fedals.released_code", ref="Released code", kind="section",
    title="the authors' plotting script (not in the paper; where it differs)",
    parts={"setting": "the script's setting: iid Gaussian classes, softmax regression, one "
                      "averaging of local ERMs, on which Thm 4.1 is drawn",
           "plotted_curve": "Visualization_gen.py (mode='gen') plots G/K^2 + (2/K) sqrt(DG) "
                            "as the Thm 4.1 bound",
           "curve_above_gap": "the plotted curve lies above the true gap (the script's "
                              "figure)"},
    hypotheses=(convex_smooth, local_erm, one_round, iid))

V12_QUICK = dict(n_classes=4, total_samples=200, n_clients=[2, 5, 10], lam=0.05,
                 pool_size=600, n_draws=100)
V12_FULL = dict(n_classes=10, total_samples=500, n_clients=[2, 5, 10, 20], lam=0.05,
                pool_size=1000, n_draws=200)


#: the three claims below read the same runs: the draws of
#: ``fedals.authors_check.bound_with_kappa`` (:func:`verify.replay.shared_generator`), one run
#: per K, each computed once (``reused_run``)
AUTHORS_STREAM = "fedals.authors_check.bound_with_kappa"
_ROW_FIELDS = ("gap", "gap_se", "G", "D", "kappa", "bound", "bound_se", "bound_kappa1",
               "bound_kappa1_se")


def _pools(rng, n_classes, n_clients, lam, pool_size):
    """One iid pool (dim = n_classes, means c 1 for c = -C/2, ..., C/2 - 1), one copy per
    client, for each K."""
    dim = n_classes
    means = np.outer(np.arange(n_classes) - n_classes // 2, np.ones(dim)).astype(float)
    feats, labs = gaussian_class_pool(rng, means, [list(range(n_classes))], pool_size)
    return [SoftmaxPool(np.repeat(feats, K, axis=0), np.repeat(labs, K, axis=0), n_classes, lam)
            for K in n_clients]


def _authors_grid(*, rng, n_classes, total_samples, n_clients, lam, pool_size, n_draws):
    """One cell per K: the pool's generator state (the start of the shared stream
    ``AUTHORS_STREAM`` of ``rng``'s root seed, one pool for every K) and the seed of the K's
    own draws (the stream's i-th child, i the K's position)."""
    shared = shared_generator(rng, AUTHORS_STREAM)
    state = generator_state(shared)
    params = dict(n_classes=int(n_classes), total_samples=int(total_samples), lam=float(lam),
                  pool_size=int(pool_size), n_draws=int(n_draws))
    return [dict(params, K=int(K), state=state, seed=seed_of(child))
            for K, child in zip(n_clients, shared.spawn(len(n_clients)), strict=True)]


def _authors_cell(*, rng=None, state, seed, K, n_classes, total_samples, lam, pool_size,
                  n_draws):
    """The run of one K (the pool from ``state``, the draws and bootstraps from ``seed``;
    ``rng``, the cell's own generator, is not used): the cell of each of the three claims,
    computed once for the three (``reused_run``); the row of ``_ROW_FIELDS``."""
    def compute():
        pool = _pools(generator_at(state), n_classes, [K], lam, pool_size)[0]
        g = generator_of(seed)
        w = np.full(K, 1.0 / K)
        dr = one_round_draws(pool, w, total_samples // K, n_draws, g)
        proper = summarize_bound(dr, w, pool.mu, pool.L, g)
        unit = summarize_bound(dr, w, 1.0, 1.0, g)          # L/mu dropped, as in the repo
        row = dict(gap=proper.gap, gap_se=proper.gap_se, G=float(proper.G.mean()),
                   D=float(proper.D.mean()), kappa=pool.L / pool.mu, bound=proper.bound,
                   bound_se=proper.bound_se, bound_kappa1=unit.bound,
                   bound_kappa1_se=unit.bound_se)
        return {f: np.array(row[f], dtype=float) for f in _ROW_FIELDS}

    description = dict(run="authors_run", state=state, seed=seed, K=K, n_classes=n_classes,
                       total_samples=total_samples, lam=lam, pool_size=pool_size,
                       n_draws=n_draws)
    cols = reused_run(description, compute, code=__name__)
    return dict(K=K, **{f: float(cols[f]) for f in _ROW_FIELDS})


def _rows_and_instances(rows, n_classes, n_clients, lam, pool_size, state):
    """The rows (one per K) with the instances they ran on (the pools rebuilt from
    ``state``)."""
    pools = _pools(generator_at(state), n_classes, n_clients, lam, pool_size)
    instances = [dict(model=pool, w=np.full(K, 1.0 / K), local="erm")
                 for K, pool in zip(n_clients, pools, strict=True)]
    return rows, instances


def _combined(rng, cells, n_classes, n_clients, lam, pool_size):
    """The cells' rows (one per K, in grid order) with the instances they ran on."""
    state = generator_state(shared_generator(rng, AUTHORS_STREAM))
    return _rows_and_instances([dict(c) for c in cells], n_classes, n_clients, lam, pool_size,
                               state)


@claim("fedals.authors_check.bound_with_kappa", ref="repo mode='gen' (Visualization_gen.py)",
       kind="code", expected="holds",
       corrects="fedals.authors_check.plotted_curve_is_bound",
       parts=(THM41.part("bound"), RELEASED_CODE.part("setting")),
       statement="In the authors' synthetic softmax check, Thm 4.1 with its factor L/mu "
                 "bounds the true gap for every K.",
       quick=V12_QUICK, full=V12_FULL, cells=dict(grid=_authors_grid, run=_authors_cell))
def bound_with_kappa(*, rng, cells, n_classes, total_samples, n_clients, lam, pool_size,
                     n_draws):
    r"""V12 with the proper kappa = (max||x||^2/2 + lambda)/lambda (huge for these well
    separated classes). Hypotheses met (pool distribution, L2 penalty, Newton ERM to 1e-12),
    so ``holds``; tolerance 4 SE of (gap - bound). Each K is a cell (a task of its own, with
    draws of its own: ``_authors_cell``, the cells of the other two claims too); this
    combines them."""
    rows, instances = _combined(rng, cells, n_classes, n_clients, lam, pool_size)
    return Evidence(measured=[r["gap"] for r in rows], theoretical=[r["bound"] for r in rows],
                    relation="<=", instance=instances,
                    tolerance=Tolerance.mc([np.hypot(r["gap_se"], r["bound_se"]) for r in rows],
                                           k=4, what="gap - bound"),
                    details={"rows": rows})


@claim("fedals.authors_check.kappa_dropped", ref="repo mode='gen' (Visualization_gen.py)",
       kind="code", expected="holds", result=RELEASED_CODE, parts=("curve_above_gap",),
       statement="The repo plots G/K^2 + (2/K) sqrt(DG) (Thm 4.1 with L/mu = 1) as the bound "
                 "and finds it above the gap.",
       quick=V12_QUICK, full=V12_FULL, cells=dict(grid=_authors_grid, run=_authors_cell))
def kappa_dropped(*, rng, cells, n_classes, total_samples, n_clients, lam, pool_size, n_draws):
    r"""The kappa-free curve is not a proved bound (kappa >= 1 always, and here kappa is in
    the hundreds or thousands), but in iid data it still lies above the gap: D ~ G(1 - 1/K)/2
    and gap ~ G/K give G/K^2 + (2/K) sqrt(DG) ~ (G/K)(1/K + sqrt(2(1 - 1/K))) >= gap for
    K >= 2. So the repo's plot is numerically right and its justification is not: ``holds``,
    with the ratio to the proper bound in details (that ratio is the factor the plot drops).
    Tolerance 4 SE of (gap - curve)."""
    rows, instances = _combined(rng, cells, n_classes, n_clients, lam, pool_size)
    for r in rows:
        r["kappa1_over_proper"] = r["bound_kappa1"] / r["bound"]
    return Evidence(measured=[r["gap"] for r in rows],
                    theoretical=[r["bound_kappa1"] for r in rows], relation="<=",
                    instance=instances,
                    tolerance=Tolerance.mc([np.hypot(r["gap_se"], r["bound_kappa1_se"])
                                            for r in rows], k=4, what="gap - kappa-free curve"),
                    details={"rows": rows})


@claim("fedals.authors_check.plotted_curve_is_bound", ref="repo mode='gen' (Visualization_gen.py)",
       kind="code", expected="violated", result=RELEASED_CODE, parts=("plotted_curve",),
       statement="The curve the repo plots as the Thm 4.1 bound equals the Thm 4.1 bound.",
       quick=V12_QUICK, full=V12_FULL, cells=dict(grid=_authors_grid, run=_authors_cell))
def plotted_curve_is_bound(*, rng, cells, n_classes, total_samples, n_clients, lam, pool_size,
                           n_draws):
    r"""The repo's curve is G/K^2 + (2/K) sqrt(DG), Thm 4.1 evaluated with L/mu = 1, while the
    theorem carries kappa = L/mu (here (max||x||^2/2 + lambda)/lambda, in the hundreds or
    thousands). measured: the plotted curve per K; theoretical: the Thm 4.1 bound on the same
    draws; relation ==; tolerance 4 SE (both bootstrap SEs combined). The curve is a small
    fraction of the bound (quick, seed 0, K = 2, 5, 10: 0.059 vs 10.4, 5.1, 3.3, ratio
    0.6-1.8%; ratios in details), so the code
    does not plot the paper's bound: expected ``violated``. Whether the curve still lies
    above the gap is ``fedals.authors_check.kappa_dropped``."""
    rows, instances = _combined(rng, cells, n_classes, n_clients, lam, pool_size)
    for r in rows:
        r["kappa1_over_proper"] = r["bound_kappa1"] / r["bound"] if r["bound"] > 0 else np.nan
    return Evidence(measured=[r["bound_kappa1"] for r in rows],
                    theoretical=[r["bound"] for r in rows], relation="==",
                    instance=instances,
                    tolerance=Tolerance.mc([np.hypot(r["bound_se"], r["bound_kappa1_se"])
                                            for r in rows], k=4, what="curve - bound"),
                    details={"rows": rows,
                             "ratio_curve_to_bound": [r["kappa1_over_proper"] for r in rows]})
