r"""Figure 9 of FOCUS on a synthetic problem: SG-FOCUS against FedAU, MIFA and SCAFFOLD under
stochastic gradients and arbitrary participation.

The paper's claim (App. G): SG-FOCUS is best in convergence speed and accuracy, under
"passive" and "active" arbitrary participation. Here: N = 10 heterogeneous quadratics (d = 4),
tau = 3, one step eta = 0.02 for every method, gradient noise :math:`N(0, (\sigma^2/d)I)`
per evaluation (sigma = 0.5). Passive: every client Bernoulli(0.2) (the repository's
"markov" setting reduces to this); active: 90% of the clients with p ~ U(0.1, 0.3), the
rest U(0.1, 0.9) (its "bern").

The baselines take exact-gradient problems, so their noise comes from a pre-drawn tape
(:class:`NoiseTape`), consumed in call order; SG-FOCUS gets its noise array directly. The
observable per run is the optimality gap :math:`F(x_r) - F^\star` (a test-loss analogue),
averaged over a window: the first ``EARLY`` rounds for convergence speed, the second half of
the run for the accuracy reached.

Decision rule, fixed before the runs: for each mode and baseline, a one-sided paired t-test
over seeds (same plans) of H0: mean(gap_baseline - gap_FOCUS) <= 0; the 6 p-values go
through Holm's rule at alpha = 0.05 (family size 6). "SG-FOCUS is best" holds when all 6
are rejected. Fairness caveat from the spec: FOCUS's server step sums N client gradients, an
effective step N times the baselines' local step.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import ttest_1samp

from flbounds import algorithms
from flbounds.algorithms import batched_baselines
from flbounds.algorithms.baselines import _gradients_of
from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.participation import Bernoulli
from flbounds.problems import random_quadratics
from flbounds.stats import holm

from .assumptions import a1, a2, a6, constants, heterogeneous, noise

N_CLIENTS, DIM, TAU, STEP, SIGMA, ALPHA = 10, 4, 3, 0.02, 0.5, 0.05
EARLY = 100  # rounds of the speed window [0, EARLY)
BASELINES = ("fedau", "mifa", "scaffold")
BATCHED = {"fedau": batched_baselines.fedau_batched, "mifa": batched_baselines.mifa_batched,
           "scaffold": batched_baselines.scaffold_batched}


@hypothesis("modes", "arbitrary participation of both kinds: passive (every client "
                     "Bernoulli(0.2)) and active (heterogeneous p_i)")
def both_modes(*, modes):
    return set(modes) == {"passive", "active"}


FIG9 = result(
    "focus.fig9", ref="Figure 9", title="SG-FOCUS vs FedAU, MIFA, SCAFFOLD (stochastic gradients)",
    parts={"speed": "App. G.2: SG-FOCUS converges faster than the baselines",
           "accuracy": "App. G.2: SG-FOCUS reaches a better final loss (accuracy) than the "
                       "baselines"},
    hypotheses=(a1, a2, a6, heterogeneous, both_modes))


class NoiseTape:
    """A problem whose gradients carry pre-drawn noise: call k of ``client_gradients`` adds
    the next rows of ``tape`` (shape (n_draws, d)). Raises when the tape runs out."""

    def __init__(self, problem, tape):
        self.problem, self.tape, self.pos = problem, tape, 0
        self.n_clients, self.dim = problem.n_clients, problem.dim
        self._clients, self._gradients = None, None

    def client_gradients(self, X, *, clients=None):
        # the baselines pass one index array for all the local steps of a round: its checks
        # are made once (the library's gradients of those clients, the same numbers)
        if clients is None or clients is not self._clients:
            self._clients = clients
            self._gradients = (None if clients is None
                               else _gradients_of(self.problem, X, clients))
        G = (self.problem.client_gradients(X) if self._gradients is None
             else self._gradients(X))
        k = G.shape[0]
        if self.pos + k > self.tape.shape[0]:
            raise ValueError("tape: noise tape exhausted")
        G = G + self.tape[self.pos:self.pos + k]
        self.pos += k
        return G


def _modes(rng):
    n_active = int(0.9 * N_CLIENTS)
    active = np.concatenate([rng.uniform(0.1, 0.3, n_active),
                             rng.uniform(0.1, 0.9, N_CLIENTS - n_active)])
    return {"passive": Bernoulli(np.full(N_CLIENTS, 0.2)), "active": Bernoulli(active)}


def _gap_curve(problem, xs):
    """F(x_r) - F* per row of ``xs``: ``problem.loss`` row by row, bit for bit (the same
    client losses, averaged in the same order), in one call."""
    if not problem.uniform_weights:
        return np.array([problem.loss(x) for x in xs]) - problem.F_star
    n, r = problem.n_clients, xs.shape[0]
    losses = problem.client_losses(np.repeat(xs, n, axis=0), clients=np.tile(np.arange(n), r))
    return losses.reshape(r, n).mean(axis=1) - problem.F_star


def _run_seeds(problem, process, children, n_rounds):
    """Per seed, the gap curves of SG-FOCUS and the baselines on one plan; each method its
    own noise, drawn from the seed's generator in the order plan, SG-FOCUS's noise, then a
    tape per baseline. The baselines run all seeds at once (replicate b is the per-plan
    method on a :class:`NoiseTape` of seed b's tape, bit for bit)."""
    scale = SIGMA / np.sqrt(DIM)
    runs, plans, tapes = [], [], {name: [] for name in BASELINES}
    for child in children:
        plan = process.plan(child, n_rounds)
        noise = child.standard_normal((n_rounds, N_CLIENTS, TAU, DIM))
        noise *= scale      # in place: the same products, no second array
        runs.append({"focus": _gap_curve(problem, algorithms.sg_focus(
            problem, plan, noise, step=STEP, local_steps=TAU).x)})
        n_draws = int(plan.sum()) * TAU
        for name in BASELINES:
            tapes[name].append(scale * child.standard_normal((n_draws, DIM)))
        plans.append(plan)
    for name in BASELINES:
        xs = BATCHED[name](problem, np.array(plans), step=STEP, local_steps=TAU,
                           tapes=tapes[name]).x
        for run, x in zip(runs, xs, strict=True):
            run[name] = _gap_curve(problem, x)
    return runs


def _holm_evidence(rng, n_seeds, n_rounds, window):
    """Run both modes, average each gap curve over ``window`` (a slice), test, apply Holm."""
    problem = random_quadratics(rng, N_CLIENTS, DIM, mu=0.5, L=1.0)
    cells, pvalues = [], []
    modes = _modes(rng)
    for mode, process in modes.items():
        runs = [{k: float(v[window].mean()) for k, v in run.items()}
                for run in _run_seeds(problem, process, rng.spawn(n_seeds), n_rounds)]
        for name in BASELINES:
            diff = np.array([r[name] - r["focus"] for r in runs])
            p = float(ttest_1samp(diff, 0.0, alternative="greater").pvalue)
            pvalues.append(p)
            cells.append(dict(mode=mode, baseline=name, pvalue=p,
                              focus_gap=float(np.mean([r["focus"] for r in runs])),
                              baseline_gap=float(np.mean([r[name] for r in runs]))))
    decision = holm(pvalues, ALPHA)
    for cell, adj, rej in zip(cells, decision.adjusted, decision.reject, strict=True):
        cell.update(holm_adjusted=float(adj), focus_better=bool(rej))
    return Evidence(measured=int(decision.reject.sum()), theoretical=decision.m,
                    relation=">=", tolerance=Tolerance.exact("a count of Holm rejections"),
                    instance=[constants(problem, process, modes=tuple(modes),
                                        **noise(SIGMA, DIM)) for process in modes.values()],
                    details={"cells": cells, "family_size": decision.m, "alpha": ALPHA,
                             "rule": "one-sided paired t-test per cell, Holm-Bonferroni",
                             "window": [window.start, window.stop], "step": STEP,
                             "sigma": SIGMA, "tau": TAU})


@claim("focus.fig9.sg_focus_fastest", ref="Fig. 9; App. G.2", kind="remark", expected="holds",
       result=FIG9, parts=("speed",),
       statement="Under stochastic gradients and arbitrary (passive and active) participation, "
                 "SG-FOCUS converges faster than FedAU, MIFA and SCAFFOLD.",
       quick=dict(n_seeds=6, n_rounds=EARLY), full=dict(n_seeds=30, n_rounds=EARLY))
def sg_focus_fastest(*, rng, n_seeds, n_rounds):
    """Speed: the mean gap over rounds [0, EARLY), one eta for all methods (the paper's
    protocol). Measured: Holm rejections in FOCUS's favour; theoretical: all 6. Tolerance:
    exact (a count); the statistical error is the family-wise level 0.05."""
    return _holm_evidence(rng, n_seeds, n_rounds, slice(0, EARLY))


@claim("focus.fig9.sg_focus_most_accurate", ref="Fig. 9; App. G.2", kind="reproduction",
       expected="not-reproduced", result=FIG9, parts=("accuracy",),
       statement="Under stochastic gradients and arbitrary (passive and active) participation, "
                 "SG-FOCUS reaches a lower final loss than FedAU, MIFA and SCAFFOLD.",
       quick=dict(n_seeds=6, n_rounds=600), full=dict(n_seeds=30, n_rounds=3000))
def sg_focus_most_accurate(*, rng, n_seeds, n_rounds):
    """Accuracy: the mean gap over the second half of the run, after every method's
    transient. Expected not-reproduced on this synthetic analogue: with one eta for all, SG-FOCUS's
    server step sums N stochastic gradients, so its noise floor is about N times that of an
    averaging method; MIFA and SCAFFOLD (also exact without noise) settle ~10x lower. The
    paper's CIFAR-10 ranking does not carry over to equal steps here. Tolerance: exact (a
    count); family-wise level 0.05.

    A synthetic re-run of an empirical result (kind ``reproduction``): not reproducing the paper's
    effect here is not a paper error."""
    return _holm_evidence(rng, n_seeds, n_rounds, slice(n_rounds // 2, n_rounds + 1))
