r"""The authors' released code (``sampler.py`` of dunzeng/K-Vib, not in the paper): where it
differs from the paper, as one result with two parts.

``KVibSampler.solver`` / ``OptimalSampler.optim_solver`` should return eq. (4)'s capped
probabilities; ``KVibSampler.sample`` should draw with Algorithm 2's
:math:`p\propto\sqrt{\omega+\gamma}` (capped). Instances carry the inputs the code is called
on: ``a`` (weights) and ``budget``; the paper's hypotheses on them (Lemma 2.2) apply.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, result
from flbounds.sampling import (
    optimal_isp_probabilities,
)
from flbounds.tolerances import EPS

from .conditions import budget_hypothesis, positive_weights
from .instances import random_weights
from .solver import released_code_solver

RELEASED_CODE = result(
    "kvib.released_code", ref="Released code (sampler.py)", kind="algorithm",
    title="the authors' sampler.py, where it differs from the paper",
    parts={"solver": "KVibSampler.solver and OptimalSampler.optim_solver return eq. (4)'s "
                     "probabilities (Lemma 2.2)",
           "sample": "KVibSampler.sample draws with Algorithm 2's p proportional to "
                     "sqrt(omega + gamma), capped (Lemma 5.1)"},
    hypotheses=(positive_weights, budget_hypothesis))


#: seed of the firing count of the solver defect (a deterministic count, the same at every
#: root seed; no gate is drawn from it)
FIRING_SEED = 0


def solver_firing(n_capped: int, *, seed: int = FIRING_SEED, solver=released_code_solver):
    """How often the released solver fires: random instances (:func:`random_weights`, N up to
    50, integer K uniform in [1, N]) drawn from ``seed`` until ``n_capped`` of them have a
    capped client in eq. (4)'s solution (some p_i = 1, some p_j < 1); among those,
    the count where ``solver`` returns some p_i > 1, the count where its sum is not K, and
    the largest p_i it returns. Instances with no capped client are counted apart (the
    defect cannot fire there: no entry reaches the cap)."""
    rng = np.random.default_rng(seed)
    capped = over_one = wrong_sum = drawn = 0
    largest = 0.0
    while capped < n_capped:
        a = random_weights(rng, 50)
        k = int(rng.integers(1, a.size + 1))
        drawn += 1
        exact = optimal_isp_probabilities(a, k)
        if not (exact.max() >= 1 - 1e-12 and exact.min() < 1 - 1e-12):
            continue
        capped += 1
        p = solver(a, k)
        over_one += bool(p.max() > 1 + 1e-12)
        wrong_sum += bool(abs(p.sum() - k) > 1e-9 * k)
        largest = max(largest, float(p.max()))
    return {"seed": seed, "instances_with_a_capped_client": capped,
            "instances_drawn": drawn, "fires_p_above_1": over_one,
            "fires_sum_not_K": wrong_sum, "largest_p_returned": largest}


@claim("kvib.code.solver_off_by_one", ref="official code sampler.py (KVibSampler.solver, "
       "OptimalSampler.optim_solver)", kind="code", expected="violated",
       result=RELEASED_CODE, parts=("solver",),
       statement="The released capped solver returns the Lemma 2.2 probabilities.",
       quick=dict(n_capped=1000), full=dict(n_capped=1000))
def code_solver_off_by_one(*, rng, n_capped):
    r"""The released solver gives the proportional value to l + 1 sorted entries instead of l.

    Smallest counterexample: a = (1, 3, 6), K = 2 gives (0.25, 0.75, 1.5) (sum 2.5, p_3 > 1)
    instead of (0.25, 0.75, 1) (excess 0.5 on p_3). Expected **violated** (a code defect;
    Lemma 2.2 itself holds, see ``kvib.lemma2_2.closed_form``). How often it fires
    (:func:`solver_firing`, seed :data:`FIRING_SEED`, so the count is the same at every root
    seed): of 1,000 random instances with a capped client, the number where the code returns
    some p_i > 1 and the largest p_i returned (in details; informational, no gate). It cannot
    fire without a capped client."""
    a0 = np.array([1.0, 3.0, 6.0])
    code, paper = released_code_solver(a0, 2), optimal_isp_probabilities(a0, 2)
    return Evidence(measured=code, theoretical=paper, relation="==", instance=dict(a=a0, budget=2),
                    tolerance=Tolerance.rounding(10 * EPS, "a few ulp on values <= 1.5"),
                    details={"instance": {"a": a0, "K": 2}, "code_output": code,
                             "code_sum": code.sum(), "correct": paper,
                             "excess": float(code.max() - 1.0),
                             "firing": solver_firing(n_capped)})


@claim("kvib.code.no_square_root", ref="official code sampler.py (KVibSampler.sample); Alg. 2",
       kind="code", expected="violated", result=RELEASED_CODE, parts=("sample",),
       statement="The released K-Vib sampler draws with p = argmin sum (omega+gamma)/p, i.e. "
                 "capped p proportional to sqrt(omega+gamma), as Algorithm 2 prints.",
       quick=dict(), full=dict())
def code_no_square_root(*, rng):
    r"""Algorithm 2 / Lemma 5.1 put :math:`p\propto\sqrt{\omega+\gamma}` (capped); the code calls
    its solver on :math:`\omega+\gamma` itself, i.e. :math:`p\propto\omega+\gamma`.

    Instance: omega + gamma = (1, 4, 9, 16), K = 2 (no capping in either variant). Paper:
    (0.2, 0.4, 0.6, 0.8); code form: (1, 4, 9, 16)*2/30. Expected **violated** (code differs
    from paper; the off-by-one is excluded here by using the correct solver for both).
    """
    w = np.array([1.0, 4.0, 9.0, 16.0])
    paper = optimal_isp_probabilities(np.sqrt(w), 2)
    code_form = optimal_isp_probabilities(w, 2)
    return Evidence(measured=code_form, theoretical=paper, relation="==",
                    instance=dict(a=np.sqrt(w), budget=2),
                    tolerance=Tolerance.rounding(10 * EPS, "a few ulp"),
                    details={"omega_plus_gamma": w, "paper_p": paper, "code_p": code_form,
                             "smallest_instance": {
                                 "omega_plus_gamma": [1.0, 4.0], "K": 1,
                                 "paper_p": optimal_isp_probabilities(np.array([1.0, 2.0]), 1),
                                 "code_p": optimal_isp_probabilities(np.array([1.0, 4.0]), 1),
                                 "why": "any two unequal weights differ (N = 1 has p = 1)"}})
