r"""Adversarial search: maximise measured/bound over an instance space.

:func:`search` drives CMA-ES (``cma``) with IPOP or BIPOP restarts, or scipy's differential
evolution, over the unit cube that the space decodes (see :mod:`flbounds.falsify.spaces`).
The ratio is maximised; an instance a validator rejects (outside the claim's hypotheses), or
whose ratio is not finite, is penalised and never becomes the best instance. All randomness
comes from one ``np.random.Generator`` built from ``seed`` (CMA-ES draws its Gaussian samples
through it), so the same seed gives the identical attack. The budget counts every ratio
evaluation, rejected ones included, and is never exceeded.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .spaces import Space

METHODS = ("cma", "de")
RESTARTS = ("ipop", "bipop")
#: fitness of a rejected instance (the search minimises -ratio; ranks are all that matter)
PENALTY = 1e100
#: initial CMA-ES step size in the unit cube
SIGMA0 = 0.3


@dataclass(frozen=True)
class Attack:
    """The outcome of one search.

    Attributes
    ----------
    best_ratio
        Largest finite ratio over the accepted instances (``-inf`` when none was accepted).
    witness
        The instance that reached it (names of the space -> values).
    evaluations
        Ratio evaluations spent, rejected ones included (never more than the budget).
    history
        ``(evaluation, best ratio so far)`` at every improvement.
    rejected
        Instances the validator rejected or whose ratio was not finite.
    method
        The search method used.
    restarts
        The search's restarts.
    budget
        The evaluation budget it was given.
    details
        Anything else the method reports.
    """

    best_ratio: float
    witness: dict
    evaluations: int
    history: tuple
    rejected: int
    method: str
    restarts: int
    budget: int
    details: dict = field(default_factory=dict)


class _Exhausted(Exception):
    """Raised inside the objective when the budget is spent."""


class _Objective:
    """Counts evaluations, applies the validator and keeps the best accepted instance."""

    def __init__(self, ratio, space: Space, validator, budget: int, progress):
        self.ratio, self.space, self.validator = ratio, space, validator
        self.budget, self.progress = budget, progress
        self.evaluations, self.rejected, self.runs = 0, 0, 0
        self.best, self.witness, self.history = -math.inf, None, []

    def __call__(self, u) -> float:
        return self.evaluate(self.space.decode(np.asarray(u, dtype=float)[:self.space.dim]))

    def evaluate(self, instance: dict) -> float:
        """Minimisation fitness of one instance: -ratio, or PENALTY when it is rejected."""
        if self.evaluations >= self.budget:
            raise _Exhausted
        self.evaluations += 1
        if self.validator is not None and validator_rejects(self.validator, instance):
            self.rejected += 1
            return PENALTY
        value = float(self.ratio(**instance))
        if not math.isfinite(value):
            self.rejected += 1
            return PENALTY
        if value > self.best:
            self.best, self.witness = value, instance
            self.history.append((self.evaluations, value))
        return -value

    def report(self) -> None:
        if self.progress is not None:
            self.progress(self.evaluations, self.best)


def validator_rejects(validator: Callable[..., Any], instance: Mapping) -> bool:
    """True when ``validator(**instance)`` is falsy or a string (the failed hypothesis)."""
    verdict = validator(**instance)
    return isinstance(verdict, str) or not verdict


def search(ratio: Callable[..., float], space, *, budget: int, seed,
           method: str = "cma", restarts: str = "bipop",
           validator: Callable[..., Any] | None = None, starts: Sequence[Mapping] = (),
           progress: Callable[[int, float], None] | None = None) -> Attack:
    r"""Maximise ``ratio(**instance)`` over ``space`` with at most ``budget`` evaluations.

    Parameters
    ----------
    ratio
        Called with keyword arguments named after the space's keys; returns measured/bound
        for that instance (a value above 1 breaks the bound).
    space
        Mapping of names to primitives (:class:`~flbounds.falsify.spaces.Box`,
        ``Integers``, ``Simplex``, ``SPD``, ``Transform``) or a ``Space``.
    budget
        Maximum number of ratio evaluations (>= 1).
    seed
        Non-negative integer or ``np.random.SeedSequence``; the same seed gives the same
        attack.
    method
        ``"cma"`` (CMA-ES with restarts) or ``"de"`` (differential evolution).
    restarts
        ``"ipop"`` (population doubles at each restart) or ``"bipop"`` (alternates doubled
        populations with small, local runs), for ``method="cma"``.
    validator
        ``validator(**instance)``: falsy or a string (the hypothesis that fails) rejects the
        instance; a rejected instance is counted in ``evaluations`` but never becomes best.
    starts
        Instances evaluated first (counted in the budget), e.g. a claim's fixed instances;
        the first CMA-ES run starts from the best of them where the space can encode it.
    progress
        Called as ``progress(evaluations, best ratio so far)`` after every generation.

    Returns
    -------
    Attack
    """
    space = Space.of(space)
    if not callable(ratio):
        raise ValueError("ratio must be callable")
    if isinstance(budget, bool) or not isinstance(budget, int | np.integer) or budget < 1:
        raise ValueError(f"budget must be a positive integer, got {budget!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if restarts not in RESTARTS:
        raise ValueError(f"restarts must be one of {RESTARTS}, got {restarts!r}")
    rng = np.random.default_rng(_seed_sequence(seed))
    objective = _Objective(ratio, space, validator, int(budget), progress)
    runner = _run_cma if method == "cma" else _run_de
    try:
        runner(objective, space.dim, rng, restarts, _evaluate_starts(objective, space, starts))
    except _Exhausted:  # the only way out: every run loops until the budget is spent
        pass
    objective.report()
    return Attack(best_ratio=objective.best, witness=objective.witness or {},
                  evaluations=objective.evaluations, history=tuple(objective.history),
                  rejected=objective.rejected, method=method, restarts=objective.runs,
                  budget=int(budget))


def _evaluate_starts(objective: _Objective, space: Space, starts) -> np.ndarray | None:
    """Evaluate the start instances; the latent point of the best accepted one (or None)."""
    best, x0 = math.inf, None
    for start in starts:
        instance = space.coerce(dict(start))
        fitness = objective.evaluate(instance)
        if fitness < best and fitness < PENALTY:
            best, x0 = fitness, space.encode(instance)
    return x0


def _seed_sequence(seed) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or SeedSequence, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def _run_cma(objective: _Objective, dim: int, rng: np.random.Generator, restarts: str,
             start: np.ndarray | None = None) -> None:
    """CMA-ES runs until the budget is spent (the objective raises ``_Exhausted``)."""
    import cma

    n = max(dim, 2)  # cma needs two coordinates; a padded one is ignored by the decoder
    default_pop = 4 + int(3 * math.log(n))
    large_runs, large_evals, small_evals = 0, 0, 0
    while True:
        small = restarts == "bipop" and large_runs > 0 and small_evals < large_evals
        if small:
            spread = 0.5 * 2 ** large_runs  # half the last large population, in defaults
            popsize = int(default_pop * spread ** (rng.random() ** 2))
            sigma = SIGMA0 * 10 ** (-2 * rng.random())
        else:
            popsize, sigma = default_pop * 2 ** large_runs, SIGMA0
        if objective.runs:
            x0 = rng.random(n)
        else:
            x0 = np.full(n, 0.5)
            if start is not None:
                x0[:dim] = start
        before = objective.evaluations
        objective.runs += 1
        _one_cma_run(cma, objective, x0, sigma, popsize, rng)
        spent = objective.evaluations - before
        if spent == 0:
            raise RuntimeError("a CMA-ES run stopped before any evaluation")
        if small:
            small_evals += spent
        else:
            large_runs += 1
            large_evals += spent


def _one_cma_run(cma, objective, x0, sigma, popsize, rng) -> None:
    opts = {"bounds": [0.0, 1.0], "popsize": max(int(popsize), 2), "seed": float("nan"),
            "randn": lambda *shape: rng.standard_normal(shape), "verbose": -9,
            "verb_disp": 0, "verb_log": 0, "tolfun": 1e-12, "tolx": 1e-12}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        es = cma.CMAEvolutionStrategy(x0, sigma, opts)
        while not es.stop():
            candidates = es.ask()
            fitness = [objective(x) for x in candidates]
            es.tell(candidates, fitness)
            objective.report()


def _run_de(objective: _Objective, dim: int, rng: np.random.Generator, restarts: str,
            start: np.ndarray | None = None) -> None:
    """Differential evolution, restarted from a fresh population until the budget is spent."""
    from scipy.optimize import differential_evolution

    while True:
        objective.runs += 1
        differential_evolution(objective, [(0.0, 1.0)] * dim, maxiter=10**6, tol=0.0,
                               atol=1e-14, polish=False, seed=rng, updating="immediate",
                               x0=start if objective.runs == 1 else None,
                               callback=lambda *a, **k: objective.report())
