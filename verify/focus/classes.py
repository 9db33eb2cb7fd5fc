r"""One FOCUS round with clients in classes, and its exact expectation over Bernoulli
participation by per-class counts: the one-round attacks up to N = 16 (FOCUS).

Clients come in C classes: class c has :math:`n_c` identical clients (the same function
:math:`f_c`, the same participation probability :math:`p_c`, the same model and stored
gradient). The round's outcome is then invariant under permutations inside a class, so a
symmetric function of the next state (a sum over clients, the server model) depends on the
participation set only through the counts :math:`m_c` of participants per class, and

.. math::
    \mathbb E\,\phi(S)=\sum_{m_1=0}^{n_1}\cdots\sum_{m_C=0}^{n_C}\prod_c\binom{n_c}{m_c}
    p_c^{m_c}(1-p_c)^{n_c-m_c}\;\phi(S_m),

with :math:`S_m` any set with those counts (the first :math:`m_c` clients of each class):
:math:`\prod_c(n_c+1)` rounds instead of :math:`2^N` (625 instead of 65,536 at four classes
of four). The tests check it against the direct enumeration over the :math:`2^N` sets
(:func:`flbounds.participation.subset_distribution`) at N <= 4 to 1e-12.

The attack space (:data:`CLASS_SPACE`) is four classes of 1 to 4 clients (N = 4 .. 16), each
with its own Hessian (spectrum in [1, 2]), linear term, probability (down to 0.01) and model
offset; ``reading`` picks the definition of q: 0 is the library's
:math:`q_i=\mathbb E[1_i/|S|;\,S\ne\emptyset]` (an empty round counts 0), 1 the same
conditioned on a non-empty round (divided by :math:`P(S\ne\emptyset)`), the larger q and
so the larger step bounds.
"""

from __future__ import annotations

from math import comb

import numpy as np

from flbounds.falsify import SPD, Box, Integers
from flbounds.participation import Bernoulli
from flbounds.problems import Quadratic

from .instances import consistent_state, focus_round, focus_round_outcomes, memo_last

N_CLASSES, D_CLASS, MAX_SIZE = 4, 3, 4
CLASS_SPACE = {**{f"A{c}": SPD(D_CLASS, 1.0, 2.0, extreme=True) for c in range(N_CLASSES)},
               "b": Box(-3, 3, shape=(N_CLASSES, D_CLASS)),
               "p": Box(0.01, 1.0, shape=N_CLASSES, log=True),
               **{f"size{c}": Integers(1, MAX_SIZE) for c in range(N_CLASSES)},
               "reading": Integers(0, 1),
               "tau": Integers(1, 10), "step_frac": Box(1e-3, 1.0, log=True),
               "offset": Box(-1, 1, shape=D_CLASS), "offset_scale": Box(1e-3, 10, log=True),
               "spread": Box(-1, 1, shape=(N_CLASSES, D_CLASS)),
               "spread_scale": Box(1e-3, 10, log=True)}
EXACT_CLASSES = ("rounding: exact sum over the per-class counts (<= 625 rounds) with binomial "
                 "weights, 1e-12 relative (as the claims)")


def class_sizes(inst) -> np.ndarray:
    """The class sizes of a point (``size0`` .. ``size3``, each 1 .. MAX_SIZE)."""
    return np.array([int(inst[f"size{c}"]) for c in range(N_CLASSES)])


def class_patterns(p_class, sizes):
    """One representative participation set per vector of per-class counts, and its
    probability :math:`\\prod_c\\binom{n_c}{m_c}p_c^{m_c}(1-p_c)^{n_c-m_c}`.

    The count vectors run in ``itertools.product`` order (the last class fastest); each
    probability is the product of the per-class binomial weights taken in class order.

    Returns
    -------
    masks : numpy.ndarray of bool, shape (prod(n_c + 1), N)
    probs : numpy.ndarray, shape (prod(n_c + 1),)
    """
    sizes = [int(s) for s in sizes]
    counts = np.indices([s + 1 for s in sizes]).reshape(len(sizes), -1).T
    rank = np.concatenate([np.arange(s) for s in sizes])
    masks = rank < np.repeat(counts, sizes, axis=1)
    probs = np.ones(counts.shape[0])
    for c, (n, p) in enumerate(zip(sizes, p_class, strict=True)):
        pmf = np.array([comb(n, m) * float(p) ** m * (1.0 - float(p)) ** (n - m)
                        for m in range(n + 1)])
        probs = probs * pmf[counts[:, c]]
    return masks, probs


