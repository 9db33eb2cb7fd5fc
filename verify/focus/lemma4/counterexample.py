r"""Lemma 4 of FOCUS fails for rarely participating clients: a counterexample found by the
adversarial search (``flbounds falsify focus.lemma4.consensus``) and shrunk by hand.

The attack on Lemma 4 (4 clients, d = 3, SPD Hessians with spectrum [1, 2], Bernoulli p in
[0.05, 1], tau in {2, 3}) exceeded the right side of eq. (97) after 20,000 evaluations
(ratio 1.0019, at p = 0.05 for every client). Shrinking kept the violation with isotropic
Hessians and rounded numbers, and then with identical one-dimensional clients. The proof
step that loses it is (100): it bounds :math:`\|\mathbb 1\bar y\|^2`, the squared norm of a
vector stacked over the server and N clients, by a bound on :math:`\|\bar y\|^2`, dropping a
factor :math:`N + 1`; the shortfall therefore grows with N.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.participation import Bernoulli, subset_distribution
from flbounds.problems import Quadratic

from ..instances import consistent_state, focus_round, lemma4_step
from ..one_round import ROUNDING, _expect_all
from . import LEMMA4, lemma4_rhs


def lemma4_parts(n_clients: int, p: float, empty_rounds: int, local_steps: int = 1, *,
                 by_count: bool = False):
    r"""The pieces of eq. (97) for identical clients :math:`f_i(x) = x^2/2` (d = 1,
    L = mu = 1) at Lemma 4's largest step, from the state FOCUS reaches after one round in
    which every client pulls x = 1 and then ``empty_rounds`` rounds without participants:
    client models and stored gradients at 1, tracker y = N, server model before its step
    :math:`1 - N k\eta`. Returns (E C', C, E||grad F(x')||^2, q_min, step) with C the
    consensus error of the state and C' that after one more round.

    ``by_count``: the same expectations from one round per number of participants
    (:func:`_expect_by_count`; N + 1 rounds instead of 2^N, equal up to rounding)."""
    problem = Quadratic(np.ones((n_clients, 1, 1)), np.zeros((n_clients, 1)))
    process = Bernoulli(np.full(n_clients, p))
    masks, probs = subset_distribution(process)
    q_min = float(process.aggregation_weights().min())
    step = lemma4_step(problem.L, n_clients, local_steps, q_min)
    x_prev = np.array([1.0 - n_clients * empty_rounds * step])
    state = consistent_state(problem, np.ones((n_clients, 1)), x_prev, step)
    consensus = lambda s: s.consensus_error()                           # noqa: E731
    gradient = lambda s: float(np.sum(problem.gradient(s.x) ** 2))     # noqa: E731
    if by_count:
        lhs, grad = _expect_by_count(problem, state, masks, probs, step, local_steps,
                                     (consensus, gradient))
    else:
        lhs, grad = _expect_all(problem, state, masks, probs, step, local_steps,
                                (consensus, gradient))
    return lhs, state.consensus_error(), grad, q_min, step


def _expect_by_count(problem, state, masks, probs, step, local_steps, fns):
    """The expectations of ``fns`` over the sets, as :func:`~verify.focus.one_round._expect`
    computes each, for identical clients in identical states: a round's outcome then depends
    on its set only through the number of participants, so one round per count (its first
    set) stands for all its sets; the sum runs over the sets in the same order. Equal to the
    enumeration up to rounding (the per-set values agree to the last bit or two: the
    clients' sums run in another order)."""
    counts = np.asarray(masks, dtype=bool).sum(axis=1)
    values: dict[int, tuple] = {}
    totals = [0] * len(fns)
    for mask, count, pr in zip(masks, counts, probs, strict=True):
        if not pr > 0:
            continue
        if count not in values:
            after = focus_round(problem, state, mask, step, local_steps)
            values[count] = tuple(fn(after) for fn in fns)
        totals = [t + pr * v for t, v in zip(totals, values[count], strict=True)]
    return tuple(totals)


def lemma4_instance(n_clients: int, p: float, local_steps: int = 1) -> dict:
    """The values Lemma 4's hypotheses read, for the family of :func:`lemma4_parts`."""
    problem = Quadratic(np.ones((n_clients, 1, 1)), np.zeros((n_clients, 1)))
    q = Bernoulli(np.full(n_clients, p)).aggregation_weights()
    return dict(q=q, problem=problem, mu=1.0, L=1.0, tau=local_steps,
                step=lemma4_step(1.0, n_clients, local_steps, float(q.min())))


def lemma4_sides(n_clients: int, p: float, empty_rounds: int, local_steps: int = 1, *,
                 by_count: bool = False):
    """Both sides of eq. (97) as printed on the family of :func:`lemma4_parts` (``by_count``
    as there). Returns (LHS, RHS, q_min, step)."""
    lhs, consensus, grad, q_min, step = lemma4_parts(n_clients, p, empty_rounds, local_steps,
                                                     by_count=by_count)
    rhs = lemma4_rhs(q_min=q_min, n=n_clients, step=step, consensus=consensus, grad=grad,
                     constant=16 / (3 * q_min))
    return lhs, rhs, q_min, step


@claim("focus.lemma4.rare_participation", ref="Lemma 4, eq. (97); proof step (100)",
       kind="statement", expected="violated", result=LEMMA4, parts=("rate",),
       statement="Lemma 4 for every Bernoulli participation: with eta <= min{q^{3/2}/(8L sqrt N), "
                 "q^{3/2}/(8L(tau-1))}, E||1 x_{r+1} - X_{(r+1)tau}||_F^2 <= (1 - q_min/3)"
                 "||1 x_r - X_{r tau}||_F^2 + (16 eta^2 N^2/(3 q_min)) E||grad F(x_{r+1})||^2.",
       quick=dict(n_clients=4, p=0.02, empty_rounds=80),
       full=dict(n_clients=4, p=0.02, empty_rounds=80))
def rare_participation(*, rng, n_clients, p, empty_rounds):
    r"""Minimal witness (fewest clients; the attack needs N >= 4): N = 4 identical clients
    :math:`f_i(x) = x^2/2` in d = 1 (L-smooth and strongly convex with L = mu = 1, so
    Assumption 2 holds), Bernoulli participation p_i = 0.02 (Assumption 1, Case 2),
    tau = 1, eta = Lemma 4's bound :math:`q_{\min}^{3/2}/(8L\sqrt N)` exactly. The state is
    reachable: a round where every client participates at x = 1, then 80 empty rounds (each
    has probability 0.98^4 > 0). Exact conditional expectation over the 2^N participation
    sets (as ``focus.lemma4.consensus``): the left side exceeds the right side by 0.15%, far
    beyond rounding (tolerance 1e-12 relative, as the lemma checks). Details: the same
    construction with more clients (N = 6, 8 at p = 0.05, 0.1), where the excess grows
    (about 1.7% and 2.8%), consistent with the factor N + 1 lost in (100). The claim
    ``focus.lemma4.consensus`` (p = 0.3..0.9) still holds: the failure needs rare
    participation, where (1 - q_min/3) is close to 1. Expected **violated**."""
    lhs, rhs, q_min, step = lemma4_sides(n_clients, p, empty_rounds)
    larger = {f"N={n}": lemma4_sides(n, pn, k)[0] / lemma4_sides(n, pn, k)[1]
              for n, pn, k in ((6, 0.05, 20), (8, 0.1, 10))}
    return Evidence(measured=lhs, theoretical=rhs, relation="<=",
                    instance=lemma4_instance(n_clients, p),
                    tolerance=Tolerance.rounding(ROUNDING * abs(rhs),
                                                 "1e-12 x the bound (exact enumeration)"),
                    details={"ratio": lhs / rhs, "q_min": q_min, "step": step,
                             "instance": {"N": n_clients, "p": p, "tau": 1,
                                          "f_i": "x^2/2", "x_pulled": 1.0,
                                          "empty_rounds": empty_rounds},
                             "ratio_larger_N": larger})