def expand(values, sizes) -> np.ndarray:
    """Each class's row repeated for its clients (classes stacked in order)."""
    return np.repeat(np.asarray(values), np.asarray(sizes, dtype=int), axis=0)


def aggregation_q(p_full, reading) -> np.ndarray:
    """q of Bernoulli(p_full) in the chosen reading (0: empty rounds count 0; 1: conditioned on
    a non-empty round)."""
    proc = Bernoulli(p_full)
    q = proc.aggregation_weights()
    return q if reading == 0 else q / (1.0 - proc.empty_probability())


@memo_last
def class_round(inst, step_rule):
    """Problem, patterns, q, step and a consistent round state of one point of
    :data:`CLASS_SPACE`; ``step_rule(problem, tau, q_min)`` is the result's step bound
    (``step_frac`` multiplies it). Remembered for the last points (:func:`memo_last`): the
    callers read it and never modify it."""
    sizes = class_sizes(inst)
    A = expand(np.stack([inst[f"A{c}"] for c in range(N_CLASSES)]), sizes)
    problem = Quadratic(A, expand(inst["b"], sizes))
    p_full = expand(inst["p"], sizes)
    q = aggregation_q(p_full, int(inst["reading"]))
    step = inst["step_frac"] * step_rule(problem, inst["tau"], float(q.min()))
    x_prev = problem.x_star + inst["offset_scale"] * inst["offset"]
    models = x_prev + inst["spread_scale"] * expand(inst["spread"], sizes)
    state = consistent_state(problem, models, x_prev, step)
    masks, probs = class_patterns(inst["p"], sizes)
    return problem, masks, probs, q, step, state


def expect(problem, state, masks, probs, step, tau, fns):
    """Exact expectations of the functions ``fns`` of the next state over the patterns."""
    out = np.zeros(len(fns))
    for mask, prob in zip(masks, probs, strict=True):
        if prob > 0:
            nxt = focus_round(problem, state, mask, step, tau)
            out += prob * np.array([fn(nxt) for fn in fns])
    return out


def expect_batched(problem, state, masks, probs, step, tau, fns):
    """:func:`expect` from one library round (:func:`~.instances.focus_round_outcomes`):
    each of ``fns`` maps the :class:`~.instances.RoundOutcomes` of every pattern to its
    values, shape (M,); equal to :func:`expect` up to the order of the sums (1e-15
    relative)."""
    live = np.asarray(probs) > 0
    outcomes = focus_round_outcomes(problem, state, np.asarray(masks)[live], step, tau)
    weights = np.asarray(probs)[live]
    return np.array([float(weights @ fn(outcomes)) for fn in fns])


def fixed_classes(p=(0.3, 0.5, 0.7, 0.9), tau=3, sizes=(1, 1, 1, 1)):
    """A point of :data:`CLASS_SPACE`: diagonal Hessians, spread-out linear terms, the given
    probabilities, tau and class sizes, the step at its bound."""
    return {**{f"A{c}": np.diag([1.0, 1.5, 2.0]) for c in range(N_CLASSES)},
            "b": np.arange(N_CLASSES * D_CLASS, dtype=float).reshape(N_CLASSES, D_CLASS) / 6 - 1,
            "p": np.asarray(p, dtype=float), **{f"size{c}": int(n) for c, n in enumerate(sizes)},
            "reading": 0, "tau": tau, "step_frac": 1.0, "offset": np.ones(D_CLASS) / 2,
            "offset_scale": 1.0, "spread": np.eye(N_CLASSES, D_CLASS), "spread_scale": 1.0}
